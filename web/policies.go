package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

func policyHref(id uuid.UUID) string { return "/policies/" + id.String() }

// The tabs of a policy's page.
const (
	tabStatements = "statements"
	tabMembers    = "members"
	tabGroups     = "groups"
	// tabSettings is shared with the flag and segment pages.
)

// policies lists the policies with the form that creates one.
func (p *pages) policies(c echo.Context) error {
	return p.policiesPage(c, http.StatusOK, p.form(c, "policy-create", "/policies", nil))
}

// policiesPage renders the policies page, or its regions for htmx; create is
// the state of the creation form.
func (p *pages) policiesPage(c echo.Context, status int, create views.Form) error {
	search, rows, pager, err := listPage(c, "/policies", "policy", "policies", p.store.IAM().ListPolicies, func(pol iam.Policy) views.PolicyRow {
		return views.PolicyRow{Name: pol.Name, Key: pol.Key, Description: pol.Description, Href: policyHref(pol.ID), BuiltIn: builtIn(pol.Type)}
	})
	if err != nil {
		return err
	}
	list := views.PolicyList{Search: search, Rows: rows, Pager: pager}
	return p.respond(c, status, "Policies", navPolicies, func(shell views.Shell) templ.Component {
		return views.PoliciesPage(views.Policies{Shell: shell, Create: create, List: list})
	}, views.PolicyCreate(create), views.PolicyListView(list))
}

// createPolicy creates a policy and opens it, to add its statements.
func (p *pages) createPolicy(c echo.Context) error {
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted policyForm) (iam.Policy, error) {
		return p.store.IAM().CreatePolicy(ctx, a, iam.PolicyInput(posted))
	}, func(pol iam.Policy) error {
		return p.opened(c, policyHref(pol.ID), fmt.Sprintf("Policy “%s” created. Add its statements.", pol.Name))
	}, func(posted policyForm) views.Form {
		return p.form(c, "policy-create", "/policies", map[string]string{"name": posted.Name, "key": posted.Key, "description": posted.Description})
	}, func(status int, f views.Form) error { return p.policiesPage(c, status, f) }, "name", "key", "description")
}

// opened ends a creation by going to the page of what was created, with a
// message; htmx is told to go there as well.
func (p *pages) opened(c echo.Context, to, message string) error {
	p.keepFlash(c, message)
	return redirect(c, to)
}

// policyKeyCheck tells whether the key typed into a policy form is free.
func (p *pages) policyKeyCheck(c echo.Context) error {
	k := views.KeyCheck{ID: "policy-create"}
	if c.QueryParam("form") == "policy-clone" {
		k.ID = "policy-clone"
	}
	if key := strings.TrimSpace(c.QueryParam("key")); key != "" {
		used, err := p.store.IAM().IsPolicyKeyUsed(c.Request().Context(), actor(c), key)
		if err != nil {
			return err
		}
		k.Used = used
		k.Text = "This key is free."
		if used {
			k.Text = "This key is already used."
		}
	}
	return render(c, http.StatusOK, views.KeyCheckView(k))
}

// policy shows one policy with the tab the request names.
func (p *pages) policy(c echo.Context) error {
	return p.policyPage(c, http.StatusOK, c.QueryParam("tab"), nil)
}

// policyEdit is the state of a policy form just posted: the statements being
// edited and what was wrong with them, or the settings form.
type policyEdit struct {
	drafts   []draft
	problems map[int][]string
	error    string
	settings *views.Form
	// asked is the question the editor posted with its statements, which
	// answer it; without one, the question in the address is answered.
	asked question
}

// policyPage renders a policy's page at one tab, or that tab's regions for
// htmx. The members tab's list reads m… parameters, the groups tab's g….
func (p *pages) policyPage(c echo.Context, status int, tab string, edited *policyEdit) error {
	id, pol, err := byPathID(c, p.store.IAM().GetPolicy)
	if err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	if edited == nil {
		edited = &policyEdit{drafts: drafts(pol.Statements)}
	}
	href := policyHref(id)
	readOnly := builtIn(pol.Type)
	vm := views.Policy{Name: pol.Name, Key: pol.Key, Description: pol.Description, BuiltIn: readOnly, CloneHref: href + "/clone",
		Crumbs: []views.Crumb{{Label: "Policies", Href: "/policies"}}}
	switch tab {
	case tabMembers, tabGroups, tabSettings:
	default:
		tab = tabStatements
	}
	for _, t := range []struct{ key, label string }{{tabStatements, "Statements"}, {tabMembers, "Members"}, {tabGroups, "Groups"}, {tabSettings, "Settings"}} {
		to := href
		if t.key != tabStatements {
			to += "?tab=" + t.key
		}
		vm.Tabs = append(vm.Tabs, views.Tab{Label: t.label, Href: to, TestID: "tab-" + t.key, Active: t.key == tab})
	}
	keep := url.Values{"tab": {tab}}

	var region templ.Component
	switch tab {
	case tabMembers:
		l, err := attachedList(c, policyMembersList, href, keep, id, p.store.IAM().ListPolicyMembers, func(m iam.PolicyMember) views.IAMRow {
			return personRow(href, m.ID, m.Name, m.Email, m.IsPolicyMember)
		})
		if err != nil {
			return err
		}
		vm.Members, region = &l, views.IAMListView(l)
	case tabGroups:
		l, err := attachedList(c, policyGroupsList, href, keep, id, p.store.IAM().ListPolicyGroups, func(g iam.PolicyGroup) views.IAMRow {
			return groupRow(href, g.ID, g.Name, g.Description, g.IsPolicyGroup)
		})
		if err != nil {
			return err
		}
		vm.Groups, region = &l, views.IAMListView(l)
	case tabSettings:
		s := views.PolicySettings{Form: edited.settings}
		if !readOnly {
			if s.Form == nil {
				f := p.form(c, "policy-settings", href+"/settings", map[string]string{"name": pol.Name, "description": pol.Description})
				s.Form = &f
			}
			s.DeleteHref = href + "/delete"
		}
		vm.Settings, region = &s, views.PolicySettingsView(s)
	default:
		e, err := p.editor(ctx, a, "policy", edited.drafts, readOnly, edited.problems, edited.error)
		if err != nil {
			return err
		}
		projects, err := p.store.Projects().ListProjects(ctx, a)
		if err != nil {
			return err
		}
		q := edited.asked
		if !q.asked() {
			q = askedInAddress(c)
		}
		check, err := p.checkStatements(c, id, statements(edited.drafts), q, projects)
		if err != nil {
			return err
		}
		s := views.PolicyStatements{Form: p.form(c, "policy-statements", href+"/statements", nil), Editor: e,
			Check: check, CheckAction: href}
		if !readOnly {
			// The check asks about the statements in the editor, unsaved ones too.
			s.FormID, s.Check.FormID, s.CheckAction = "policy-statements-form", "policy-statements-form", href+"/check"
		}
		vm.Statements, region = &s, views.PolicyStatementsView(s)
	}

	return p.respond(c, status, pol.Name, navPolicies, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.PolicyPage(vm)
	}, region, views.PolicyHeading(vm))
}

// savePolicyStatements edits the statements in the editor and, when the
// person saves, stores them.
func (p *pages) savePolicyStatements(c echo.Context) error {
	if c.FormValue("op") == "check" { // the check's button, without script
		return p.checkPolicy(c)
	}
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ds, editing, err := editedDrafts(c, "policy")
	if err != nil {
		return err
	}
	if editing {
		return p.policyPage(c, http.StatusOK, tabStatements, &policyEdit{drafts: ds})
	}
	sts := statements(ds)
	pol, err := p.store.IAM().UpdatePolicyStatements(c.Request().Context(), actor(c), id, sts)
	if err == nil {
		return p.changed(c, policyHref(id), fmt.Sprintf("Statements of “%s” saved.", pol.Name), func() error {
			return p.policyPage(c, http.StatusOK, tabStatements, nil)
		})
	}
	if edited, status, ok := refusedStatements(err, ds, sts); ok {
		return p.policyPage(c, status, tabStatements, edited)
	}
	if status, ok := p.refusal(c, err); ok {
		return p.policyPage(c, status, tabStatements, &policyEdit{drafts: ds})
	}
	return err
}

// checkPolicy answers "what does this allow?" for the statements in the
// editor, saved or not, which it posts with the question; htmx swaps only
// the answer, and without script the page comes back with the editor as
// posted. Nothing is saved.
func (p *pages) checkPolicy(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ds, err := postedDrafts(c)
	if err != nil {
		return err
	}
	q := askedInForm(c)
	if !isHTMX(c) {
		return p.policyPage(c, http.StatusOK, tabStatements, &policyEdit{drafts: ds, asked: q})
	}
	check, err := p.checkStatements(c, id, statements(ds), q, nil)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.AccessAnswerView(check))
}

// checkStatements builds the check's panel, answering q (when asked) for
// sts with the store's decision; a question the store refuses (an action
// or a resource not from the lists) is said in the panel.
func (p *pages) checkStatements(c echo.Context, id uuid.UUID, sts []access.Statement, q question, projects []core.Project) (views.AccessCheck, error) {
	if !q.asked() {
		return accessCheck(q, nil, projects), nil
	}
	answer, err := p.store.IAM().CheckPolicyStatements(c.Request().Context(), actor(c), id, sts, access.Action(q.action), q.resource)
	var verr *core.ValidationError
	if errors.As(err, &verr) {
		check := accessCheck(q, nil, projects)
		check.Answered, check.Why = true, "Choose an action and a resource from the lists."
		return check, nil
	}
	if err != nil {
		return views.AccessCheck{}, err
	}
	return accessCheck(q, &answer, projects), nil
}

// refusedStatements explains statements the store refused as invalid, next
// to the statements concerned; ok is false for other errors.
func refusedStatements(err error, ds []draft, sts []access.Statement) (*policyEdit, int, bool) {
	var verr *core.ValidationError
	if !errors.As(err, &verr) {
		return nil, 0, false
	}
	edited := &policyEdit{drafts: ds, problems: access.StatementProblems(sts)}
	if len(edited.problems) == 0 {
		edited.error = explain(err).text
	}
	return edited, http.StatusBadRequest, true
}

// updatePolicySettings renames and describes a policy.
func (p *pages) updatePolicySettings(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	var posted describedForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.PolicySettingsInput(posted)
	pol, err := p.store.IAM().UpdatePolicySettings(c.Request().Context(), actor(c), id, in)
	if err == nil {
		return p.changed(c, policyHref(id)+"?tab=settings", fmt.Sprintf("Policy “%s” saved.", pol.Name), func() error {
			return p.policyPage(c, http.StatusOK, tabSettings, nil)
		})
	}
	if status, ok := p.refusal(c, err); ok {
		return p.policyPage(c, status, tabSettings, nil)
	}
	f := p.form(c, "policy-settings", policyHref(id)+"/settings", map[string]string{"name": in.Name, "description": in.Description})
	status, err := formProblems(err, &f, "name", "description")
	if err != nil {
		return err
	}
	return p.policyPage(c, status, tabSettings, &policyEdit{settings: &f})
}

// clonePolicyForm shows the form that clones a policy, its fields suggested
// from the original.
func (p *pages) clonePolicyForm(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	pol, err := p.store.IAM().GetPolicy(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	return p.clonePage(c, http.StatusOK, pol, p.form(c, "policy-clone", policyHref(id)+"/clone", map[string]string{
		"name": pol.Name + " (copy)", "key": pol.Key + "-copy", "description": pol.Description}))
}

func (p *pages) clonePage(c echo.Context, status int, pol iam.Policy, f views.Form) error {
	shell, err := p.shell(c, "Clone "+pol.Name, navPolicies)
	if err != nil {
		return err
	}
	href := policyHref(pol.ID)
	return render(c, status, views.PolicyClonePage(views.PolicyClone{Shell: shell, Source: pol.Name, Form: f, CancelHref: href,
		Crumbs: []views.Crumb{{Label: "Policies", Href: "/policies"}, {Label: pol.Name, Href: href}}}))
}

// clonePolicy creates a policy with the statements of another and opens it.
func (p *pages) clonePolicy(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	pol, err := p.store.IAM().GetPolicy(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted policyForm) (iam.Policy, error) {
		return p.store.IAM().ClonePolicy(ctx, a, pol.Key, iam.PolicyInput(posted))
	}, func(clone iam.Policy) error {
		return p.opened(c, policyHref(clone.ID), fmt.Sprintf("Policy “%s” created from “%s”.", clone.Name, pol.Name))
	}, func(posted policyForm) views.Form {
		return p.form(c, "policy-clone", policyHref(id)+"/clone", map[string]string{"name": posted.Name, "key": posted.Key, "description": posted.Description})
	}, func(status int, f views.Form) error { return p.clonePage(c, status, pol, f) }, "name", "key", "description")
}

// policyRemoval is deleting one of the organization's policies from its
// confirmation page; a built-in policy's page has no action.
func (p *pages) policyRemoval() iamRemoval[iam.Policy] {
	return iamRemoval[iam.Policy]{nav: navPolicies, get: p.store.IAM().GetPolicy, del: p.store.IAM().DeletePolicy,
		name: func(pol iam.Policy) string { return pol.Name }, done: "Policy “%s” deleted.", to: "/policies",
		confirm: func(id uuid.UUID, pol iam.Policy) views.Confirm {
			href := policyHref(id)
			vm := views.Confirm{
				Crumbs:  []views.Crumb{{Label: "Policies", Href: "/policies"}, {Label: pol.Name, Href: href}},
				Heading: fmt.Sprintf("Delete the policy “%s”?", pol.Name),
				Consequences: []string{
					"Members and groups that have it lose what it allows.",
					"It is no longer given to new members by default.",
				},
				Button: "Delete policy", CancelHref: href + "?tab=settings",
			}
			if !builtIn(pol.Type) {
				vm.Action = href + "/delete"
			}
			return vm
		}}
}

// addPolicyMember and its siblings give the policy to members and groups,
// or take it away, from the policy's page.
func (p *pages) addPolicyMember(c echo.Context) error {
	return p.attachment(c, "memberId", reversed(p.store.IAM().AddMemberPolicy), p.policyChanged(tabMembers, "m", "Policy given to the member."))
}

func (p *pages) removePolicyMember(c echo.Context) error {
	return p.attachment(c, "memberId", reversed(p.store.IAM().RemoveMemberPolicy), p.policyChanged(tabMembers, "m", "Policy taken from the member."))
}

func (p *pages) addPolicyGroup(c echo.Context) error {
	return p.attachment(c, "groupId", reversed(p.store.IAM().AddGroupPolicy), p.policyChanged(tabGroups, "g", "Policy given to the group."))
}

func (p *pages) removePolicyGroup(c echo.Context) error {
	return p.attachment(c, "groupId", reversed(p.store.IAM().RemoveGroupPolicy), p.policyChanged(tabGroups, "g", "Policy taken from the group."))
}

// policyChanged answers a change from the policy's page: the page again,
// on its tab, at the list (param) it was made in.
func (p *pages) policyChanged(tab, param, message string) func(c echo.Context, err error, id uuid.UUID) error {
	return func(c echo.Context, err error, id uuid.UUID) error {
		to := readList(c, param).href(policyHref(id), url.Values{"tab": {tab}})
		return p.attached(c, err, to, message, func(status int) error { return p.policyPage(c, status, tab, nil) })
	}
}
