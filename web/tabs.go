package web

import "github.com/bunting-flags/bunting/views"

// Main navigation entries of the flag, segment and history pages.
const (
	navFlags    = "flags"
	navSegments = "segments"
	navAuditLog = "audit-log"
)

// Tabs of a flag's and a segment's page.
const (
	tabTargeting  = "targeting"
	tabVariations = "variations"
	tabUsage      = "usage"
	tabSettings   = "settings"
	tabHistory    = "history"
	tabTriggers   = "triggers"
)

// settingsTexts says which of a flag's or a segment's texts the person may
// change and which forms were just posted, for settingsTab.
type settingsTexts struct {
	name, description, tags                   string
	mayName, mayDescription, mayTags          bool
	postedName, postedDescription, postedTags *views.Form
}

// settingsTab fills a flag's or a segment's settings tab: its name,
// description and tags, each a form (the one just posted, or a fresh one)
// when the person may change it and a fact otherwise, and the archive,
// restore and delete links the person may follow. kind names the forms
// ("flag" gives "flag-name"); fresh makes a form.
func settingsTab(s views.SettingsTab, kind, href string, t settingsTexts, archive, restore, remove bool,
	fresh func(id, action string, values map[string]string) *views.Form) views.SettingsTab {
	form := func(may bool, posted *views.Form, field, value string) *views.Form {
		if !may {
			return nil
		}
		return postedOr(posted, func() *views.Form {
			return fresh(kind+"-"+field, href+"/"+field, map[string]string{field: value})
		})
	}
	s.Name = form(t.mayName, t.postedName, "name", t.name)
	s.Description = form(t.mayDescription, t.postedDescription, "description", t.description)
	s.Tags = form(t.mayTags, t.postedTags, "tags", t.tags)
	if s.Name == nil {
		s.Facts = append([]views.Fact{{Label: "Name", Value: t.name}}, s.Facts...)
	}
	if s.Description == nil {
		s.Facts = append(s.Facts, views.Fact{Label: "Description", Value: t.description})
	}
	if s.Tags == nil {
		s.Facts = append(s.Facts, views.Fact{Label: "Tags", Value: t.tags})
	}
	if archive {
		s.ArchiveHref = href + "/archive"
	}
	if restore {
		s.RestoreHref = href + "/restore"
	}
	if remove {
		s.DeleteHref = href + "/delete"
	}
	return s
}
