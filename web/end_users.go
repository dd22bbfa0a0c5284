package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/views"
)

const navEndUsers = "end-users"

// endUserPageSize is how many end users a page of the list shows.
const endUserPageSize = 25

// cursorParam spells a keyset cursor in a page address: the last-seen time
// in Unix microseconds (PostgreSQL's precision) and the id.
func cursorParam(c *sdkdata.PageCursor) string {
	return strconv.FormatInt(c.UpdatedAt.UnixMicro(), 10) + "_" + c.ID.String()
}

func parseCursor(s, direction string) (*sdkdata.PageCursor, bool) {
	micros, id, ok := strings.Cut(s, "_")
	n, err := strconv.ParseInt(micros, 10, 64)
	u, err2 := uuid.Parse(id)
	at := time.UnixMicro(n).UTC()
	if !ok || err != nil || err2 != nil || !core.TimeInRange(at) {
		return nil, false
	}
	return &sdkdata.PageCursor{ID: u, UpdatedAt: at, Direction: direction}, true
}

// endUsers lists the working environment's end users, most recently seen
// first: a search by any part of the key or name, and Next and Previous
// links that carry keyset cursors (after=…, before=…).
func (p *pages) endUsers(c echo.Context) error {
	w, ok := workEnvOf(c)
	q := strings.TrimSpace(c.QueryParam("q"))
	vm := views.EndUsers{Env: w.view(ok), Search: q}
	status := http.StatusOK
	if ok {
		f := sdkdata.EndUserFilter{SearchText: q, PageSize: endUserPageSize}
		for param, dir := range map[string]string{"after": sdkdata.CursorForward, "before": sdkdata.CursorBackward} {
			if v := c.QueryParam(param); v != "" {
				cur, valid := parseCursor(v, dir)
				if !valid {
					vm.List.Error = "That page address is not valid; here is the first page."
					status = http.StatusBadRequest
					continue
				}
				f.Cursor = cur
			}
		}
		if status != http.StatusOK {
			f.Cursor = nil
		}
		ctx := c.Request().Context()
		page, err := p.store.SDK().ListEndUsers(ctx, actor(c), w.id, f)
		var invalid *core.ValidationError
		if errors.As(err, &invalid) {
			vm.List.Error = searchTooLong
			status = http.StatusBadRequest
		} else if err != nil {
			return err
		}
		bound, err := p.store.SDK().EndUserStatus(ctx, actor(c), w.id)
		if err != nil {
			return err
		}
		if bound.LimitReached {
			vm.List.Bound = fmt.Sprintf("This environment keeps the most end users it may (%d): users SDKs report for the first time are not kept. "+
				"Known users are still updated. The bound is set by BUNTING_MAX_END_USERS_PER_ENV.", bound.Max)
		}
		vm.List.Empty = "No end users yet. They appear here when SDKs report evaluations or client SDKs connect."
		if q != "" {
			vm.List.Empty = "No end user's key or name starts with “" + q + "”."
		}
		for _, u := range page.Items {
			row := views.EndUserRow{Key: u.KeyID, Href: "/end-users/" + u.ID.String(), FirstSeen: when(u.CreatedAt),
				LastSeen: when(u.UpdatedAt), Properties: len(u.CustomizedProperties)}
			if u.Name != nil {
				row.Name = *u.Name
			}
			vm.List.Rows = append(vm.List.Rows, row)
		}
		link := func(param string, cur *sdkdata.PageCursor) string {
			v := url.Values{param: {cursorParam(cur)}}
			if q != "" {
				v.Set("q", q)
			}
			return "/end-users?" + v.Encode()
		}
		if page.PreviousCursor != nil {
			vm.List.Pager.Prev = link("before", page.PreviousCursor)
		}
		if page.NextCursor != nil {
			vm.List.Pager.Next = link("after", page.NextCursor)
		}
		if len(page.Items) > 0 {
			vm.List.Pager.Label = "Most recently seen first"
		}
	}
	return p.respond(c, status, "End users", navEndUsers, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.EndUsersPage(vm)
	}, views.EndUserListView(vm.List))
}

// maxEndUserFlags is how many flags an end user's page lists.
const maxEndUserFlags = core.MaxPageSize

// endUser shows one end user: properties, what every flag serves them now
// and why, and the segments they are in.
func (p *pages) endUser(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return core.ErrNotFound
	}
	ctx, a := c.Request().Context(), actor(c)
	u, err := p.store.SDK().GetEndUser(ctx, a, w.id, id)
	if err != nil {
		return err
	}
	flags, err := p.store.SDK().EndUserFlags(ctx, a, w.id, id, sdkdata.EndUserFlagFilter{Page: core.Page{Size: maxEndUserFlags}})
	if err != nil {
		return err
	}
	segments, err := p.store.SDK().EndUserSegments(ctx, a, w.id, id)
	if err != nil {
		return err
	}
	vm := views.EndUserPage{Crumbs: []views.Crumb{{Label: "End users", Href: "/end-users"}}, Key: u.KeyID,
		FirstSeen: when(u.CreatedAt), LastSeen: when(u.UpdatedAt)}
	if u.Name != nil {
		vm.Name = *u.Name
	}
	for _, pr := range u.CustomizedProperties {
		vm.Properties = append(vm.Properties, views.EndUserPropertyRow{Name: pr.Name, Value: pr.Value})
	}
	for _, f := range flags.Items {
		row := views.EndUserFlagRow{Key: f.Key, Name: f.Name, Href: flagHref(f.Key), ServedBy: f.ServedBy, Why: f.Why,
			Variation: "Nothing"}
		if f.VariationID != "" {
			row.Variation = describe.VariationName(f.VariationID, f.Variations)
		}
		vm.Flags = append(vm.Flags, row)
	}
	if more := flags.TotalCount - int64(len(flags.Items)); more > 0 {
		vm.MoreFlags = fmt.Sprintf("%d more flags are not listed; the API pages them all.", more)
	}
	for _, sg := range segments {
		vm.Segments = append(vm.Segments, views.EndUserSegmentRow{Name: sg.Name, Type: sg.Type, Href: "/segments/" + sg.ID})
	}
	shell, err := p.shell(c, u.KeyID, navEndUsers)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, http.StatusOK, views.EndUserPageView(vm))
}
