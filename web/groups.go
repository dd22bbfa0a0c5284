package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

func groupHref(id uuid.UUID) string { return "/groups/" + id.String() }

// groups lists the organization's groups with the form that creates one.
func (p *pages) groups(c echo.Context) error {
	return p.groupsPage(c, http.StatusOK, p.form(c, "group-create", "/groups", nil))
}

// groupsPage renders the groups page, or its regions for htmx; create is the
// state of the creation form.
func (p *pages) groupsPage(c echo.Context, status int, create views.Form) error {
	search, rows, pager, err := listPage(c, "/groups", "group", "groups", p.store.IAM().ListGroups, func(g iam.Group) views.GroupRow {
		return views.GroupRow{Name: g.Name, Description: g.Description, Href: groupHref(g.ID)}
	})
	if err != nil {
		return err
	}
	list := views.GroupList{Search: search, Rows: rows, Pager: pager}
	return p.respond(c, status, "Groups", navGroups, func(shell views.Shell) templ.Component {
		return views.GroupsPage(views.Groups{Shell: shell, Create: create, List: list})
	}, views.GroupCreate(create), views.GroupListView(list))
}

// createGroup creates a group.
func (p *pages) createGroup(c echo.Context) error {
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted describedForm) (iam.Group, error) {
		return p.store.IAM().CreateGroup(ctx, a, iam.GroupInput(posted))
	}, func(g iam.Group) error {
		return p.changed(c, "/groups", fmt.Sprintf("Group “%s” created.", g.Name), func() error {
			return p.groupsPage(c, http.StatusOK, p.form(c, "group-create", "/groups", nil))
		})
	}, func(posted describedForm) views.Form {
		return p.form(c, "group-create", "/groups", map[string]string{"name": posted.Name, "description": posted.Description})
	}, func(status int, f views.Form) error { return p.groupsPage(c, status, f) }, "name", "description")
}

// group shows one group with its members and policies.
func (p *pages) group(c echo.Context) error { return p.groupPage(c, http.StatusOK, nil) }

// groupPage renders a group's page, or its regions for htmx; settings is the
// state of the settings form just posted. Its lists read their own
// parameters: m… for members, p… for policies.
func (p *pages) groupPage(c echo.Context, status int, settings *views.Form) error {
	id, g, err := byPathID(c, p.store.IAM().GetGroup)
	if err != nil {
		return err
	}
	href := groupHref(id)
	if settings == nil {
		f := p.form(c, "group-settings", href, map[string]string{"name": g.Name, "description": g.Description})
		settings = &f
	}

	ml, err := attachedList(c, groupMembersList, href, nil, id, p.store.IAM().ListGroupMembers, func(m iam.GroupMember) views.IAMRow {
		return personRow(href, m.ID, m.Name, m.Email, m.IsGroupMember)
	})
	if err != nil {
		return err
	}

	pl, err := attachedList(c, groupPoliciesList, href, nil, id, p.store.IAM().ListGroupPolicies, func(pol iam.GroupPolicy) views.IAMRow {
		return policyRow(href, pol.ID, pol.Name, pol.Description, pol.Type, pol.IsGroupPolicy)
	})
	if err != nil {
		return err
	}

	return p.respond(c, status, g.Name, navGroups, func(shell views.Shell) templ.Component {
		return views.GroupPage(views.Group{Shell: shell, Crumbs: []views.Crumb{{Label: "Groups", Href: "/groups"}},
			Name: g.Name, Settings: *settings, Members: ml, Policies: pl, DeleteHref: href + "/delete"})
	}, views.GroupHeading(g.Name), views.GroupSettings(*settings), views.IAMListView(ml), views.IAMListView(pl))
}

// otherName is a person's name when it says more than their email.
func otherName(name, email string) string {
	if name == email {
		return ""
	}
	return name
}

// updateGroup renames and describes a group.
func (p *pages) updateGroup(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted describedForm) (iam.Group, error) {
		return p.store.IAM().UpdateGroup(ctx, a, id, iam.GroupInput(posted))
	}, func(g iam.Group) error {
		return p.changed(c, groupHref(id), fmt.Sprintf("Group “%s” saved.", g.Name), func() error { return p.groupPage(c, http.StatusOK, nil) })
	}, func(posted describedForm) views.Form {
		return p.form(c, "group-settings", groupHref(id), map[string]string{"name": posted.Name, "description": posted.Description})
	}, func(status int, f views.Form) error { return p.groupPage(c, status, &f) }, "name", "description")
}

// groupRemoval is deleting a group from its confirmation page.
func (p *pages) groupRemoval() iamRemoval[iam.Group] {
	return iamRemoval[iam.Group]{nav: navGroups, get: p.store.IAM().GetGroup, del: p.store.IAM().DeleteGroup,
		name: func(g iam.Group) string { return g.Name }, done: "Group “%s” deleted.", to: "/groups",
		confirm: func(id uuid.UUID, g iam.Group) views.Confirm {
			href := groupHref(id)
			return views.Confirm{
				Crumbs:  []views.Crumb{{Label: "Groups", Href: "/groups"}, {Label: g.Name, Href: href}},
				Heading: fmt.Sprintf("Delete the group “%s”?", g.Name),
				Consequences: []string{
					"Its members lose the policies they have through it; their own policies stay.",
					"It is no longer given to new members by default.",
				},
				Action: href + "/delete", Button: "Delete group", CancelHref: href,
			}
		}}
}

// addGroupMember and its siblings change a group's members and policies
// from the group's page.
func (p *pages) addGroupMember(c echo.Context) error {
	return p.attachment(c, "memberId", p.store.IAM().AddGroupMember, p.groupChanged("m", "Member added."))
}

func (p *pages) removeGroupMember(c echo.Context) error {
	return p.attachment(c, "memberId", p.store.IAM().RemoveGroupMember, p.groupChanged("m", "Member removed from the group."))
}

func (p *pages) addGroupPolicy(c echo.Context) error {
	return p.attachment(c, "policyId", p.store.IAM().AddGroupPolicy, p.groupChanged("p", "Policy given to the group."))
}

func (p *pages) removeGroupPolicy(c echo.Context) error {
	return p.attachment(c, "policyId", p.store.IAM().RemoveGroupPolicy, p.groupChanged("p", "Policy taken from the group."))
}

// groupChanged answers a change from the group's page: the page again, at
// the list (param) it was made in.
func (p *pages) groupChanged(param, message string) func(c echo.Context, err error, id uuid.UUID) error {
	return func(c echo.Context, err error, id uuid.UUID) error {
		to := readList(c, param).href(groupHref(id), nil)
		return p.attached(c, err, to, message, func(status int) error { return p.groupPage(c, status, nil) })
	}
}
