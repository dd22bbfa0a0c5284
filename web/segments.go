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

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

func segmentHref(id string) string { return "/segments/" + url.PathEscape(id) }

// segmentTypeLabel names a segment type for people.
func segmentTypeLabel(typ string) string {
	if typ == store.SegmentShared {
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
	w, ok, err := p.workEnvOf(c)
	if err != nil {
		return err
	}
	vm := views.Segments{Env: w.view(ok)}
	if ok {
		list, err := p.store.ListSegments(ctx, a, w.id, store.SegmentFilter{Name: sq.q, IsArchived: sq.archived,
			Page: store.Page{Index: sq.page - 1, Size: listPageSize}})
		if err != nil {
			return err
		}
		vm.Filter = views.SegmentFilter{Action: "/segments", Query: sq.q, Archived: sq.archived,
			ActiveHref: "/segments", ArchivedHref: "/segments?archived=1"}
		vm.List = views.SegmentList{Archived: sq.archived, Pager: pager(list.TotalCount, sq.page, "segment", "segments", sq.href)}
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
			if create, err = p.segmentCreate(c, w, nil, false); err != nil {
				return err
			}
		}
		vm.Create = create
	}
	if isHTMX(c) {
		regions := []templ.Component{views.SegmentListView(vm.List), views.Flashes(p.flashes(c))}
		if vm.Create != nil {
			regions = append(regions, views.SegmentCreateView(*vm.Create))
		}
		return render(c, status, regions...)
	}
	shell, err := p.shell(c, "Segments", navSegments)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.SegmentsPage(vm))
}

// segmentCreate is the creation form, nil when the person may not create
// segments; values carry a form just posted. A shared segment's scopes start
// as every environment of the working project.
func (p *pages) segmentCreate(c echo.Context, w workEnv, values map[string]string, open bool) (*views.SegmentCreate, error) {
	a := actor(c)
	rights, err := p.store.EnvRights(c.Request().Context(), a, w.id)
	if err != nil || !rights.CreateSegment {
		return nil, err
	}
	if values == nil {
		orgs, err := p.store.ListOrganizations(c.Request().Context(), a)
		if err != nil {
			return nil, err
		}
		values = map[string]string{"type": store.SegmentEnvironmentSpecific}
		for _, o := range orgs {
			if o.ID == a.OrgID {
				values["scopes"] = "organization/" + o.Key + ":project/" + w.projectKey + ":env/*"
			}
		}
	}
	types := []views.Option{
		{Value: store.SegmentEnvironmentSpecific, Label: "Only this environment", Selected: values["type"] != store.SegmentShared},
		{Value: store.SegmentShared, Label: "Shared with other environments", Selected: values["type"] == store.SegmentShared},
	}
	return &views.SegmentCreate{Form: p.form(c, "segment-create", "/segments", values), Types: types,
		CommentRequired: w.requireComment, Open: open}, nil
}

// createSegment creates a segment and opens its page.
func (p *pages) createSegment(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	var in store.SegmentInput
	if err := bind(c, &in); err != nil {
		return err
	}
	scopes := c.FormValue("scopes")
	in.Scopes = nil
	if in.Type == store.SegmentShared {
		in.Scopes = userKeys(scopes)
	}
	sg, err := p.store.CreateSegment(c.Request().Context(), actor(c), w.id, in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Segment “%s” created.", sg.Name))
		return redirect(c, segmentHref(sg.ID.String()))
	}
	create, cerr := p.segmentCreate(c, w, map[string]string{"name": in.Name, "key": in.Key, "type": in.Type,
		"description": in.Description, "scopes": scopes, "comment": in.Comment}, true)
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
	return p.segmentsPage(c, status, segmentQuery{page: 1}, create)
}

// segmentState carries the forms just posted on a segment's page.
type segmentState struct {
	status                  int
	targeting               *views.Form
	rules                   []ruleForm
	name, description, tags *views.Form
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
func segmentRules(rules []store.SegmentRule) []ruleForm {
	out := make([]ruleForm, len(rules))
	for i, r := range rules {
		out[i] = ruleForm{index: strconv.Itoa(i), id: r.ID, name: r.Name, conds: condsFrom(r.Conditions)}
	}
	return out
}

// segmentPage renders a segment's page at a tab, or for htmx its main part.
func (p *pages) segmentPage(c echo.Context, tab string, st segmentState) error {
	if st.status == 0 {
		st.status = http.StatusOK
	}
	ctx := c.Request().Context()
	a := actor(c)
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	sg, err := p.store.GetSegment(ctx, a, w.id, id)
	if err != nil {
		return err
	}
	may, err := p.store.SegmentRights(ctx, a, w.id, sg)
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
		attrs, err := p.store.EndUserPropertyNames(c.Request().Context(), actor(c), w.id)
		if err != nil {
			return err
		}
		m.Targeting = &views.SegmentTargeting{Form: *st.targeting, CommentRequired: w.requireComment,
			Editable: may.Targeting, Attributes: attrs,
			Rules: rulesView(st.rules, nil, nil, false)}
	case tabUsage:
		usage, err := p.store.SegmentUsageOf(ctx, a, w.id, sg.ID)
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
			postedName: st.name, postedDescription: st.description, postedTags: st.tags},
			may.Archive, may.Restore, may.Delete, fresh)
		if s.ArchiveHref != "" || s.DeleteHref != "" {
			// The store refuses to archive or delete a segment that flags
			// use; say so here rather than offer a button that fails.
			usage, err := p.store.SegmentUsageOf(ctx, a, w.id, sg.ID)
			if err != nil {
				return err
			}
			if n := len(usage.Flags) + usage.Hidden; n > 0 {
				s.ArchiveHref, s.DeleteHref = "", ""
				s.Blocked = fmt.Sprintf("%s this segment, so it cannot be archived or deleted: take it out of their rules first (see the Flags tab).",
					plural(n, "One flag uses", fmt.Sprintf("%d flags use", n)))
			}
		}
		m.Settings = &s
	case tabHistory:
		h, err := p.history(c, w, store.AuditFilter{RefType: refSegment, RefID: sg.ID.String()}, href+"/history", "segment-history")
		if err != nil {
			return err
		}
		m.History = &h
	}
	if isHTMX(c) {
		return render(c, st.status, views.SegmentMainView(m), views.Flashes(p.flashes(c)))
	}
	shell, err := p.shell(c, sg.Name, navSegments)
	if err != nil {
		return err
	}
	return render(c, st.status, views.SegmentPageView(views.SegmentPage{Shell: shell, Main: m}))
}

// segmentChange is the part every segment change shares, like flagChange.
func (p *pages) segmentChange(c echo.Context, tab, message string, do func(w workEnv, id uuid.UUID) error,
	form func(f *views.Form) segmentState, fields ...string) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	href := segmentHref(id.String())
	if tab != tabTargeting {
		href += "/" + tab
	}
	err = do(w, id)
	if err == nil {
		return p.changed(c, href, message, func() error { return p.segmentPage(c, tab, segmentState{}) })
	}
	f := p.form(c, "", "", nil)
	st := form(&f)
	status, err := changeProblems(err, &f, fields...)
	if err != nil {
		return err
	}
	st.status = status
	return p.segmentPage(c, tab, st)
}

// setSegmentTargeting saves who is in a segment, or applies one of the rule
// editor's buttons and shows it again unsaved. The editor is sent whole: the
// store checks only the parts that change.
func (p *pages) setSegmentTargeting(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	var ch store.Change
	if err := bind(c, &ch); err != nil {
		return err
	}
	posted, err := c.FormParams()
	if err != nil {
		return err
	}
	rules := parseRules(posted, nil, false)
	values := postedValues(ch, map[string]string{"included": c.FormValue("included"), "excluded": c.FormValue("excluded")})
	state := func(f *views.Form) segmentState {
		f.ID, f.Action, f.Values = "segment-targeting", segmentHref(id.String())+"/targeting", values
		return segmentState{targeting: f, rules: rules}
	}
	if edit := c.FormValue("edit"); edit != "" {
		rules = editRules(rules, edit, nil)
		f := p.form(c, "", "", nil)
		return p.segmentPage(c, tabTargeting, state(&f))
	}
	included, excluded := userKeys(c.FormValue("included")), userKeys(c.FormValue("excluded"))
	storeRules := make([]store.SegmentRule, len(rules))
	for i, r := range rules {
		storeRules[i] = store.SegmentRule{ID: r.id, Name: r.name, Conditions: conditions(r.conds)}
	}
	in := store.SegmentTargetingInput{Change: ch, Included: &included, Excluded: &excluded, Rules: &storeRules}
	return p.segmentChange(c, tabTargeting, "Segment targeting saved.", func(w workEnv, id uuid.UUID) error {
		_, err := p.store.SetSegmentTargeting(c.Request().Context(), actor(c), w.id, id, in)
		return err
	}, state, "included", "excluded", "rules")
}

// renameSegment changes a segment's name.
func (p *pages) renameSegment(c echo.Context) error {
	var in store.SegmentNameInput
	if err := bind(c, &in); err != nil {
		return err
	}
	return p.segmentChange(c, tabSettings, "Name saved.", func(w workEnv, id uuid.UUID) error {
		_, err := p.store.RenameSegment(c.Request().Context(), actor(c), w.id, id, in)
		return err
	}, func(f *views.Form) segmentState {
		f.ID, f.Action = "segment-name", segmentHref(c.Param("id"))+"/name"
		f.Values = postedValues(in.Change, map[string]string{"name": in.Name})
		return segmentState{name: f}
	}, "name")
}

// describeSegment changes a segment's description.
func (p *pages) describeSegment(c echo.Context) error {
	var in store.DescriptionInput
	if err := bind(c, &in); err != nil {
		return err
	}
	description := c.FormValue("description") // the form always has the field; empty clears it
	in.Description = &description
	return p.segmentChange(c, tabSettings, "Description saved.", func(w workEnv, id uuid.UUID) error {
		_, err := p.store.SetSegmentDescription(c.Request().Context(), actor(c), w.id, id, in)
		return err
	}, func(f *views.Form) segmentState {
		f.ID, f.Action = "segment-description", segmentHref(c.Param("id"))+"/description"
		f.Values = postedValues(in.Change, map[string]string{"description": description})
		return segmentState{description: f}
	}, "description")
}

// tagSegment replaces a segment's tags.
func (p *pages) tagSegment(c echo.Context) error {
	var ch store.Change
	if err := bind(c, &ch); err != nil {
		return err
	}
	tags := tagList(c.FormValue("tags"))
	in := store.TagsInput{Tags: &tags, Change: ch}
	return p.segmentChange(c, tabSettings, "Tags saved.", func(w workEnv, id uuid.UUID) error {
		_, err := p.store.SetSegmentTags(c.Request().Context(), actor(c), w.id, id, in)
		return err
	}, func(f *views.Form) segmentState {
		f.ID, f.Action = "segment-tags", segmentHref(c.Param("id"))+"/tags"
		f.Values = postedValues(ch, map[string]string{"tags": c.FormValue("tags")})
		return segmentState{tags: f}
	}, "tags")
}

// segmentLifecycle describes archiving, restoring or deleting a segment.
type segmentLifecycle struct {
	verb, button, done string
	action             access.Action
	danger             bool
	consequence        string
	do                 func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch store.Change) error
	to                 func(id uuid.UUID) string
}

var (
	archiveSegment = segmentLifecycle{verb: "Archive", button: "Archive segment", action: access.ArchiveSegment, done: "archived", danger: true,
		consequence: "Flag rules can no longer name it; you can restore it, or delete it.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch store.Change) error {
			_, err := p.store.ArchiveSegment(c.Request().Context(), actor(c), w.id, id, ch)
			return err
		},
		to: func(id uuid.UUID) string { return segmentHref(id.String()) + "/settings" }}
	restoreSegment = segmentLifecycle{verb: "Restore", button: "Restore segment", action: access.RestoreSegment, done: "restored",
		consequence: "Flag rules can name it again.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch store.Change) error {
			_, err := p.store.RestoreSegment(c.Request().Context(), actor(c), w.id, id, ch)
			return err
		},
		to: func(id uuid.UUID) string { return segmentHref(id.String()) + "/settings" }}
	deleteSegment = segmentLifecycle{verb: "Delete", button: "Delete segment", action: access.DeleteSegment, done: "deleted", danger: true,
		consequence: "The segment and its users and rules are deleted for good; this cannot be undone. Its history stays in the audit log.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch store.Change) error {
			return p.store.DeleteSegment(c.Request().Context(), actor(c), w.id, id, ch)
		},
		to: func(uuid.UUID) string { return "/segments" }}
)

// confirmSegment asks before archiving, restoring or deleting a segment.
func (p *pages) confirmSegment(l segmentLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error { return p.confirmSegmentPage(c, l, http.StatusOK, nil) }
}

func (p *pages) confirmSegmentPage(c echo.Context, l segmentLifecycle, status int, posted *views.Form) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	sg, err := p.store.GetSegment(ctx, a, w.id, id)
	if err != nil {
		return err
	}
	usage, err := p.store.SegmentUsageOf(ctx, a, w.id, sg.ID)
	if err != nil {
		return err
	}
	href := segmentHref(sg.ID.String())
	vm := views.ChangeConfirm{
		Crumbs:  []views.Crumb{{Label: "Segments", Href: "/segments"}, {Label: sg.Name, Href: href}},
		Heading: fmt.Sprintf("%s the segment “%s”?", l.verb, sg.Name), Consequences: []string{l.consequence},
		Button: l.button, Danger: l.danger, CancelHref: href + "/settings", CommentRequired: w.requireComment,
	}
	if len(usage.Flags)+usage.Hidden > 0 && l.verb != "Restore" {
		names := make([]string, len(usage.Flags), len(usage.Flags)+1)
		for i, r := range usage.Flags {
			names[i] = "“" + r.Name + "”"
		}
		if usage.Hidden > 0 {
			names = append(names, hiddenFlags(usage.Hidden))
		}
		vm.Consequences = append(vm.Consequences, fmt.Sprintf("Flags use it: %s. It cannot be archived or deleted until no flag does.",
			strings.Join(names, ", ")))
	}
	if posted != nil {
		vm.Form = *posted
	} else {
		vm.Form = p.form(c, "confirm", href+"/"+strings.ToLower(l.verb), nil)
	}
	may, err := p.store.SegmentRights(c.Request().Context(), a, w.id, sg)
	if err != nil {
		return err
	}
	if !may.Permits(l.action) {
		vm.Form.Action = ""
	}
	shell, err := p.shell(c, vm.Heading, navSegments)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.ChangeConfirmPage(vm))
}

// changeSegmentLifecycle archives, restores or deletes a segment, as confirmed.
func (p *pages) changeSegmentLifecycle(l segmentLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, err := p.actingEnv(c)
		if err != nil {
			return err
		}
		id, err := httpx.PathID(c, "id")
		if err != nil {
			return err
		}
		var ch store.Change
		if err := bind(c, &ch); err != nil {
			return err
		}
		err = l.do(p, c, w, id, ch)
		if err == nil {
			p.keepFlash(c, "Segment "+l.done+".")
			return c.Redirect(http.StatusSeeOther, l.to(id))
		}
		form := p.form(c, "confirm", segmentHref(id.String())+"/"+strings.ToLower(l.verb), postedValues(ch, map[string]string{}))
		status, err := changeProblems(err, &form)
		if err != nil {
			return err
		}
		return p.confirmSegmentPage(c, l, status, &form)
	}
}

// hiddenFlags names, without naming them, the flags that use a segment in
// environments the person may not open.
func hiddenFlags(n int) string {
	return plural(n, "one flag", fmt.Sprintf("%d flags", n)) + " in environments you may not open"
}
