package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/views"
)

// History entries keep a changed thing whole, before and after, as JSON. The
// pages show how it changed member by member: a plain value as "old → new",
// a structured one (rules, variations…) as a line diff of its indented JSON.
// Everything is text for the templates, which escape it.

// fieldLabels name the members of flags and segments for people, in the
// order they are shown; other members follow by name.
var fieldLabels = []struct{ key, label string }{
	{"name", "Name"}, {"key", "Key"}, {"description", "Description"}, {"isEnabled", views.PartOnOff.Field},
	{"variationType", "Variation type"}, {"variations", views.PartVariations.Field}, {"disabledVariationId", views.PartOff.Field},
	{"targetUsers", views.PartTargets.Field}, {"rules", views.PartRules.Field}, {"fallthrough", views.PartDefault.Field},
	{"exptIncludeAllTargets", "Experiments include all targets"}, {"type", "Type"}, {"scopes", "Scopes"},
	{"included", "Included users"}, {"excluded", "Excluded users"}, {"tags", "Tags"}, {"isArchived", "Archived"},
}

// fieldChanges compares two snapshots (either may be null) member by member.
func fieldChanges(previous, current json.RawMessage) []views.FieldChange {
	before, after := members(previous), members(current)
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	keys = slices.DeleteFunc(keys, describe.Bookkeeping)
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := labelIndex(a), labelIndex(b)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	var out []views.FieldChange
	for _, k := range keys {
		old, hadOld := before[k]
		cur, hasCur := after[k]
		if hadOld && hasCur && bytes.Equal(describe.Compact(old), describe.Compact(cur)) {
			continue
		}
		c := views.FieldChange{Field: fieldLabel(k)}
		if k == "disabledVariationId" {
			old, cur = variationName(before, old), variationName(after, cur)
		}
		if scalar(old) && scalar(cur) {
			c.Old, c.New = scalarText(k, old, hadOld), scalarText(k, cur, hasCur)
		} else {
			oldLines, curLines := indented(old), indented(cur)
			if k != "variations" {
				oldLines, curLines = nameVariations(oldLines, before), nameVariations(curLines, after)
			}
			c.Lines = lineDiff(oldLines, curLines)
		}
		out = append(out, c)
	}
	return out
}

func members(raw json.RawMessage) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m) // null and non-objects have no members
	}
	return m
}

func labelIndex(key string) int {
	if i := slices.IndexFunc(fieldLabels, func(l struct{ key, label string }) bool { return l.key == key }); i >= 0 {
		return i
	}
	return len(fieldLabels)
}

func fieldLabel(key string) string {
	if i := labelIndex(key); i < len(fieldLabels) {
		return fieldLabels[i].label
	}
	return key
}

// variationName shows an off variation by its name and value rather than its id.
func variationName(snapshot map[string]json.RawMessage, id json.RawMessage) json.RawMessage {
	var want string
	var vars []struct{ ID, Name, Value string }
	if json.Unmarshal(id, &want) != nil || json.Unmarshal(snapshot["variations"], &vars) != nil {
		return id
	}
	for _, v := range vars {
		if v.ID == want {
			b, _ := json.Marshal(fmt.Sprintf("%s (%s)", v.Name, v.Value))
			return b
		}
	}
	return id
}

// nameVariations notes, after each line that names a variation of the flag
// by id (targets, rules, the default rule), which variation that is.
func nameVariations(lines []string, snapshot map[string]json.RawMessage) []string {
	var vars []struct{ ID, Name string }
	if json.Unmarshal(snapshot["variations"], &vars) != nil || len(vars) == 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		for _, v := range vars {
			if v.ID != "" && strings.Contains(l, `"`+v.ID+`"`) {
				out[i] = l + "  ← " + v.Name
				break
			}
		}
	}
	return out
}

// scalar tells a plain value (or nothing) from an object or an array.
func scalar(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || (t[0] != '{' && t[0] != '[')
}

// scalarText shows a plain value of member key: a string as itself, a flag's
// state as On or Off, other booleans as yes or no, null as "—". An absent
// member (before a creation, after a deletion) shows nothing.
func scalarText(key string, raw json.RawMessage, present bool) string {
	var v any
	if !present {
		return ""
	}
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return "—"
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return "(empty)"
		}
		return x
	case bool:
		if key == "isEnabled" {
			return onOffWord(x)
		}
		if x {
			return "yes"
		}
		return "no"
	}
	return string(describe.Compact(raw))
}

// indented is a value as indented JSON lines; nothing is no lines.
func indented(raw json.RawMessage) []string {
	if len(bytes.TrimSpace(raw)) == 0 || string(describe.Compact(raw)) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return []string{string(raw)}
	}
	return strings.Split(buf.String(), "\n")
}

// Line diffs are the shortest there are (Myers' algorithm takes time in
// proportion to the lines times the differences) while the part that
// changed is at most exactDiffCells in lines before times lines after
// (common first and last lines left out). A larger one is
// diffed within diffTimeout: the library then splits it around long common
// runs first, and past the deadline shows what is left as removed, then
// added, rather than look further.
const (
	exactDiffCells = 4_000_000
	diffTimeout    = 200 * time.Millisecond
)

// diffKinds names the diff library's operations as the pages show them.
var diffKinds = map[diffmatchpatch.Operation]string{
	diffmatchpatch.DiffEqual: "same", diffmatchpatch.DiffDelete: "removed", diffmatchpatch.DiffInsert: "added",
}

// lineDiff is a line diff by Myers' algorithm (diffmatchpatch, each line
// taken as one symbol), removals before additions as diffs read; runs of
// more than six unchanged lines keep two on each side and skip the rest.
// Where several diffs are equally short, which one shows is the library's
// choice.
func lineDiff(a, b []string) []views.DiffLine {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline, and no shortcut that may make a diff longer
	if changedA, changedB := changedMiddle(a, b); changedA*changedB > exactDiffCells {
		dmp.DiffTimeout = diffTimeout
	}
	symbolsA, symbolsB, lines := dmp.DiffLinesToRunes(textOf(a), textOf(b))
	var out []views.DiffLine
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(symbolsA, symbolsB, false), lines) {
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				out = append(out, views.DiffLine{Kind: diffKinds[d.Type], Text: strings.TrimSuffix(l, "\n")})
			}
		}
	}
	return skipUnchanged(out)
}

// changedMiddle counts the lines of a and of b between their common first
// and last lines, which the diff does not need to look at.
func changedMiddle(a, b []string) (int, int) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return len(a) - pre - suf, len(b) - pre - suf
}

// textOf joins lines, each ending in a newline, as the diff library splits them.
func textOf(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func skipUnchanged(lines []views.DiffLine) []views.DiffLine {
	const context = 2
	var out []views.DiffLine
	for i := 0; i < len(lines); {
		if lines[i].Kind != "same" {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].Kind == "same" {
			j++
		}
		keepHead, keepTail := context, context
		if i == 0 {
			keepHead = 0
		}
		if j == len(lines) {
			keepTail = 0
		}
		if j-i <= keepHead+keepTail+2 {
			out = append(out, lines[i:j]...)
		} else {
			out = append(out, lines[i:i+keepHead]...)
			out = append(out, views.DiffLine{Kind: "skip", Text: fmt.Sprintf("… %d unchanged lines", j-i-keepHead-keepTail)})
			out = append(out, lines[j-keepTail:j]...)
		}
		i = j
	}
	return out
}
