package web

import (
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
)

// A preset is a set of statements that grants one common kind of access
// whole: with the "Can access project/env" statements that make the flag
// and segment statements usable, which hand-built policies often miss.

// presetChoice is what the editor's preset picker posted: the kind, and the
// project ("web") or environment ("web/prod") it is for.
type presetChoice struct {
	kind, project, env string
}

func postedPreset(c echo.Context) presetChoice {
	return presetChoice{kind: c.FormValue("preset"), project: c.FormValue("preset-project"), env: c.FormValue("preset-env")}
}

// presets are the kinds offered, with what each needs chosen.
var presets = []struct {
	kind, label string
	needsEnv    bool
}{
	{"read-project", "Read-only on a project", false},
	{"edit-env", "Edit flags and segments in one environment", true},
	{"all-project", "Everything in one project", false},
	{"iam", "Manage members, groups and policies", false},
}

func allow(rtype string, resource string, actions ...access.Action) access.Statement {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = string(a)
	}
	return access.Statement{ResourceType: rtype, Effect: "allow", Actions: names, Resources: []string{resource}}
}

// everything is the "*" action, every action of a statement's type.
const everything access.Action = "*"

// presetStatements are the statements of a preset; nil when the choice is
// incomplete (a project or environment not chosen).
func presetStatements(p presetChoice) []access.Statement {
	project, env := p.project, ""
	if pr, e, ok := strings.Cut(p.env, "/"); ok {
		project, env = pr, e
	}
	switch {
	case p.kind == "iam":
		return []access.Statement{allow(access.TypeIAM, core.IAMRN, everything)}
	case project == "":
		return nil
	}
	projectRN, envsRN := core.ProjectRN(project), core.EnvRN(project, "*")
	switch p.kind {
	case "read-project":
		return []access.Statement{
			allow(access.TypeProject, projectRN, access.CanAccessProject),
			allow(access.TypeEnv, envsRN, access.CanAccessEnv),
		}
	case "all-project":
		return []access.Statement{
			allow(access.TypeProject, projectRN, everything),
			allow(access.TypeEnv, envsRN, everything),
			allow(access.TypeFlag, envsRN+":flag/*", everything),
			allow(access.TypeSegment, envsRN+":segment/*", everything),
		}
	case "edit-env":
		if env == "" {
			return nil
		}
		envRN := core.EnvRN(project, env)
		return []access.Statement{
			allow(access.TypeProject, projectRN, access.CanAccessProject),
			allow(access.TypeEnv, envRN, access.CanAccessEnv),
			allow(access.TypeFlag, envRN+":flag/*", everything),
			allow(access.TypeSegment, envRN+":segment/*", everything),
		}
	}
	return nil
}

// presetPicker is the editor's preset form, with the projects and
// environments to choose from.
func presetPicker(p presetChoice, projects []core.Project) *views.PresetPicker {
	out := &views.PresetPicker{}
	for _, k := range presets {
		out.Kinds = append(out.Kinds, views.Option{Value: k.kind, Label: k.label, Selected: k.kind == p.kind})
	}
	for _, pr := range projects {
		out.Projects = append(out.Projects, views.Option{Value: pr.Key, Label: pr.Name, Selected: pr.Key == p.project})
		g := views.OptionGroup{Label: pr.Name}
		for _, e := range pr.Environments {
			v := pr.Key + "/" + e.Key
			g.Options = append(g.Options, views.Option{Value: v, Label: pr.Name + " / " + e.Name, Selected: v == p.env})
		}
		out.Envs = append(out.Envs, g)
	}
	return out
}

// accessHint says what a statement needs besides itself to be usable: a
// flag, segment or environment statement grants nothing to someone who
// cannot open the project and the environment. "" when the statements
// have what it needs (checked loosely: some statement allowing the access).
func accessHint(st access.Statement, all []access.Statement) string {
	has := func(rtype string, action access.Action) bool {
		for _, o := range all {
			if o.Effect == "allow" && (o.ResourceType == rtype || o.ResourceType == access.TypeAll) &&
				(containsAction(o.Actions, action) || containsAction(o.Actions, everything)) {
				return true
			}
		}
		return false
	}
	if st.Effect != "allow" {
		return ""
	}
	var missing []string
	switch st.ResourceType {
	case access.TypeFlag, access.TypeSegment:
		if !has(access.TypeEnv, access.CanAccessEnv) {
			missing = append(missing, "“Can access env”")
		}
		fallthrough
	case access.TypeEnv:
		if !has(access.TypeProject, access.CanAccessProject) {
			missing = append([]string{"“Can access project”"}, missing...)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "On its own this grants nothing usable: members also need " + strings.Join(missing, " and ") +
		" on the same project and environments. Add a statement for each, or start from a preset."
}

func containsAction(actions []string, a access.Action) bool {
	for _, x := range actions {
		if x == string(a) {
			return true
		}
	}
	return false
}

// question is what "what does this allow?" asks: an action and a resource
// name, both empty until asked.
type question struct{ action, resource string }

// askedInAddress is the question of a read-only policy's check, asked in
// the address; askedInForm the one the editor's form posted with its
// statements.
func askedInAddress(c echo.Context) question {
	return question{c.QueryParam("check-action"), c.QueryParam("check-resource")}
}

func askedInForm(c echo.Context) question {
	return question{c.FormValue("check-action"), c.FormValue("check-resource")}
}

func (q question) asked() bool { return q.action != "" && q.resource != "" }

// accessCheck is the "what does this allow?" panel: the actions of the
// catalogue and the resources of the projects to pick from, and, when a
// question was answered, the store's answer in words, naming the statement
// that decided by its number in the editor.
func accessCheck(q question, answer *iam.PolicyCheck, projects []core.Project) views.AccessCheck {
	out := views.AccessCheck{}
	for _, g := range access.Catalogue {
		og := views.OptionGroup{Label: resourceTypeLabel(g.ResourceType)}
		for _, a := range g.Actions {
			og.Options = append(og.Options, views.Option{Value: string(a), Label: actionLabel(string(a)), Selected: string(a) == q.action})
		}
		out.Actions = append(out.Actions, og)
	}
	opt := func(value, label string) views.Option {
		return views.Option{Value: value, Label: label, Selected: value == q.resource}
	}
	out.Resources = append(out.Resources, views.OptionGroup{Label: "Organization", Options: []views.Option{
		opt(core.IAMRN, "Members, groups and policies"), opt(core.AccessTokenRN, "Access tokens"),
		opt("organization/*", "The organization"), opt("workspace/*", "The workspace")}})
	for _, pr := range projects {
		g := views.OptionGroup{Label: pr.Name, Options: []views.Option{opt(core.ProjectRN(pr.Key), "The project "+pr.Name)}}
		for _, e := range pr.Environments {
			envRN := core.EnvRN(pr.Key, e.Key)
			g.Options = append(g.Options, opt(envRN, e.Name), opt(envRN+":flag/*", "Any flag in "+e.Name),
				opt(envRN+":segment/*", "Any segment in "+e.Name))
		}
		out.Resources = append(out.Resources, g)
	}
	if answer == nil {
		return out
	}
	out.Answered, out.Allowed, out.Unsaved = true, answer.Allowed, answer.Unsaved
	what := actionLabel(q.action) + " on " + q.resource
	switch by := answer.By; {
	case by < 0:
		out.Why = "Denied: " + what + ". No statement speaks about it, and what is not allowed is denied."
	case answer.Allowed:
		out.Why = "Allowed: " + what + ", by statement " + itoa(by+1) + "."
	default:
		out.Why = "Denied: " + what + ", by statement " + itoa(by+1) + ", which denies it (a deny wins over any allow)."
	}
	return out
}

func resourceTypeLabel(rtype string) string {
	for _, t := range resourceTypes {
		if t.value == rtype {
			return t.label
		}
	}
	return rtype
}

func itoa(n int) string { return strconv.Itoa(n) }
