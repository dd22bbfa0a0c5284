package web

import (
	"slices"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/views"
)

// Where a shared segment applies is picked from the organization's projects
// and environments; the checkboxes post the scope names the store takes
// (flagstore.Scope), so nobody types organization/…:project/…:env/….

// scopesMessage says what a refused choice of scopes needs.
const scopesMessage = "Choose where it can be used, including the environment you work in."

// scopePicker offers every environment, and per project all its
// environments or each one, checking those selected names (or an
// equivalent name: "…:project/web" is all of web's environments). Selected
// scopes no checkbox stands for are offered checked as they are.
func scopePicker(w workEnv, projects []core.Project, selected []string) views.ScopePicker {
	orgKey := w.rights.OrganizationKey()
	used := make([]bool, len(selected))
	check := func(label, scope string) views.Check {
		c := views.Check{Value: scope, Label: label}
		if i := slices.IndexFunc(selected, func(s string) bool { return flagstore.SameScope(s, scope) }); i >= 0 {
			// The name the segment has is kept as it is.
			c.Value, c.Checked, used[i] = selected[i], true, true
		}
		return c
	}
	out := views.ScopePicker{Here: w.projectName + " / " + w.name,
		Everywhere: check("Every environment of every project", flagstore.Scope(orgKey, "", ""))}
	for _, pr := range projects {
		sp := views.ScopeProject{Name: pr.Name, All: check("All environments of "+pr.Name, flagstore.Scope(orgKey, pr.Key, ""))}
		for _, e := range pr.Environments {
			sp.Envs = append(sp.Envs, check(e.Name, flagstore.Scope(orgKey, pr.Key, e.Key)))
		}
		out.Projects = append(out.Projects, sp)
	}
	for i, s := range selected {
		if !used[i] {
			used[i] = true
			out.Others = append(out.Others, views.Check{Value: s, Hint: s, Checked: true})
		}
	}
	return out
}

// postedScopes are the scopes checked in a picker, each once, and at most
// one more than a segment may have: enough for the store to refuse too
// many, while a body of a hundred thousand costs no more than that.
func postedScopes(c echo.Context) ([]string, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, s := range form["scopes"] {
		if s != "" && !slices.Contains(out, s) && len(out) <= targeting.MaxTags {
			out = append(out, s)
		}
	}
	return out, nil
}

// scopesProblem words a refused choice of scopes for the picker.
func scopesProblem(f *views.Form) {
	if f.Errors["scopes"] != "" {
		f.Errors["scopes"] = scopesMessage
	}
}

// segmentScopesForm is the settings tab's form of a shared segment's scopes,
// its own checked, or as just posted.
func (p *pages) segmentScopesForm(c echo.Context, w workEnv, sg flagstore.Segment, st segmentState) (*views.SegmentScopes, error) {
	projects, err := p.store.Projects().ListProjects(c.Request().Context(), actor(c))
	if err != nil {
		return nil, err
	}
	f, picked := st.scopes, st.scopesPicked
	if f != nil {
		scopesProblem(f)
	} else {
		fresh := p.form(c, "segment-scopes", segmentHref(sg.ID.String())+"/scopes", nil)
		f, picked = &fresh, sg.Scopes
	}
	return &views.SegmentScopes{Form: *f, Picker: scopePicker(w, projects, picked),
		CommentRequired: w.requireComment}, nil
}

// setSegmentScopes changes where a shared segment applies.
func (p *pages) setSegmentScopes(c echo.Context) error {
	ch, err := postedInput[changeForm](c)
	if err != nil {
		return err
	}
	scopes, err := postedScopes(c)
	if err != nil {
		return err
	}
	in := segments.SegmentScopesInput{Scopes: scopes, Change: ch}
	return p.segmentChange(c, tabSettings, "Where it can be used saved.", func(w workEnv, id uuid.UUID) (*flagstore.Segment, error) {
		return segmentChanged(p.store.Segments().SetSegmentScopes(c.Request().Context(), actor(c), w.id, id, in))
	}, func(f *views.Form) segmentState {
		f.ID, f.Action, f.Values = "segment-scopes", segmentHref(c.Param("id"))+"/scopes", postedValues(ch, map[string]string{})
		return segmentState{scopes: f, scopesPicked: scopes}
	}, "scopes")
}
