package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// Flags and segments: what their pages share. Each has tabs, a settings tab
// with its name, description and tags, a history, forms that post a change
// with a comment, and archiving, restoring and deleting behind a
// confirmation.

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

// tabHref is the address of a tab of the page at href; targeting is the
// page itself.
func tabHref(href, tab string) string {
	if tab == tabTargeting {
		return href
	}
	return href + "/" + tab
}

// subjectChange ends a change of a flag or a segment that ended with err:
// success shows the tab at href again with message; failure the posted form
// again (made by form), with the problems of its fields, in their status.
// page shows the tab, with posted nil after success.
func (p *pages) subjectChange(c echo.Context, href, message string, err error, form func(f *views.Form),
	page func(status int, posted *views.Form) error, fields ...string) error {
	if err == nil {
		return p.changed(c, href, message, func() error { return page(http.StatusOK, nil) })
	}
	f := p.form(c, "", "", nil)
	form(&f)
	status, err := changeProblems(err, &f, fields...)
	if err != nil {
		return err
	}
	return page(status, &f)
}

// textField is one of a flag's or a segment's texts on its settings tab,
// each changed by its own form: its field, and what is said once it is saved.
type textField struct{ name, saved string }

var (
	textName        = textField{"name", "Name saved."}
	textDescription = textField{"description", "Description saved."}
	textTags        = textField{"tags", "Tags saved."}
)

// postedText reads a text's form: the text as typed (the form always has
// the field; an empty description clears it) and the change's comment and
// revision.
func postedText(c echo.Context, t textField) (string, flagstore.Change, error) {
	ch, err := postedInput[changeForm](c)
	if err != nil {
		return "", ch, err
	}
	return c.FormValue(t.name), ch, nil
}

// postedTexts are a flag's or a segment's text forms just posted, to show
// them again with what was typed and their problems; nil ones start fresh.
type postedTexts struct{ name, description, tags *views.Form }

// again keeps text t's form f, posted again as typed (value) under kind's
// form names ("flag" gives "flag-name"), for the subject at href.
func (pt *postedTexts) again(t textField, f *views.Form, kind, href, value string, ch flagstore.Change) {
	f.ID, f.Action = kind+"-"+t.name, href+"/"+t.name
	f.Values = postedValues(ch, map[string]string{t.name: value})
	switch t {
	case textName:
		pt.name = f
	case textDescription:
		pt.description = f
	case textTags:
		pt.tags = f
	}
}

// settingsTexts says which of a flag's or a segment's texts the person may
// change and which forms were just posted, for settingsTab.
type settingsTexts struct {
	name, description, tags          string
	mayName, mayDescription, mayTags bool
	posted                           postedTexts
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
	s.Name = form(t.mayName, t.posted.name, "name", t.name)
	s.Description = form(t.mayDescription, t.posted.description, "description", t.description)
	s.Tags = form(t.mayTags, t.posted.tags, "tags", t.tags)
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

// lifecycle is archiving, restoring or deleting a flag or a segment.
type lifecycle struct {
	verb, button string
	danger       bool
	// action is what the person must hold to be offered the button.
	action access.Action
	// done ends the message after the change: "archived".
	done string
}

// path is where the lifecycle's confirmation posts, below the page at href.
func (l lifecycle) path(href string) string { return href + "/" + strings.ToLower(l.verb) }

// confirmation is a lifecycle's confirmation page of one flag or segment.
type confirmation struct {
	lifecycle
	nav  string
	page views.ChangeConfirm
	// href is the subject's page; values those of a fresh form.
	href   string
	values map[string]string
	// permitted tells whether the person holds the lifecycle's action.
	permitted bool
}

// confirm renders a confirmation page: posted is the form just posted and
// refused, in status; nil for a fresh one.
func (p *pages) confirm(c echo.Context, w workEnv, cf confirmation, status int, posted *views.Form) error {
	vm := cf.page
	vm.Button, vm.Danger, vm.CancelHref, vm.CommentRequired = cf.button, cf.danger, cf.href+"/settings", w.requireComment
	if posted != nil {
		vm.Form = *posted
	} else {
		vm.Form = p.form(c, "confirm", cf.path(cf.href), cf.values)
	}
	if !cf.permitted {
		vm.Form.Action = ""
	}
	shell, err := p.shell(c, vm.Heading, cf.nav)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.ChangeConfirmPage(vm))
}

// changeLifecycle archives, restores or deletes the flag or segment at
// href with do, as confirmed: success goes to the page at to with message;
// failure shows the confirmation again (again) with the problem.
func (p *pages) changeLifecycle(c echo.Context, l lifecycle, href, message string, to func() string,
	do func(ch flagstore.Change) error, again func(status int, posted *views.Form) error) error {
	ch, err := postedInput[changeForm](c)
	if err != nil {
		return err
	}
	err = do(ch)
	if err == nil {
		p.keepFlash(c, message)
		return c.Redirect(http.StatusSeeOther, to())
	}
	form := p.form(c, "confirm", l.path(href), postedValues(ch, map[string]string{}))
	status, err := changeProblems(err, &form)
	if err != nil {
		return err
	}
	return again(status, &form)
}

// subjectHeading is a confirmation's question: "Archive the flag “Checkout”?".
func subjectHeading(l lifecycle, noun, name string) string {
	return fmt.Sprintf("%s the %s “%s”?", l.verb, noun, name)
}
