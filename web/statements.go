package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/views"
)

// The statement editor posts every statement as fields named
// st-{index}-… (see views.StatementEditorView) and what the person did as
// op. Editing happens on the server, so it works without script and the
// rules stay in one place: every op but "save" answers the editor again.

// draft is one statement in the editor, with the index its fields were
// posted under and its pattern helper's choices.
type draft struct {
	st                 access.Statement
	index, scope, tags string
}

// resourceTypes are the statement types the editor offers, most used first.
var resourceTypes = []struct{ value, label string }{
	{access.TypeFlag, "Feature flag"},
	{access.TypeSegment, "Segment"},
	{access.TypeEnv, "Environment"},
	{access.TypeProject, "Project"},
	{access.TypeAccessToken, "Access token"},
	{access.TypeRelayProxy, "Relay proxy"},
	{access.TypeIAM, "IAM (members, groups, policies)"},
	{access.TypeOrganization, "Organization"},
	{access.TypeWorkspace, "Workspace"},
	{access.TypeAll, "Everything (*)"},
}

// drafts turns stored statements into the editor's drafts.
func drafts(sts []access.Statement) []draft {
	out := make([]draft, len(sts))
	for i, st := range sts {
		out[i] = draft{st: st}
	}
	return out
}

// postedDrafts reads the statements the editor posted, in their order.
// Every field belongs to one statement, named once, and a policy holds at
// most access.MaxStatements of at most access.MaxActions actions each: a
// form naming more, or one statement twice (whose fields every copy would
// read again), is refused before anything is built of it, so the work is
// bounded by what a policy may hold, not by the fields posted.
func postedDrafts(c echo.Context) ([]draft, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, err
	}
	indexes := form["st"]
	if len(indexes) > access.MaxStatements {
		return nil, core.Invalid("statements_is_invalid")
	}
	seen := make(map[string]bool, len(indexes))
	out := make([]draft, 0, len(indexes))
	for _, i := range indexes {
		f := "st-" + i + "-"
		if seen[i] || len(form[f+"actions"]) > access.MaxActions {
			return nil, core.Invalid("statements_is_invalid")
		}
		seen[i] = true
		d := draft{st: access.Statement{ID: form.Get(f + "id"), ResourceType: form.Get(f + "type"), Effect: form.Get(f + "effect"),
			Actions: append([]string{}, form[f+"actions"]...), Resources: []string{}},
			index: i, scope: form.Get(f + "scope"), tags: form.Get(f + "tags")}
		for _, r := range form[f+"resources"] {
			if r = strings.TrimSpace(r); r != "" {
				d.st.Resources = append(d.st.Resources, r)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// edit applies op, which names statements by their posted index, to the
// drafts, and reports whether the person is still editing: any op but
// "save" or none. "preset" adds the statements of the preset chosen.
func edit(ds []draft, op string, preset presetChoice) ([]draft, bool) {
	if op == "save" || op == "" {
		return ds, false
	}
	at := func(index string) int { return slices.IndexFunc(ds, func(d draft) bool { return d.index == index }) }
	switch {
	case op == "preset":
		for _, st := range presetStatements(preset) {
			ds = append(ds, draft{st: st})
		}
	case op == "add":
		ds = append(ds, draft{st: access.Statement{ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{}, Resources: []string{}}})
	case strings.HasPrefix(op, "remove-"):
		if i := at(strings.TrimPrefix(op, "remove-")); i >= 0 {
			ds = slices.Delete(ds, i, i+1)
		}
	case strings.HasPrefix(op, "resource-"):
		if i := at(strings.TrimPrefix(op, "resource-")); i >= 0 {
			if r := pattern(ds[i].st.ResourceType, ds[i].scope, ds[i].tags); r != "" && !slices.Contains(ds[i].st.Resources, r) {
				ds[i].st.Resources = append(ds[i].st.Resources, r)
				ds[i].tags = ""
			}
		}
	case strings.HasPrefix(op, "drop-"):
		index, j, _ := strings.Cut(strings.TrimPrefix(op, "drop-"), "-")
		n, err := strconv.Atoi(j)
		if i := at(index); i >= 0 && err == nil && n >= 0 && n < len(ds[i].st.Resources) {
			ds[i].st.Resources = slices.Delete(ds[i].st.Resources, n, n+1)
		}
	}
	// A statement whose type changed keeps only the actions of its new type.
	for i := range ds {
		ds[i].st.Actions = slices.DeleteFunc(ds[i].st.Actions, func(a string) bool { return !actionOf(ds[i].st.ResourceType, a) })
	}
	return ds, true
}

// editedDrafts reads the editor's drafts as posted and applies the op posted
// (edit); while the person is still editing, the first statement an edit
// added gets the keyboard in the editor of prefix (statementsAdded).
func editedDrafts(c echo.Context, prefix string) ([]draft, bool, error) {
	ds, err := postedDrafts(c)
	if err != nil {
		return nil, false, err
	}
	before := len(ds)
	ds, editing := edit(ds, c.FormValue("op"), postedPreset(c))
	if editing {
		statementsAdded(c, prefix, before, len(ds))
	}
	return ds, editing, nil
}

// statementsAdded gives the keyboard to the first statement an edit added
// (Add a statement, or a preset's) in the editor of prefix, and says how
// many were added: the editor is swapped in whole.
func statementsAdded(c echo.Context, prefix string, before, after int) {
	if after <= before {
		return
	}
	focusOn(c, prefix+"-"+strconv.Itoa(before)+"-type")
	announce(c, fmt.Sprintf("%d %s added.", after-before, plural(after-before, "statement", "statements")))
}

// actionOf tells whether the editor offers action for statements of type rtype.
func actionOf(rtype, action string) bool {
	if action == "*" {
		return true
	}
	for _, g := range access.Catalogue {
		if slices.Contains(g.Actions, access.Action(action)) {
			return rtype == access.TypeAll || rtype == g.ResourceType
		}
	}
	return false
}

// statements are the drafts as the store takes them; never nil, so an empty
// editor removes every statement.
func statements(ds []draft) []access.Statement {
	out := make([]access.Statement, len(ds))
	for i, d := range ds {
		out[i] = d.st
	}
	return out
}

// pattern builds the resource pattern the helper describes: the scope chosen
// for the statement's type, with tags for flags and segments.
func pattern(rtype, scope, tags string) string {
	if scope == "" {
		return ""
	}
	if rtype != access.TypeFlag && rtype != access.TypeSegment {
		return scope
	}
	var ts []string
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return scope
	}
	return scope + ";" + strings.Join(ts, ",")
}

// scopes are the patterns the helper offers for a type, built from the
// projects and environments the person can see.
func scopes(rtype, selected string, projects []core.Project) []views.OptionGroup {
	opt := func(value, label string) views.Option {
		return views.Option{Value: value, Label: label, Selected: value == selected}
	}
	one := func(value, label string) []views.OptionGroup {
		return []views.OptionGroup{{Options: []views.Option{opt(value, label)}}}
	}
	switch rtype {
	case access.TypeWorkspace:
		return one("workspace/*", "The workspace (workspace/*)")
	case access.TypeOrganization:
		return one("organization/*", "The organization (organization/*)")
	case access.TypeIAM:
		return one(core.IAMRN, "Members, groups and policies (iam/*)")
	case access.TypeAccessToken:
		return one(core.AccessTokenRN, "Every access token (access-token/*)")
	case access.TypeRelayProxy:
		return one(core.RelayProxyRN, "Every relay proxy (relay-proxy/*)")
	case access.TypeProject:
		out := one(core.ProjectRN("*"), "Every project")
		g := views.OptionGroup{Label: "Projects"}
		for _, pr := range projects {
			g.Options = append(g.Options, opt(core.ProjectRN(pr.Key), pr.Name))
		}
		if len(g.Options) > 0 {
			out = append(out, g)
		}
		return out
	case access.TypeEnv, access.TypeFlag, access.TypeSegment:
		suffix, what := "", ""
		switch rtype {
		case access.TypeFlag:
			suffix, what = ":flag/*", "Flags in "
		case access.TypeSegment:
			suffix, what = ":segment/*", "Segments in "
		}
		label := func(where string) string {
			if what == "" {
				return strings.ToUpper(where[:1]) + where[1:]
			}
			return what + where
		}
		out := one(core.EnvRN("*", "*")+suffix, label("every environment of every project"))
		for _, pr := range projects {
			g := views.OptionGroup{Label: pr.Name}
			g.Options = append(g.Options, opt(core.EnvRN(pr.Key, "*")+suffix, label("every environment of "+pr.Name)))
			for _, e := range pr.Environments {
				g.Options = append(g.Options, opt(core.EnvRN(pr.Key, e.Key)+suffix, label(pr.Name+" / "+e.Name)))
			}
			out = append(out, g)
		}
		return out
	}
	return one("*", "Everything (*)")
}

// problemText explains what is wrong with a statement, by the fields that
// access.StatementProblems names.
var problemText = map[string]string{
	"effect":       "Choose Allow or Deny.",
	"resourceType": "Choose a resource type.",
	"actions":      "Choose at least one action of this resource type.",
	"resources":    "Add at least one resource pattern, such as project/web:env/prod:flag/*.",
}

// editor builds the statement editor's view of drafts. problems marks the
// statements the store refused, by position; refused explains a refusal
// that concerns none of them.
func (p *pages) editor(ctx context.Context, a *core.Actor, prefix string, ds []draft, readOnly bool, problems map[int][]string, refused string) (views.StatementEditor, error) {
	e := views.StatementEditor{Prefix: prefix, ReadOnly: readOnly, Error: refused}
	var projects []core.Project
	if !readOnly {
		var err error
		if projects, err = p.store.Projects().ListProjects(ctx, a); err != nil {
			return e, err
		}
	}
	if len(problems) > 0 && refused == "" {
		e.Error = "These statements cannot be saved: see the marked ones."
	}
	if !readOnly {
		e.Presets = presetPicker(presetChoice{}, projects)
	}
	all := statements(ds)
	for i, d := range ds {
		st := d.st
		f := views.StatementForm{Index: strconv.Itoa(i), Number: strconv.Itoa(i + 1), ID: st.ID, Allow: st.Effect == "allow",
			TypeLabel: st.ResourceType, Resources: st.Resources, Tags: d.tags,
			Hint:    accessHint(st, all),
			Tagged:  st.ResourceType == access.TypeFlag || st.ResourceType == access.TypeSegment,
			Effects: options(st.Effect, "allow", "deny")}
		f.Effects[0].Label, f.Effects[1].Label = "Allow", "Deny"
		for _, field := range problems[i] {
			if f.Problems == nil {
				f.Problems = map[string]string{}
			}
			f.Problems[field] = problemText[field]
		}
		for _, t := range resourceTypes {
			f.Types = append(f.Types, views.Option{Value: t.value, Label: t.label, Selected: t.value == st.ResourceType})
			if t.value == st.ResourceType {
				f.TypeLabel = t.label
			}
		}
		f.Actions = append(f.Actions, views.Check{Value: "*", Label: "All actions", Checked: slices.Contains(st.Actions, "*")})
		for _, g := range access.Catalogue {
			for _, action := range g.Actions {
				// A "*" statement offers "All actions" and keeps the actions it names.
				if g.ResourceType == st.ResourceType || st.ResourceType == access.TypeAll && slices.Contains(st.Actions, string(action)) {
					f.Actions = append(f.Actions, views.Check{Value: string(action), Label: actionLabel(string(action)), Checked: slices.Contains(st.Actions, string(action))})
				}
			}
		}
		if !readOnly {
			f.Scopes = scopes(st.ResourceType, d.scope, projects)
		}
		e.Statements = append(e.Statements, f)
	}
	return e, nil
}

// actionLabel spells an action's name in words: "UpdateFlagName" is
// "Update flag name". A run of capitals is one word and stays as written
// ("UpdateWorkspaceSSOSettings" is "Update workspace SSO settings"), and
// the usual acronyms keep their capitals however the name spells them.
func actionLabel(action string) string {
	rs := []rune(action)
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		// A word starts at a capital after a small letter or digit, or at
		// the last capital of a run followed by a small letter ("SSOSettings").
		if unicode.IsUpper(rs[i]) && (!unicode.IsUpper(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	if len(rs) > 0 {
		words = append(words, string(rs[start:]))
	}
	for i, w := range words {
		switch upper := strings.ToUpper(w); {
		case acronyms[upper], len([]rune(w)) > 1 && w == upper:
			words[i] = upper
		case i > 0:
			words[i] = strings.ToLower(w)
		}
	}
	return strings.Join(words, " ")
}

// acronyms are written in capitals in labels, whichever way a name spells them.
var acronyms = map[string]bool{"SSO": true, "OIDC": true, "API": true, "SDK": true, "URL": true, "ID": true, "IAM": true, "JSON": true}
