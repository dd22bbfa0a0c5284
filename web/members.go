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
	"github.com/bunting-flags/bunting/web/httpx"
)

func memberHref(id uuid.UUID) string { return "/members/" + id.String() }

// choicesSize is how many policies and groups the forms that grant them list.
const choicesSize = core.MaxPageSize

// members lists the organization's members with the form that adds one.
func (p *pages) members(c echo.Context) error {
	return p.membersPage(c, http.StatusOK, p.form(c, "member-add", "/members", nil), iam.MemberInput{}, nil)
}

// membersPage renders the members page, or its regions for htmx. add is the
// state of the form, chosen what it had ticked, added the member just added.
func (p *pages) membersPage(c echo.Context, status int, add views.Form, chosen iam.MemberInput, added *views.AddedMember) error {
	ctx := c.Request().Context()
	a := actor(c)
	s := readList(c, "")
	ms, err := p.store.IAM().ListMembers(ctx, a, s.filter(iamPageSize))
	if err != nil {
		return err
	}
	list := views.MemberList{Search: s.search, Pager: s.pager("/members", nil, ms.TotalCount, iamPageSize, "member", "members")}
	for _, m := range ms.Items {
		row := views.MemberRow{Name: m.Name, Email: m.Email, Href: memberHref(m.ID)}
		for _, g := range m.Groups {
			row.Groups = append(row.Groups, views.Badge{Label: g.Name, Kind: "gray", Href: groupHref(g.ID)})
		}
		list.Rows = append(list.Rows, row)
	}
	form := views.MemberAdd{Form: add, Added: added}
	if form.Policies, form.Groups, form.More, err = p.grantChoices(c, chosen.PolicyIDs, chosen.GroupIDs); err != nil {
		return err
	}
	return p.respond(c, status, "Members", navMembers, func(shell views.Shell) templ.Component {
		return views.MembersPage(views.Members{Shell: shell, Add: form, List: list})
	}, views.MemberAddView(form), views.MemberListView(list))
}

// grantChoices lists the organization's policies and groups as checkboxes,
// ticking those chosen; more tells that some could not be listed.
func (p *pages) grantChoices(c echo.Context, policyIDs, groupIDs []uuid.UUID) (policies, groups []views.Check, more bool, err error) {
	ctx := c.Request().Context()
	first := iam.IAMFilter{Page: core.Page{Size: choicesSize}}
	ps, err := p.store.IAM().ListPolicies(ctx, actor(c), first)
	if err != nil {
		return nil, nil, false, err
	}
	gs, err := p.store.IAM().ListGroups(ctx, actor(c), first)
	if err != nil {
		return nil, nil, false, err
	}
	for _, pol := range ps.Items {
		policies = append(policies, views.Check{Value: pol.ID.String(), Label: pol.Name, Hint: pol.Description, Checked: slices.Contains(policyIDs, pol.ID)})
	}
	for _, g := range gs.Items {
		groups = append(groups, views.Check{Value: g.ID.String(), Label: g.Name, Hint: g.Description, Checked: slices.Contains(groupIDs, g.ID)})
	}
	return policies, groups, ps.TotalCount > int64(len(ps.Items)) || gs.TotalCount > int64(len(gs.Items)), nil
}

// formIDs decodes the ids a form posted under name; a malformed one is the
// field's problem, as the API's JSON decoding would make it.
func formIDs(c echo.Context, name string) ([]uuid.UUID, error) {
	params, err := c.FormParams()
	if err != nil {
		return nil, err
	}
	var out []uuid.UUID
	for _, s := range params[name] {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, core.Invalid(name + "_is_invalid")
		}
		out = append(out, id)
	}
	return out, nil
}

// addMember adds a member and shows their initial password to the inviter.
// The answer is the page itself, not a redirect, because the password must
// never be kept for a later request.
func (p *pages) addMember(c echo.Context) error {
	in := iam.MemberInput{Email: c.FormValue("email")}
	var err error
	if in.PolicyIDs, err = formIDs(c, "policyIds"); err == nil {
		in.GroupIDs, err = formIDs(c, "groupIds")
	}
	var m iam.Member
	if err == nil {
		m, err = p.store.IAM().AddMember(c.Request().Context(), actor(c), in)
	}
	if err == nil {
		added := &views.AddedMember{Email: m.Email, Href: memberHref(m.ID)}
		if m.InitialPassword != nil {
			added.Password = *m.InitialPassword
		}
		text := fmt.Sprintf("%s is a member now.", m.Email)
		if m.AlreadyMember {
			// Nothing changed: say so, rather than claim an addition.
			added, text = nil, fmt.Sprintf("%s is already a member; nothing changed.", memberName(m))
		}
		c.Set(flashKey, []views.Flash{{Kind: "success", Text: text}})
		return p.membersPage(c, http.StatusOK, p.form(c, "member-add", "/members", nil), iam.MemberInput{}, added)
	}
	values := map[string]string{"email": in.Email}
	if len(in.PolicyIDs)+len(in.GroupIDs) > 0 {
		values["custom"] = "true"
	}
	f := p.form(c, "member-add", "/members", values)
	status, err := formProblems(err, &f, "email", "policyIds", "groupIds")
	if err != nil {
		return err
	}
	if f.Errors["email"] == fieldMessages["email_is_required"] { // that one speaks to someone signing in
		f.Errors["email"] = "Enter the new member's email."
	}
	if f.Errors["policyIds"] != "" || f.Errors["groupIds"] != "" {
		f.Values["custom"] = "true"
	}
	return p.membersPage(c, status, f, in, nil)
}

// member shows one member with their groups and policies.
func (p *pages) member(c echo.Context) error { return p.memberPage(c, http.StatusOK) }

// memberPage renders a member's page, or its regions for htmx. Each of its
// lists reads its own parameters: g… for groups, p… for direct policies,
// i… for inherited ones.
func (p *pages) memberPage(c echo.Context, status int) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a := actor(c)
	href := memberHref(id)
	// An htmx request names the region it replaces (HX-Target): only that
	// list is read, with the inherited policies a group change moves too.
	target := c.Request().Header.Get("HX-Target")
	if !slices.Contains([]string{"member-groups-body", "member-policies-body", "member-inherited-body"}, target) {
		target = "" // a page, or a region outside the lists: every list
	}
	want := func(list string) bool {
		return !isHTMX(c) || target == "" || target == list+"-body" ||
			(list == "member-inherited" && target == "member-groups-body")
	}
	var regions []templ.Component

	var gl views.IAMList
	if want("member-groups") {
		var err error
		gl, err = attachedList(c, memberGroupsList, href, nil, id, p.store.IAM().ListMemberGroups, func(g iam.MemberGroup) views.IAMRow {
			return groupRow(href, g.ID, g.Name, g.Description, g.IsGroupMember)
		})
		if err != nil {
			return err
		}
		gl.OOB = "#flash,#member-inherited-body"
		regions = append(regions, views.IAMListView(gl))
	}

	var pl views.IAMList
	if want("member-policies") {
		var err error
		pl, err = attachedList(c, memberPoliciesList, href, nil, id, p.store.IAM().ListMemberDirectPolicies, func(pol iam.MemberPolicy) views.IAMRow {
			return policyRow(href, pol.ID, pol.Name, pol.Description, pol.Type, pol.IsMemberPolicy)
		})
		if err != nil {
			return err
		}
		regions = append(regions, views.IAMListView(pl))
	}

	var il views.IAMList
	if want("member-inherited") {
		var err error
		il, err = attachedList(c, memberInheritedList, href, nil, id, p.store.IAM().ListMemberInheritedPolicies, func(pol iam.InheritedPolicy) views.IAMRow {
			return views.IAMRow{Key: pol.Name + "/" + pol.GroupName, Title: pol.Name, Sub: pol.Description,
				Href: policyHref(pol.ID), Badges: append(policyBadges(pol.Type),
					views.Badge{Label: "Through " + pol.GroupName, Kind: "gray", Href: groupHref(pol.GroupID)})}
		})
		if err != nil {
			return err
		}
		regions = append(regions, views.IAMListView(il))
	}

	if isHTMX(c) { // the lists' regions; each list's query found the member
		return render(c, status, append(regions, views.Flashes(p.flashes(c)))...)
	}
	name, email, err := p.store.IAM().MemberName(ctx, a, id)
	if err != nil {
		return err
	}
	return p.respond(c, status, email, navMembers, func(shell views.Shell) templ.Component {
		return views.MemberPage(views.Member{Shell: shell, Crumbs: []views.Crumb{{Label: "Members", Href: "/members"}},
			Name: name, Email: email, Groups: gl, Policies: pl, Inherited: il, RemoveHref: href + "/remove"})
	})
}

// addMemberGroup and its siblings change a member's groups and direct
// policies from the member's page.
func (p *pages) addMemberGroup(c echo.Context) error {
	return p.attachment(c, "groupId", reversed(p.store.IAM().AddGroupMember), p.memberChanged("g", "Added to the group."))
}

func (p *pages) removeMemberGroup(c echo.Context) error {
	return p.attachment(c, "groupId", reversed(p.store.IAM().RemoveGroupMember), p.memberChanged("g", "Removed from the group."))
}

func (p *pages) addMemberPolicy(c echo.Context) error {
	return p.attachment(c, "policyId", p.store.IAM().AddMemberPolicy, p.memberChanged("p", "Policy given."))
}

func (p *pages) removeMemberPolicy(c echo.Context) error {
	return p.attachment(c, "policyId", p.store.IAM().RemoveMemberPolicy, p.memberChanged("p", "Policy taken away."))
}

// memberChanged answers a change on the member's page, back at the list it
// came from (param names it).
func (p *pages) memberChanged(param, message string) func(c echo.Context, err error, id uuid.UUID) error {
	return func(c echo.Context, err error, id uuid.UUID) error {
		to := readList(c, param).href(memberHref(id), nil)
		return p.attached(c, err, to, message, func(status int) error { return p.memberPage(c, status) })
	}
}

// memberRemoval is removing a member from the organization from its
// confirmation page.
func (p *pages) memberRemoval() iamRemoval[iam.Member] {
	return iamRemoval[iam.Member]{nav: navMembers, get: p.store.IAM().GetMember, del: p.store.IAM().RemoveMember,
		name: memberName, done: "%s was removed from the organization.", to: "/members",
		confirm: func(id uuid.UUID, m iam.Member) views.Confirm {
			href := memberHref(id)
			return views.Confirm{
				Crumbs:  []views.Crumb{{Label: "Members", Href: "/members"}, {Label: m.Email, Href: href}},
				Heading: fmt.Sprintf("Remove %s from the organization?", m.Email),
				Consequences: []string{
					fmt.Sprintf("%s loses every policy and group in this organization.", m.Email),
					"Their Personal access tokens stop working here.",
					"Their account stays: they can still sign in to other organizations they belong to.",
				},
				Action: href + "/remove", Button: "Remove member", CancelHref: href,
			}
		}}
}

// memberName names a member as people know them: "Ann (ann@example.com)".
func memberName(m iam.Member) string {
	if m.Name == "" || m.Name == m.Email {
		return m.Email
	}
	return m.Name + " (" + m.Email + ")"
}
