package web

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
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
