package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
)

// Several organizations in the pages: creating one (its creator is its
// owner, and works in it at once) and deleting the current one.

// newOrganization shows the form that creates an organization.
func (p *pages) newOrganization(c echo.Context) error {
	var f *views.Form
	if place(c).Org.CreateOrganization {
		form := p.form(c, "org-create", "/organizations", nil)
		f = &form
	}
	return p.newOrganizationPage(c, http.StatusOK, f)
}

func (p *pages) newOrganizationPage(c echo.Context, status int, f *views.Form) error {
	shell, err := p.shell(c, "New organization", navOrganization)
	if err != nil {
		return err
	}
	return render(c, status, views.OrganizationNewPage(views.OrganizationNew{Shell: shell, Form: f}))
}

// createOrganization creates an organization and switches to it, where the
// first-run guide greets its creator.
func (p *pages) createOrganization(c echo.Context) error {
	var posted nameKeyForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.NewOrganizationInput(posted)
	ctx, a := c.Request().Context(), actor(c)
	org, err := p.store.IAM().CreateOrganization(ctx, a, in)
	if err == nil {
		if _, err := p.store.IAM().SetUserContext(ctx, a, core.UserContext{OrganizationID: org.ID}); err != nil {
			return err
		}
		p.keepFlash(c, fmt.Sprintf("Organization “%s” created; you are its owner and work in it now.", org.Name))
		return c.Redirect(http.StatusSeeOther, "/get-started")
	}
	f := p.form(c, "org-create", "/organizations", map[string]string{"name": in.Name, "key": in.Key})
	if errors.Is(err, iam.ErrOrganizationLimit) { // no name or key helps: said above the form
		f.Error = ruleMessages[iam.ErrOrganizationLimit.Code]
		return p.newOrganizationPage(c, http.StatusUnprocessableEntity, &f)
	}
	status, err := formProblems(err, &f, "name", "key")
	if err != nil {
		return err
	}
	return p.newOrganizationPage(c, status, &f)
}

// confirmDeleteOrganization names what deleting the current organization
// removes, or why it cannot be deleted.
func (p *pages) confirmDeleteOrganization(c echo.Context) error {
	vm, err := p.organizationDeletion(c)
	if err != nil {
		return err
	}
	return p.confirmPage(c, http.StatusOK, vm)
}

// organizationDeletion is the confirmation of the current organization's deletion.
func (p *pages) organizationDeletion(c echo.Context) (views.Confirm, error) {
	org, err := p.currentOrganization(c)
	if err != nil {
		return views.Confirm{}, err
	}
	in, err := p.store.IAM().CurrentOrganizationContents(c.Request().Context(), actor(c))
	if err != nil {
		return views.Confirm{}, err
	}
	w, err := p.workplace(c)
	if err != nil {
		return views.Confirm{}, err
	}
	vm := views.Confirm{
		Crumbs:  []views.Crumb{{Label: "Organization", Href: "/organization"}},
		Heading: fmt.Sprintf("Delete the organization “%s”?", org.Name),
		Button:  "Delete organization", CancelHref: "/organization", TypeToConfirm: org.Key,
	}
	if in.InWorkspace <= 1 {
		vm.Blocked = "This is the workspace's only organization, and a workspace keeps at least one: " +
			"it cannot be deleted. Create another organization first."
		return vm, nil
	}
	vm.Action = "/organization/delete"
	vm.Consequences = []string{
		fmt.Sprintf("The organization “%s” (key %s) is deleted with %s and their %s.", org.Name, org.Key,
			count(in.Projects, "project", "projects"), count(in.Environments, "environment", "environments")),
		fmt.Sprintf("%s and %s are deleted with them; their SDK secrets stop working.",
			upperFirst(count(in.Flags, "feature flag", "feature flags")), count(in.Segments, "segment", "segments")),
		fmt.Sprintf("Its %s access to it; its %s, %s and %s are deleted.",
			count(in.Members, "member loses", "members lose"), count(in.Groups, "group", "groups"),
			count(in.Policies, "custom policy", "custom policies"), count(in.AccessTokens, "access token", "access tokens")),
	}
	if len(w.Organizations) > 1 {
		vm.Consequences = append(vm.Consequences, "You will then work in another of your organizations.")
	} else {
		vm.Consequences = append(vm.Consequences, "You belong to no other organization of this workspace: "+
			"you will have none to work in until someone adds you to one.")
	}
	return vm, nil
}

// count says how many of a thing there are: "1 project", "3 projects".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// deleteOrganization deletes the current organization once its key is
// typed, then works in another of the person's organizations.
func (p *pages) deleteOrganization(c echo.Context) error {
	org, err := p.currentOrganization(c)
	if err != nil {
		return err
	}
	a := actor(c)
	if typed := c.FormValue("confirm"); typed != org.Key && place(c).Org.Delete {
		vm, err := p.organizationDeletion(c)
		if err != nil {
			return err
		}
		vm.Typed, vm.Problem = typed, "Type the organization's key, "+org.Key+", exactly."
		return p.confirmPage(c, http.StatusBadRequest, vm)
	}
	err = p.store.IAM().DeleteOrganization(c.Request().Context(), a)
	if errors.Is(err, core.ErrLastOrganization) {
		vm, verr := p.organizationDeletion(c)
		if verr != nil {
			return verr
		}
		vm.Action, vm.Blocked = "", ruleMessages["CannotDeleteLastOrganization"]
		return p.confirmPage(c, http.StatusUnprocessableEntity, vm)
	}
	if err != nil {
		return err
	}
	// The remembered organization went with it: the next page works in the
	// person's oldest remaining membership.
	p.keepFlash(c, fmt.Sprintf("Organization “%s” deleted.", org.Name))
	return c.Redirect(http.StatusSeeOther, "/")
}
