package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// maxServingRules is how many rules a row of the list shows; the flag's
// page shows them all.
const maxServingRules = 3

// flagFilterOf is the filter form showing a list's query; tags are every
// tag of the environment's flags.
func flagFilterOf(fq flagQuery, tags []string) views.FlagFilter {
	f := views.FlagFilter{Action: "/flags", Query: fq.q, Archived: fq.archived,
		ActiveHref: "/flags", ArchivedHref: "/flags?archived=1", ReadyHref: "/flags?stage=" + flagstore.ReadyToRemoveFilter,
		Ready: fq.stage == flagstore.ReadyToRemoveFilter, Stages: stageOptions(fq.stage),
		Statuses: []views.Option{{Value: "", Label: "On or off", Selected: fq.status == ""},
			{Value: "on", Label: "On", Selected: fq.status == "on"}, {Value: "off", Label: "Off", Selected: fq.status == "off"}}}
	for _, t := range tags {
		f.Tags = append(f.Tags, views.Option{Value: t, Label: t, Selected: slices.Contains(fq.tags, t)})
	}
	f.TagsChosen = len(fq.tags)
	f.TagsSummary = strings.Join(fq.tags, ", ")
	for _, o := range flagSorts {
		f.Sorts = append(f.Sorts, views.Option{Value: o.value, Label: o.label, Selected: o.value == fq.sort})
	}
	for _, n := range flagPageSizes {
		f.Sizes = append(f.Sizes, views.Option{Value: strconv.Itoa(n), Label: strconv.Itoa(n), Selected: n == fq.size})
	}
	return f
}

// stageNote says what a stage filter keeps.
func stageNote(stage string) string {
	switch {
	case stage == "":
		return ""
	case stage == flagstore.ReadyToRemoveFilter:
		return "Flags whose code can go: launched (one variation to everyone, unchanged, for 7 days), " +
			"unused (no evaluation for 30 days), or archived and not evaluated since."
	}
	w := stageWords[flagstore.Stage(stage)]
	return w.label + ": " + strings.ToLower(w.means[:1]) + w.means[1:]
}

// tagsNote says which tags narrow a list: all of them must be on a flag.
func tagsNote(tags []string) string {
	switch len(tags) {
	case 0:
		return ""
	case 1:
		return "Flags tagged “" + tags[0] + "”."
	}
	return "Flags tagged with all of: " + strings.Join(tags, ", ") + "."
}

// flagPager moves between the list's pages, with jumps to its first and last.
func flagPager(total int64, fq flagQuery) views.Pager {
	pg := pager(total, fq.page, fq.size, "flag", "flags", fq.href)
	last := lastPage(total, fq.size)
	if fq.page > 2 {
		pg.First = fq.href(1)
	}
	if fq.page < last-1 {
		pg.Last = fq.href(last)
	}
	return pg
}

// servingLines says what a flag serves when on: to its individual targets,
// by each rule and by default, with the shares of a rollout.
func servingLines(s flagstore.Serving) []views.ServingLine {
	var lines []views.ServingLine
	if len(s.Targets) > 0 {
		var values []string
		for _, v := range s.Targets {
			if !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		lines = append(lines, views.ServingLine{Label: "Targets", Text: strings.Join(values, " · ")})
	}
	shown := 0
	for i, r := range s.Rules {
		if len(r.Shares) == 0 {
			continue
		}
		if shown == maxServingRules {
			more := len(s.Rules) - i
			lines = append(lines, views.ServingLine{Text: fmt.Sprintf("and %d more %s", more, plural(more, "rule", "rules"))})
			break
		}
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("Rule %d", i+1)
		}
		lines = append(lines, views.ServingLine{Label: name, Text: sharesText(r.Shares)})
		shown++
	}
	if len(s.Default) > 0 {
		label := "Default"
		if len(lines) == 0 {
			label = ""
		}
		lines = append(lines, views.ServingLine{Label: label, Text: sharesText(s.Default)})
	}
	return lines
}

// sharesText is a rollout as "30% true · 70% false", or the one value
// served to everyone.
func sharesText(shares []flagstore.Share) string {
	if len(shares) == 1 && shares[0].Percent == 100 {
		return shares[0].Value
	}
	parts := make([]string, len(shares))
	for i, sh := range shares {
		parts[i] = strconv.FormatFloat(sh.Percent, 'f', -1, 64) + "% " + sh.Value
	}
	return strings.Join(parts, " · ")
}
