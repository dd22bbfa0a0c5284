package web

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
)

// currentOrganization is the organization the person works in.
func (p *pages) currentOrganization(c echo.Context) (iam.Organization, error) {
	a := actor(c)
	orgs, err := p.store.IAM().ListOrganizations(c.Request().Context(), a)
	if err != nil {
		return iam.Organization{}, err
	}
	for _, o := range orgs {
		if o.ID == a.OrgID {
			return o, nil
		}
	}
	return iam.Organization{}, core.ErrNotFound
}

// organization shows the organization's settings.
func (p *pages) organization(c echo.Context) error {
	return p.organizationPage(c, http.StatusOK, nil, nil)
}

// organizationPage renders the organization's page, or its region for htmx;
// posted is the state of the form just posted and defaults what it ticked.
func (p *pages) organizationPage(c echo.Context, status int, posted *views.Form, defaults *iam.DefaultPermissions) error {
	org, err := p.currentOrganization(c)
	if err != nil {
		return err
	}
	may := place(c).Org
	vm := views.Organization{Key: org.Key, Editable: may.Settings()}
	if may.CreateOrganization {
		vm.NewHref = "/organizations/new"
	}
	if may.Delete {
		vm.DeleteHref = "/organization/delete"
	}
	if posted != nil {
		vm.Form = *posted
	} else {
		vm.Form = p.form(c, "org", "/organization", map[string]string{"name": org.Name})
	}
	// The defaults are listed from the policies and groups, which only those
	// who manage IAM may read.
	if may.DefaultPermissions && may.ManageIAM {
		if defaults == nil {
			defaults = &org.DefaultPermissions
		}
		d := views.OrgDefaults{}
		if d.Policies, d.Groups, d.More, err = p.grantChoices(c, defaults.PolicyIDs, defaults.GroupIDs); err != nil {
			return err
		}
		d.Keep = unlisted("policyIds", defaults.PolicyIDs, d.Policies)
		d.Keep = append(d.Keep, unlisted("groupIds", defaults.GroupIDs, d.Groups)...)
		vm.Defaults = &d
	}
	return p.respond(c, status, "Organization", navOrganization, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.OrganizationPage(vm)
	}, views.OrganizationSettings(vm), p.switcherAgain(c))
}

// unlisted keeps the ids that the checkboxes do not show, as hidden fields.
func unlisted(name string, ids []uuid.UUID, shown []views.Check) []views.Hidden {
	var out []views.Hidden
	for _, id := range ids {
		if !slices.ContainsFunc(shown, func(ch views.Check) bool { return ch.Value == id.String() }) {
			out = append(out, views.Hidden{Name: name, Value: id.String()})
		}
	}
	return out
}

// updateOrganization renames the organization and, when the form has them,
// sets the default permissions of new members.
func (p *pages) updateOrganization(c echo.Context) error {
	in := iam.OrganizationInput{Name: c.FormValue("name")}
	var err error
	if c.FormValue("defaults") == "true" {
		d := iam.DefaultPermissions{}
		if d.PolicyIDs, err = formIDs(c, "policyIds"); err == nil {
			d.GroupIDs, err = formIDs(c, "groupIds")
		}
		if d.PolicyIDs == nil {
			d.PolicyIDs = []uuid.UUID{}
		}
		if d.GroupIDs == nil {
			d.GroupIDs = []uuid.UUID{}
		}
		in.DefaultPermissions = &d
	}
	if err == nil {
		var org iam.Organization
		if org, err = p.store.IAM().UpdateOrganization(c.Request().Context(), actor(c), in); err == nil {
			in.Name = org.Name
		}
	}
	if err == nil {
		return p.changed(c, "/organization", fmt.Sprintf("Organization “%s” saved.", in.Name), func() error {
			return p.organizationPage(c, http.StatusOK, nil, nil)
		})
	}
	f := p.form(c, "org", "/organization", map[string]string{"name": in.Name})
	status, err := formProblems(err, &f, "name", "defaultPermissions")
	if err != nil {
		return err
	}
	return p.organizationPage(c, status, &f, in.DefaultPermissions)
}
