package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/views"
)

func segmentHref(id string) string { return "/segments/" + url.PathEscape(id) }

// segmentTypeLabel names a segment type for people.
func segmentTypeLabel(typ string) string {
	if typ == flagstore.SegmentShared {
		return "Shared"
	}
	return "This environment"
}

// segmentQuery is the segment list's search, view and page, as in its URL.
type segmentQuery struct {
	q        string
	archived bool
	page     int
}

func segmentQueryOf(q url.Values) segmentQuery {
	return segmentQuery{q: q.Get("q"), archived: q.Get("archived") == "1", page: pageNumber(q.Get("page"))}
}

func (sq segmentQuery) href(page int) string {
	v := url.Values{}
	if sq.q != "" {
		v.Set("q", sq.q)
	}
	if sq.archived {
		v.Set("archived", "1")
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/segments"
	}
	return "/segments?" + v.Encode()
}

// segments lists the segments visible in the working environment.
func (p *pages) segments(c echo.Context) error {
	return p.segmentsPage(c, http.StatusOK, segmentQueryOf(c.QueryParams()), nil)
}

// segmentsPage renders the segment list, or its regions for htmx; create
// carries the state of the form just posted.
func (p *pages) segmentsPage(c echo.Context, status int, sq segmentQuery, create *views.SegmentCreate) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, ok := workEnvOf(c)
	vm := views.Segments{Env: w.view(ok)}
	if ok {
		list, err := p.store.Segments().ListSegments(ctx, a, w.id, segments.SegmentFilter{Name: sq.q, IsArchived: sq.archived,
			Page: core.Page{Index: sq.page - 1, Size: listPageSize}})
		if err != nil {
			return err
		}
		vm.Filter = views.SegmentFilter{Action: "/segments", Query: sq.q, Archived: sq.archived,
			ActiveHref: "/segments", ArchivedHref: "/segments?archived=1"}
		vm.List = views.SegmentList{Archived: sq.archived, Pager: pager(list.TotalCount, sq.page, listPageSize, "segment", "segments", sq.href)}
		for _, sg := range list.Items {
			vm.List.Rows = append(vm.List.Rows, views.SegmentRow{Name: sg.Name, Key: sg.Key, Href: segmentHref(sg.ID.String()),
				Type: segmentTypeLabel(sg.Type), Description: sg.Description, Tags: sg.Tags, Updated: when(sg.UpdatedAt),
				Users: fmt.Sprintf("%d included, %d excluded", len(sg.Included), len(sg.Excluded)),
				Rules: fmt.Sprintf("%d %s", len(sg.Rules), plural(len(sg.Rules), "rule", "rules"))})
		}
		switch {
		case sq.q != "":
			vm.List.Empty = "No segments match."
		case sq.archived:
			vm.List.Empty = "No archived segments."
		default:
			vm.List.Empty = "No segments in this environment yet."
		}
		if create == nil {
			if create, err = p.segmentCreate(c, w, nil, nil, false); err != nil {
				return err
			}
		}
		vm.Create = create
	}
	regions := []templ.Component{views.SegmentListView(vm.List)}
	if vm.Create != nil {
		regions = append(regions, views.SegmentCreateView(*vm.Create))
	}
	return p.respond(c, status, "Segments", navSegments, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.SegmentsPage(vm)
	}, regions...)
}

// segmentCreate is the creation form, nil when the person may not create
// segments; values and scopes carry a form just posted. A shared segment's
// scopes start as every environment of the working project.
func (p *pages) segmentCreate(c echo.Context, w workEnv, values map[string]string, scopes []string, open bool) (*views.SegmentCreate, error) {
	if !w.rights.CreateSegment {
		return nil, nil
	}
	if values == nil {
		values = map[string]string{"type": flagstore.SegmentEnvironmentSpecific}
		scopes = []string{w.rights.ProjectScope()}
	}
	projects, err := p.store.Projects().ListProjects(c.Request().Context(), actor(c))
	if err != nil {
		return nil, err
	}
	types := []views.Option{
		{Value: flagstore.SegmentEnvironmentSpecific, Label: "Only this environment", Selected: values["type"] != flagstore.SegmentShared},
		{Value: flagstore.SegmentShared, Label: "Shared with other environments", Selected: values["type"] == flagstore.SegmentShared},
	}
	return &views.SegmentCreate{Form: p.form(c, "segment-create", "/segments", values), Types: types,
		Scopes: scopePicker(w, projects, scopes), CommentRequired: w.requireComment, Open: open}, nil
}

// createSegment creates a segment and opens its page.
func (p *pages) createSegment(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	in, err := postedInput[segmentForm](c)
	if err != nil {
		return err
	}
	scopes, err := postedScopes(c)
	if err != nil {
		return err
	}
	if in.Type == flagstore.SegmentShared {
		in.Scopes = scopes
	}
	sg, err := p.store.Segments().CreateSegment(c.Request().Context(), actor(c), w.id, in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Segment “%s” created.", sg.Name))
		return redirect(c, segmentHref(sg.ID.String()))
	}
	create, cerr := p.segmentCreate(c, w, map[string]string{"name": in.Name, "key": in.Key, "type": in.Type,
		"description": in.Description, "comment": in.Comment}, scopes, true)
	if cerr != nil {
		return cerr
	}
	if create == nil {
		return err
	}
	status, err := changeProblems(err, &create.Form, "name", "key", "type", "description", "scopes")
	if err != nil {
		return err
	}
	scopesProblem(&create.Form)
	return p.segmentsPage(c, status, segmentQuery{page: 1}, create)
}

// segmentState carries the forms just posted on a segment's page.
type segmentState struct {
	status int
	// segment is the segment as a change just left it; nil loads it.
	segment   *flagstore.Segment
	targeting *views.Form
	rules     []ruleForm
	texts     postedTexts
	// scopes is the scopes form just posted, with the scopes it chose.
	scopes       *views.Form
	scopesPicked []string
	// served tells an htmx answer to a targeting change just saved: only
	// the editor, with what was saved, is drawn again.
	served bool
}

func segmentTabs(href, active string) []views.Tab {
	tabs := []views.Tab{
		{Label: "Targeting", Href: href, TestID: "tab-targeting", Active: active == tabTargeting},
		{Label: "Flags", Href: href + "/flags", TestID: "tab-usage", Active: active == tabUsage},
		{Label: "Settings", Href: href + "/settings", TestID: "tab-settings", Active: active == tabSettings},
		{Label: "History", Href: href + "/history", TestID: "tab-history", Active: active == tabHistory},
	}
	return tabs
}

// segment shows who is in a segment.
func (p *pages) segment(c echo.Context) error { return p.segmentPage(c, tabTargeting, segmentState{}) }

// segmentUsage shows the flags that use a segment.
func (p *pages) segmentUsage(c echo.Context) error { return p.segmentPage(c, tabUsage, segmentState{}) }

// segmentSettings shows a segment's name, description and tags, and its archival.
func (p *pages) segmentSettings(c echo.Context) error {
	return p.segmentPage(c, tabSettings, segmentState{})
}

// segmentHistory shows a segment's changes.
func (p *pages) segmentHistory(c echo.Context) error {
	return p.segmentPage(c, tabHistory, segmentState{})
}

// segmentRules reads a segment's rules into the editor's state.
func segmentRules(rules []flagstore.SegmentRule) []ruleForm {
	out := make([]ruleForm, len(rules))
	for i, r := range rules {
		out[i] = ruleForm{index: strconv.Itoa(i), id: r.ID, name: r.Name, conds: condsFrom(r.Conditions)}
	}
	return out
}

// segmentPage renders a segment's page at a tab, or for htmx its main part.
func (p *pages) segmentPage(c echo.Context, tab string, st segmentState) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, id, err := actingEnvAndID(c)
	if err != nil {
		return err
	}
	sg, err := p.pageSegment(c, w, id, st.segment)
	if err != nil {
		return err
	}
	may, err := p.store.Flags().SegmentRights(ctx, a, w.id, sg)
	if err != nil {
		return err
	}
	href := segmentHref(sg.ID.String())
	m := views.SegmentMain{Crumbs: []views.Crumb{{Label: "Segments", Href: "/segments"}}, Name: sg.Name, Key: sg.Key,
		Description: sg.Description, Type: segmentTypeLabel(sg.Type), Scopes: sg.Scopes, Archived: sg.IsArchived,
		Tabs: segmentTabs(href, tab)}
	fresh := func(id, action string, values map[string]string) *views.Form {
		form := p.form(c, id, action, values)
		return &form
	}
	switch tab {
	case tabTargeting:
		if st.targeting == nil {
			st.targeting = fresh("segment-targeting", href+"/targeting", map[string]string{
				"included": strings.Join(sg.Included, "\n"), "excluded": strings.Join(sg.Excluded, "\n")})
			st.rules = segmentRules(sg.Rules)
		}
		attrs, err := p.store.SDK().EndUserPropertyNames(c.Request().Context(), actor(c), w.id)
		if err != nil {
			return err
		}
		m.Targeting = &views.SegmentTargeting{Form: *st.targeting, CommentRequired: w.requireComment,
			Editable: may.Targeting, Attributes: attrs, SuggestHref: suggestHref,
			Rules: rulesView(st.rules, nil, nil, false)}
	case tabUsage:
		usage, err := p.store.Segments().SegmentUsageOf(ctx, a, w.id, sg.ID)
		if err != nil {
			return err
		}
		u := views.SegmentUsage{}
		if usage.Hidden > 0 {
			u.Hidden = upperFirst(hiddenFlags(usage.Hidden)) + plural(usage.Hidden, " uses", " use") + " it too."
		}
		for _, r := range usage.Flags {
			ref := views.FlagRef{Name: r.Name, Key: r.Key, Env: r.ProjectKey + " / " + r.EnvName, Archived: r.IsArchived}
			if r.EnvID == w.id {
				ref.Href = flagHref(r.Key)
			}
			u.Flags = append(u.Flags, ref)
		}
		m.Usage = &u
	case tabSettings:
		s := views.SettingsTab{CommentRequired: w.requireComment, Archived: sg.IsArchived, Facts: []views.Fact{
			{Label: "Key", Value: sg.Key, Code: true}, {Label: "Type", Value: segmentTypeLabel(sg.Type)},
			{Label: "Scopes", Value: strings.Join(sg.Scopes, ", "), Code: true},
			{Label: "Created", Value: when(sg.CreatedAt)}, {Label: "Updated", Value: when(sg.UpdatedAt)}}}
		s = settingsTab(s, "segment", href, settingsTexts{name: sg.Name, description: sg.Description, tags: strings.Join(sg.Tags, ", "),
			mayName: may.Name, mayDescription: may.Description, mayTags: may.Tags,
			posted: st.texts},
			may.Archive, may.Restore, may.Delete, fresh)
		if s.ArchiveHref != "" || s.DeleteHref != "" {
			// The store refuses to archive or delete a segment that flags
			// use; say so here rather than offer a button that fails.
			usage, err := p.store.Segments().SegmentUsageOf(ctx, a, w.id, sg.ID)
			if err != nil {
				return err
			}
			if n := len(usage.Flags) + usage.Hidden; n > 0 {
				s.ArchiveHref, s.DeleteHref = "", ""
				s.Blocked = fmt.Sprintf("%s this segment, so it cannot be archived or deleted: take it out of their rules first (see the Flags tab).",
					plural(n, "One flag uses", fmt.Sprintf("%d flags use", n)))
			}
		}
		if sg.Type == flagstore.SegmentShared && may.Targeting && !sg.IsArchived {
			if s.Scopes, err = p.segmentScopesForm(c, w, sg, st); err != nil {
				return err
			}
		}
		m.Settings = &s
	case tabHistory:
		h, err := p.history(c, w, flagstore.AuditFilter{RefType: refSegment, RefID: sg.ID.String()}, href+"/history", "segment-history")
		if err != nil {
			return err
		}
		m.History = &h
	}
	if st.served {
		// The heading, the tabs and the other tabs' parts are as they were.
		h := c.Response().Header()
		h.Set("HX-Retarget", "#segment-targeting-region")
		h.Set("HX-Reselect", "#segment-targeting-region")
		h.Set("HX-Reswap", "outerHTML")
		return render(c, http.StatusOK, views.SegmentTargetingRegion(m), views.Flashes(p.flashes(c)))
	}
	return p.respond(c, statusOr(st.status), sg.Name, navSegments, func(shell views.Shell) templ.Component {
		return views.SegmentPageView(views.SegmentPage{Shell: shell, Main: m})
	}, views.SegmentMainView(m))
}

// pageSegment is the segment of the page's address: changed, as a change
// just left it, else as the store has it.
func (p *pages) pageSegment(c echo.Context, w workEnv, id uuid.UUID, changed *flagstore.Segment) (flagstore.Segment, error) {
	if changed != nil && changed.ID == id {
		return *changed, nil
	}
	return p.store.Segments().GetSegment(c.Request().Context(), actor(c), w.id, id)
}

// hiddenFlags names, without naming them, the flags that use a segment in
// environments the person may not open.
func hiddenFlags(n int) string {
	return plural(n, "one flag", fmt.Sprintf("%d flags", n)) + " in environments you may not open"
}
