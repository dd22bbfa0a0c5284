package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// Navigation entries of the IAM pages, by the key pages pass as active.
const (
	navMembers      = "members"
	navGroups       = "groups"
	navPolicies     = "policies"
	navOrganization = "organization"
)

// iamNav is the IAM part of the navigation: members, groups and policies for
// those who manage IAM, the organization's page for those who may change it.
func iamNav(may core.OrgRights, active string) []views.NavItem {
	var nav []views.NavItem
	if may.ManageIAM {
		nav = append(nav,
			views.NavItem{Label: "Members", Href: "/members", TestID: "nav-members", Active: active == navMembers},
			views.NavItem{Label: "Groups", Href: "/groups", TestID: "nav-groups", Active: active == navGroups},
			views.NavItem{Label: "Policies", Href: "/policies", TestID: "nav-policies", Active: active == navPolicies})
	}
	if may.Settings() {
		nav = append(nav, views.NavItem{Label: "Organization", Href: "/organization", TestID: "nav-organization", Active: active == navOrganization})
	}
	if may.Webhooks {
		nav = append(nav, views.NavItem{Label: "Webhooks", Href: "/webhooks", TestID: "nav-webhooks", Active: active == navWebhooks})
	}
	if may.RelayProxies {
		nav = append(nav, views.NavItem{Label: "Relay proxies", Href: "/relay-proxies", TestID: "nav-relay-proxies", Active: active == navRelayProxies})
	}
	return nav
}

// Page sizes of the IAM pages: whole lists, and the lists inside a member's,
// group's or policy's page.
const (
	iamPageSize   = 20
	innerPageSize = 10
)

// listState is where one list of a page is: its search, its "show all"
// switch and its page, read under the list's parameter prefix from the query
// or from a posted form (row actions post it back, so the list answers where
// it was).
type listState struct {
	param  string
	search string
	all    bool
	// page counts from 1; a malformed page is 0, which the store refuses
	// as pageIndex_is_invalid.
	page int
}

func readList(c echo.Context, param string) listState {
	s := listState{param: param, search: c.FormValue(param + "q"), page: pageNumber(c.FormValue(param + "page"))}
	s.all, _ = strconv.ParseBool(c.FormValue(param + "all"))
	return s
}

// filter is the store's filter for one page of size rows.
func (s listState) filter(size int) iam.IAMFilter {
	return iam.IAMFilter{Search: s.search, All: s.all, Page: core.Page{Index: s.page - 1, Size: size}}
}

// values are the list's parameters that differ from their defaults.
func (s listState) values() url.Values {
	v := url.Values{}
	if s.search != "" {
		v.Set(s.param+"q", s.search)
	}
	if s.all {
		v.Set(s.param+"all", "true")
	}
	if s.page != 1 {
		v.Set(s.param+"page", strconv.Itoa(s.page))
	}
	return v
}

// hidden is the list's state as the hidden fields of a row action.
func (s listState) hidden() []views.Hidden {
	return hiddenFields(s.values())
}

// hiddenFields are values as hidden fields, in the order of their names.
func hiddenFields(v url.Values) []views.Hidden {
	var out []views.Hidden
	for _, k := range slices.Sorted(maps.Keys(v)) {
		out = append(out, views.Hidden{Name: k, Value: v.Get(k)})
	}
	return out
}

// href is base with the list's state and the page's other parameters keep.
func (s listState) href(base string, keep url.Values) string {
	v := s.values()
	for k, vs := range keep {
		v[k] = vs
	}
	if len(v) == 0 {
		return base
	}
	return base + "?" + v.Encode()
}

// pager moves between the pages of a list of total rows, size a page; an
// empty list has none.
func (s listState) pager(base string, keep url.Values, total int64, size int, one, many string) views.Pager {
	if total == 0 {
		return views.Pager{}
	}
	return pager(total, s.page, size, one, many, func(n int) string {
		at := s
		at.page = n
		return at.href(base, keep)
	})
}

// listPage reads one page of the groups or the policies list page (its
// search and page from the request) and makes each item a row; path is the
// page's, one and many name an item for the pager.
func listPage[T, R any](c echo.Context, path, one, many string, list func(context.Context, *core.Actor, iam.IAMFilter) (core.Paged[T], error),
	row func(T) R) (search string, rows []R, pager views.Pager, err error) {
	s := readList(c, "")
	page, err := list(c.Request().Context(), actor(c), s.filter(iamPageSize))
	if err != nil {
		return "", nil, views.Pager{}, err
	}
	for _, item := range page.Items {
		rows = append(rows, row(item))
	}
	return s.search, rows, s.pager(path, nil, page.TotalCount, iamPageSize, one, many), nil
}

// iamList starts an IAM list of a page at base; keep are the page's other
// parameters (such as its tab), carried by the list's search and pager.
func iamList(c echo.Context, id, base string, s listState, keep url.Values, total int64, size int, one, many string) views.IAMList {
	l := views.IAMList{ID: id, Href: base, Param: s.param, Search: s.search, All: s.all, CSRF: csrfToken(c),
		State: s.hidden(), Pager: s.pager(base, keep, total, size, one, many), OOB: "#flash", Keep: hiddenFields(keep)}
	l.State = append(l.State, l.Keep...)
	return l
}

// attachAction is where a row's add or remove button posts.
func attachAction(base string, attached bool) string {
	if attached {
		return base + "/remove"
	}
	return base + "/add"
}

// attached ends an add or remove of an attachment. A business rule it breaks
// (the last owner) is shown as a message on the page it came from, with the
// rule's status; other errors go to the error handler.
func (p *pages) attached(c echo.Context, err error, to, message string, page func(status int) error) error {
	if err == nil {
		return p.changed(c, to, message, func() error { return page(http.StatusOK) })
	}
	if status, ok := p.refusal(c, err); ok {
		return page(status)
	}
	return err
}

// attachChange is an IAM change between two resources: the page's (id)
// and another (otherID).
type attachChange func(ctx context.Context, a *core.Actor, id, otherID uuid.UUID) error

// reversed is change for a store operation that takes the two ids the other
// way round (a member's policy changed from the policy's page, a group's
// member from the member's).
func reversed(change attachChange) attachChange {
	return func(ctx context.Context, a *core.Actor, id, otherID uuid.UUID) error {
		return change(ctx, a, otherID, id)
	}
}

// attachment is the frame of the member, group and policy pages' add and
// remove routes: the page's id and the route's other one, the change, and the page
// it came from again (changed: see attached).
func (p *pages) attachment(c echo.Context, other string, change attachChange, changed func(c echo.Context, err error, id uuid.UUID) error) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	otherID, err := httpx.PathID(c, other)
	if err != nil {
		return err
	}
	return changed(c, change(c.Request().Context(), actor(c), id, otherID), id)
}

// iamRemoval is deleting a group or a policy, or removing a member, from its
// confirmation page: the resource the path's id names is read (get) both to
// say what will happen (confirm) and to name it in the message afterwards
// (name, into done); a broken rule (the last owner) shows the confirmation
// page again with the message.
type iamRemoval[T any] struct {
	nav     string
	get     func(ctx context.Context, a *core.Actor, id uuid.UUID) (T, error)
	confirm func(id uuid.UUID, t T) views.Confirm
	name    func(T) string
	del     func(ctx context.Context, a *core.Actor, id uuid.UUID) error
	done    string // the message after, %s the name
	to      string // where the browser goes after
}

// routes adds the confirmation page (GET) and the removal (POST) at path.
func (r iamRemoval[T]) routes(p *pages, g httpx.Routes, path string) {
	g.GET(path, func(c echo.Context) error { return r.page(p, c, http.StatusOK) })
	g.POST(path, func(c echo.Context) error { return r.remove(p, c) })
}

// page renders the confirmation page with status.
func (r iamRemoval[T]) page(p *pages, c echo.Context, status int) error {
	id, t, err := byPathID(c, r.get)
	if err != nil {
		return err
	}
	return p.iamConfirm(c, status, r.nav, r.confirm(id, t))
}

// remove deletes (or removes) the resource and goes to r.to with r.done.
func (r iamRemoval[T]) remove(p *pages, c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	t, err := r.get(ctx, a, id)
	if err == nil {
		err = r.del(ctx, a, id)
	}
	if status, ok := p.refusal(c, err); ok {
		return r.page(p, c, status)
	}
	if err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf(r.done, r.name(t)))
	return c.Redirect(http.StatusSeeOther, r.to)
}

// refusal puts a broken business rule in the page's messages and returns its
// status; it reports false for any other error.
func (p *pages) refusal(c echo.Context, err error) (int, bool) {
	var rerr *core.RuleError
	if !errors.As(err, &rerr) {
		return 0, false
	}
	e := explain(err)
	c.Set(flashKey, []views.Flash{{Kind: "error", Text: e.text}})
	return e.status, true
}

// builtIn tells a built-in (SysManaged) policy.
func builtIn(typ string) bool { return typ == iam.PolicySysManaged }

// policyBadges marks built-in policies in lists.
func policyBadges(typ string) []views.Badge {
	if builtIn(typ) {
		return []views.Badge{{Label: "Built-in", Kind: "blue"}}
	}
	return nil
}

// iamConfirm renders a confirmation page under the IAM navigation entry nav.
func (p *pages) iamConfirm(c echo.Context, status int, nav string, vm views.Confirm) error {
	shell, err := p.shell(c, vm.Heading, nav)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.ConfirmPage(vm))
}

// listKind is what one list of a member's, group's or policy's page is:
// param prefixes its parameters (readList), id names its region, one and
// many an item for the pager, and the words the list shows.
type listKind struct {
	param, id, one, many                        string
	title, searchLabel, allLabel, attachedLabel string
	hint, empty                                 string
}

// The lists of the member, group and policy pages.
var (
	groupMembersList    = listKind{param: "m", id: "group-members", one: "member", many: "members", title: "Members", searchLabel: "Search by email or name", allLabel: "Show all members", attachedLabel: "Member", empty: "No members yet. Switch on “Show all members” to add some."}
	groupPoliciesList   = listKind{param: "p", id: "group-policies", one: "policy", many: "policies", title: "Policies", searchLabel: "Search policies", allLabel: "Show all policies", attachedLabel: "Given", empty: "No policies yet. Switch on “Show all policies” to give one."}
	memberGroupsList    = listKind{param: "g", id: "member-groups", one: "group", many: "groups", title: "Groups", searchLabel: "Search groups", allLabel: "Show all groups", attachedLabel: "Member", hint: "The member has the policies of every group they belong to.", empty: "Not in any group. Switch on “Show all groups” to add them to one."}
	memberPoliciesList  = listKind{param: "p", id: "member-policies", one: "policy", many: "policies", title: "Direct policies", searchLabel: "Search policies", allLabel: "Show all policies", attachedLabel: "Given", hint: "Policies given to the member themselves.", empty: "No policies given directly. Switch on “Show all policies” to give one."}
	memberInheritedList = listKind{param: "i", id: "member-inherited", one: "policy", many: "policies", title: "Inherited policies", searchLabel: "Search policies", hint: "Policies the member has through their groups.", empty: "No policies through groups."}
	policyMembersList   = listKind{param: "m", id: "policy-members", one: "member", many: "members", title: "Members", searchLabel: "Search by email", allLabel: "Show all members", attachedLabel: "Has it", hint: "Members given this policy directly; members of groups that have it are on the Groups tab.", empty: "No member has this policy directly. Switch on “Show all members” to give it to some."}
	policyGroupsList    = listKind{param: "g", id: "policy-groups", one: "group", many: "groups", title: "Groups", searchLabel: "Search groups", allLabel: "Show all groups", attachedLabel: "Has it", hint: "Every member of these groups has this policy.", empty: "No group has this policy. Switch on “Show all groups” to give it to some."}
)

// attachedList is one list of a member's, group's or policy's page, of its
// kind: base is the page's address and keep its other parameters; list
// reads a page of what is attached to owner (or every candidate), and row
// makes each item a row.
func attachedList[T any](c echo.Context, kind listKind, base string, keep url.Values, owner uuid.UUID,
	list func(context.Context, *core.Actor, uuid.UUID, iam.IAMFilter) (core.Paged[T], error), row func(T) views.IAMRow) (views.IAMList, error) {
	s := readList(c, kind.param)
	page, err := list(c.Request().Context(), actor(c), owner, s.filter(innerPageSize))
	if err != nil {
		return views.IAMList{}, err
	}
	l := iamList(c, kind.id, base, s, keep, page.TotalCount, innerPageSize, kind.one, kind.many)
	l.Title, l.SearchLabel, l.AllLabel, l.AttachedLabel = kind.title, kind.searchLabel, kind.allLabel, kind.attachedLabel
	l.Hint, l.Empty = kind.hint, kind.empty
	for _, item := range page.Items {
		l.Rows = append(l.Rows, row(item))
	}
	return l, nil
}

// personRow, groupRow and policyRow are a member, a group and a policy as
// a row of a list on another page (base), attached to it or not: the row
// links to its own page and adds or removes it on base's.
func personRow(base string, id uuid.UUID, name, email string, attached bool) views.IAMRow {
	return views.IAMRow{Key: email, Title: email, Sub: otherName(name, email), Href: memberHref(id),
		Attached: attached, Remove: attached, Action: attachAction(base+"/members/"+id.String(), attached)}
}

func groupRow(base string, id uuid.UUID, name, description string, attached bool) views.IAMRow {
	return views.IAMRow{Key: name, Title: name, Sub: description, Href: groupHref(id),
		Attached: attached, Remove: attached, Action: attachAction(base+"/groups/"+id.String(), attached)}
}

func policyRow(base string, id uuid.UUID, name, description, typ string, attached bool) views.IAMRow {
	return views.IAMRow{Key: name, Title: name, Sub: description, Href: policyHref(id), Badges: policyBadges(typ),
		Attached: attached, Remove: attached, Action: attachAction(base+"/policies/"+id.String(), attached)}
}
