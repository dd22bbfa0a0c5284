package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/views"
)

// Main navigation entries of the flag, segment and history pages.
const (
	navFlags    = "flags"
	navSegments = "segments"
	navAuditLog = "audit-log"
)

// Tabs of a flag's and a segment's page.
const (
	tabTargeting  = "targeting"
	tabVariations = "variations"
	tabUsage      = "usage"
	tabSettings   = "settings"
	tabHistory    = "history"
)

// listPageSize is how many flags, segments or history entries a page shows.
const listPageSize = 20

// conflictMessage explains a 409 next to the form that lost the race.
const conflictMessage = "Someone else changed this since you opened the page. Reload the page to see their change, then make yours again."

// workEnv is the environment the flag and segment pages work in: the one the
// context switcher has chosen.
type workEnv struct {
	id                      uuid.UUID
	projectKey, projectName string
	key, name               string
	requireComment          bool
}

func (w workEnv) view(ok bool) views.WorkEnv {
	return views.WorkEnv{Project: w.projectName, Name: w.name, RequireComment: w.requireComment, Missing: !ok, ProjectsHref: "/projects"}
}

// workEnvOf finds the working environment; ok is false when the person can
// open no environment at all.
func (p *pages) workEnvOf(c echo.Context) (w workEnv, ok bool, err error) {
	projects, err := p.store.ListProjects(c.Request().Context(), actor(c))
	if err != nil {
		return workEnv{}, false, err
	}
	_, envID := current(userContext(c), projects)
	for _, pr := range projects {
		for _, e := range pr.Environments {
			if e.ID == envID {
				return workEnv{id: e.ID, projectKey: pr.Key, projectName: pr.Name, key: e.Key, name: e.Name,
					requireComment: e.Settings.RequireChangeComment}, true, nil
			}
		}
	}
	return workEnv{}, false, nil
}

// actingEnv is the working environment of a flag's or a segment's page or
// change. Someone who can open no environment may change nothing: 403.
func (p *pages) actingEnv(c echo.Context) (workEnv, error) {
	w, ok, err := p.workEnvOf(c)
	if err == nil && !ok {
		err = store.ErrForbidden
	}
	return w, err
}

// changeProblems is formProblems for flag and segment changes: the comment
// is one of the fields, a lost race (409) and a broken rule (422) are
// explained above the form, which keeps what was typed.
func changeProblems(err error, f *views.Form, fields ...string) (int, error) {
	var rerr *store.RuleError
	switch {
	case errors.Is(err, store.ErrConflict):
		f.Errors, f.Error = map[string]string{}, conflictMessage
		return http.StatusConflict, nil
	case errors.As(err, &rerr) && !slices.Contains(fields, ruleFields[rerr.Code]):
		f.Errors, f.Error = map[string]string{}, explain(err).text
		return http.StatusUnprocessableEntity, nil
	}
	return formProblems(err, f, append(fields, "comment")...)
}

// redirect sends the browser to another page; htmx is told to load it.
func redirect(c echo.Context, to string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// when shows a time of the history.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// pageNumber reads a page number from 1; anything else is 0, which the
// store refuses as pageIndex_is_invalid.
func pageNumber(s string) int {
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// pager moves between pages of a list of total things.
func pager(total int64, number int, noun, nouns string, href func(int) string) views.Pager {
	last := max(1, int((total+listPageSize-1)/listPageSize))
	pg := views.Pager{Label: fmt.Sprintf("Page %d of %d · %d %s", number, last, total, plural(int(total), noun, nouns))}
	if number > 1 {
		pg.Prev = href(min(number-1, last))
	}
	if number < last {
		pg.Next = href(number + 1)
	}
	return pg
}

func flagHref(key string) string { return "/flags/" + url.PathEscape(key) }

// flagQuery is the flag list's search, filters and page, as in its URL.
type flagQuery struct {
	q, tag, status string
	archived       bool
	page           int
}

func flagQueryOf(q url.Values) flagQuery {
	return flagQuery{q: q.Get("q"), tag: q.Get("tag"), status: q.Get("status"), archived: q.Get("archived") == "1",
		page: pageNumber(q.Get("page"))}
}

// href is the list's address at a page.
func (fq flagQuery) href(page int) string {
	v := url.Values{}
	for name, value := range map[string]string{"q": fq.q, "tag": fq.tag, "status": fq.status} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if fq.archived {
		v.Set("archived", "1")
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/flags"
	}
	return "/flags?" + v.Encode()
}

// flags lists the working environment's flags.
func (p *pages) flags(c echo.Context) error {
	return p.flagsPage(c, http.StatusOK, flagQueryOf(c.QueryParams()), nil, nil)
}

// toggledRow is the state of a list row's toggle just posted.
type toggledRow struct {
	key  string
	form views.Form
}

// flagsPage renders the flag list, or its regions for htmx; create and
// toggled carry the state of forms just posted.
func (p *pages) flagsPage(c echo.Context, status int, fq flagQuery, create *views.FlagCreate, toggled *toggledRow) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, ok, err := p.workEnvOf(c)
	if err != nil {
		return err
	}
	vm := views.Flags{Env: w.view(ok)}
	if ok {
		filter := store.FlagFilter{Name: fq.q, IsArchived: fq.archived, Page: store.Page{Index: fq.page - 1, Size: listPageSize}}
		if fq.tag != "" {
			filter.Tags = []string{fq.tag}
		}
		if on, off := fq.status == "on", fq.status == "off"; on || off {
			filter.IsEnabled = &on
		}
		list, err := p.store.ListFlags(ctx, a, w.id, filter)
		if err != nil {
			return err
		}
		tags, err := p.store.FlagTags(ctx, a, w.id)
		if err != nil {
			return err
		}
		vm.Filter = views.FlagFilter{Action: "/flags", Query: fq.q, Archived: fq.archived,
			ActiveHref: "/flags", ArchivedHref: "/flags?archived=1",
			Statuses: []views.Option{{Value: "", Label: "On or off", Selected: fq.status == ""},
				{Value: "on", Label: "On", Selected: fq.status == "on"}, {Value: "off", Label: "Off", Selected: fq.status == "off"}}}
		for _, t := range tags {
			vm.Filter.Tags = append(vm.Filter.Tags, views.Option{Value: t, Label: t, Selected: t == fq.tag})
		}
		vm.List = views.FlagList{Archived: fq.archived, Pager: pager(list.TotalCount, fq.page, "flag", "flags", fq.href)}
		for _, f := range list.Items {
			row := p.flagRow(c, w, f, fq.href(fq.page))
			if toggled != nil && toggled.key == f.Key && row.Toggle != nil {
				row.Toggle.Form = toggled.form
			}
			vm.List.Rows = append(vm.List.Rows, row)
		}
		switch {
		case fq.q != "" || fq.tag != "" || fq.status != "":
			vm.List.Empty = "No flags match."
		case fq.archived:
			vm.List.Empty = "No archived flags."
		default:
			vm.List.Empty = "No feature flags in this environment yet."
		}
		if create == nil {
			create = p.flagCreate(c, w, nil, nil, false)
		}
		vm.Create = create
	}
	if isHTMX(c) {
		regions := []templ.Component{views.FlagListView(vm.List), views.Flashes(p.flashes(c))}
		if vm.Create != nil {
			regions = append(regions, views.FlagCreateView(*vm.Create))
		}
		return render(c, status, regions...)
	}
	shell, err := p.shell(c, "Feature flags", navFlags)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.FlagsPage(vm))
}

// flagRow shows one flag of the list; next is the list's address, where a
// toggle without script returns.
func (p *pages) flagRow(c echo.Context, w workEnv, f store.FlagListItem, next string) views.FlagRow {
	row := views.FlagRow{ID: f.ID.String(), Key: f.Key, Name: f.Name, Href: flagHref(f.Key), On: f.IsEnabled,
		Archived: f.IsArchived, Serves: f.Serves.EnabledVariations, OffServes: f.Serves.DisabledVariation, Tags: f.Tags,
		LastChange: when(f.UpdatedAt), LastEvaluated: evaluatedAgo(f.LastEvaluatedAt, time.Now())}
	if f.LastChange != nil {
		row.LastChange, row.LastComment = when(f.LastChange.ChangedAt), f.LastChange.Comment
	}
	if !f.IsArchived && actor(c).Can(access.ToggleFlag, store.FlagRN(w.projectKey, w.key, f.Key, f.Tags)) {
		row.Toggle = &views.FlagToggle{On: f.IsEnabled, CommentRequired: w.requireComment, Row: true,
			Form: p.form(c, f.ID.String(), flagHref(f.Key)+"/toggle", map[string]string{"revision": f.Revision.String(), "next": next})}
	}
	return row
}

// flagCreate is the creation form, nil when the person may not create flags;
// values and variations carry a form just posted.
func (p *pages) flagCreate(c echo.Context, w workEnv, values map[string]string, vars []views.VariationEdit, open bool) *views.FlagCreate {
	if !actor(c).Can(access.CreateFlag, store.FlagRN(w.projectKey, w.key, "*", nil)) {
		return nil
	}
	if values == nil {
		values = map[string]string{"variationType": store.VariationBoolean}
	}
	if vars == nil {
		vars = variationEdits(store.DefaultVariations(values["variationType"]))
	}
	return &views.FlagCreate{Form: p.form(c, "flag-create", "/flags", values), Types: variationTypes(values["variationType"]),
		Variations: renumber(vars), CommentRequired: w.requireComment, Open: open}
}

// createFlag creates a flag and opens its page. The form's edit buttons
// (another type's variations, add or remove one) come back changed, unsaved.
func (p *pages) createFlag(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	var in store.FlagInput
	if err := bind(c, &in); err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	vars := parseVariations(form)
	values := map[string]string{"name": in.Name, "key": in.Key, "description": in.Description,
		"variationType": in.VariationType, "comment": in.Comment}
	if edit := c.FormValue("edit"); edit != "" {
		if edit == "defaults" {
			vars = variationEdits(store.DefaultVariations(in.VariationType))
		} else {
			vars = editVariations(vars, edit)
		}
		return p.flagsPage(c, http.StatusOK, flagQuery{page: 1}, p.flagCreate(c, w, values, vars, true), nil)
	}
	in.Variations = storeVariations(vars)
	f, err := p.store.CreateFlag(c.Request().Context(), actor(c), w.id, in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Feature flag “%s” created.", f.Name))
		return redirect(c, flagHref(f.Key))
	}
	create := p.flagCreate(c, w, values, vars, true)
	if create == nil {
		return err
	}
	status, err := changeProblems(err, &create.Form, "name", "key", "description", "variationType", "variations")
	if err != nil {
		return err
	}
	return p.flagsPage(c, status, flagQuery{page: 1}, create, nil)
}

// toggleFlag turns a flag on or off, from its row in the list (which htmx
// replaces) or from its page.
func (p *pages) toggleFlag(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a := actor(c)
	key := c.Param("key")
	var in store.Change
	if err := bind(c, &in); err != nil {
		return err
	}
	on := c.FormValue("on") == "true"
	next := c.FormValue("next")
	fromList := next != ""
	f, err := p.store.ToggleFlag(ctx, a, w.id, key, on, in)
	if err == nil {
		msg := fmt.Sprintf("“%s” turned %s.", f.Name, strings.ToLower(onOffWord(f.IsEnabled)))
		if !fromList {
			return p.changed(c, flagHref(key), msg, func() error { return p.flagPage(c, tabTargeting, flagState{}) })
		}
		if !isHTMX(c) {
			p.keepFlash(c, msg)
			return c.Redirect(http.StatusSeeOther, localPath(next))
		}
		item := store.FlagListItem{ID: f.ID, Name: f.Name, Key: f.Key, IsEnabled: f.IsEnabled, Tags: f.Tags,
			Serves: f.Serves(), Revision: f.Revision, UpdatedAt: f.UpdatedAt,
			LastChange: &store.LastChange{Comment: in.Comment, ChangedAt: f.UpdatedAt}}
		c.Set(flashKey, []views.Flash{{Kind: "success", Text: msg}})
		return render(c, http.StatusOK, views.FlagRowView(p.flagRow(c, w, item, next)), views.Flashes(p.flashes(c)))
	}
	values := map[string]string{"comment": in.Comment, "next": next}
	if in.Revision != nil {
		values["revision"] = in.Revision.String()
	}
	if !fromList {
		form := p.form(c, "flag-toggle", flagHref(key)+"/toggle", values)
		status, err := changeProblems(err, &form)
		if err != nil {
			return err
		}
		return p.flagPage(c, tabTargeting, flagState{status: status, toggle: &form})
	}
	cur, getErr := p.store.GetFlag(ctx, a, w.id, key)
	if getErr != nil {
		return getErr
	}
	form := p.form(c, cur.ID.String(), flagHref(key)+"/toggle", values)
	status, err := changeProblems(err, &form)
	if err != nil {
		return err
	}
	if status == http.StatusConflict && !w.requireComment {
		// A one-click toggle has no room for the message: it goes above the
		// list, and the row shows the flag as it is now.
		c.Set(flashKey, []views.Flash{{Kind: "error", Text: conflictMessage}})
		form = p.form(c, cur.ID.String(), flagHref(key)+"/toggle", map[string]string{"revision": cur.Revision.String(), "next": next})
	}
	if !isHTMX(c) {
		target, _ := url.Parse(localPath(next))
		return p.flagsPage(c, status, flagQueryOf(target.Query()), nil, &toggledRow{key: key, form: form})
	}
	item := store.FlagListItem{ID: cur.ID, Name: cur.Name, Key: cur.Key, IsEnabled: cur.IsEnabled, Tags: cur.Tags,
		Serves: cur.Serves(), Revision: cur.Revision, UpdatedAt: cur.UpdatedAt}
	row := p.flagRow(c, w, item, next)
	if row.Toggle != nil {
		row.Toggle.Form = form
	}
	return render(c, status, views.FlagRowView(row), views.Flashes(p.flashes(c)))
}

func onOffWord(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

// flagState carries the forms just posted on a flag's page, to show them
// again with what was typed and their problems; nil ones start fresh.
type flagState struct {
	status                               int
	toggle, off, name, description, tags *views.Form
	clone                                *views.Form
	targetingForm, variationsForm        *views.Form
	targeting                            *targetingForm
	variations                           []views.VariationEdit
	variationType                        string
	tester                               *views.FlagTester
}

// flag shows a flag's targeting.
func (p *pages) flag(c echo.Context) error { return p.flagPage(c, tabTargeting, flagState{}) }

// flagVariations shows a flag's variations.
func (p *pages) flagVariations(c echo.Context) error {
	return p.flagPage(c, tabVariations, flagState{})
}

// flagSettings shows a flag's name, description and tags, and its archival.
func (p *pages) flagSettings(c echo.Context) error { return p.flagPage(c, tabSettings, flagState{}) }

// flagHistory shows a flag's changes.
func (p *pages) flagHistory(c echo.Context) error { return p.flagPage(c, tabHistory, flagState{}) }

func flagTabs(href, active string) []views.Tab {
	tabs := []views.Tab{
		{Label: "Targeting", Href: href, TestID: "tab-targeting"},
		{Label: "Variations", Href: href + "/variations", TestID: "tab-variations"},
		{Label: "Settings", Href: href + "/settings", TestID: "tab-settings"},
		{Label: "History", Href: href + "/history", TestID: "tab-history"},
	}
	for i := range tabs {
		tabs[i].Active = strings.ToLower(tabs[i].Label) == active
	}
	return tabs
}

// flagPage renders a flag's page at a tab, or for htmx its main part.
func (p *pages) flagPage(c echo.Context, tab string, st flagState) error {
	if st.status == 0 {
		st.status = http.StatusOK
	}
	ctx := c.Request().Context()
	a := actor(c)
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	f, err := p.store.GetFlag(ctx, a, w.id, c.Param("key"))
	if err != nil {
		return err
	}
	rn := store.FlagRN(w.projectKey, w.key, f.Key, f.Tags)
	href := flagHref(f.Key)
	live := !f.IsArchived
	fresh := func(id, action string, values map[string]string) *views.Form {
		if values == nil {
			values = map[string]string{}
		}
		values["revision"] = f.Revision.String()
		form := p.form(c, id, action, values)
		return &form
	}
	m := views.FlagMain{Crumbs: []views.Crumb{{Label: "Feature flags", Href: "/flags"}}, Name: f.Name, Key: f.Key,
		Description: f.Description, Type: f.VariationType, On: f.IsEnabled, Archived: f.IsArchived, Tabs: flagTabs(href, tab)}
	insight, err := p.store.FlagInsights(ctx, a, w.id, f.Key)
	if err != nil {
		return err
	}
	m.Evaluated = "Never evaluated by an SDK"
	if insight.LastEvaluatedAt != nil {
		m.Evaluated = fmt.Sprintf("Evaluated %s, %d times", evaluatedAgo(insight.LastEvaluatedAt, time.Now()), insight.Evaluations)
	}

	switch tab {
	case tabTargeting:
		t := views.FlagTargeting{On: f.IsEnabled}
		if live && a.Can(access.ToggleFlag, rn) {
			if st.toggle == nil {
				st.toggle = fresh("flag-toggle", href+"/toggle", nil)
			}
			t.Toggle = &views.FlagToggle{Form: *st.toggle, On: f.IsEnabled, CommentRequired: w.requireComment}
		}
		off := f.DisabledVariationID
		if st.off == nil {
			st.off = fresh("off-variation", href+"/off-variation", nil)
		} else {
			off = st.off.Values["disabledVariationId"]
		}
		t.Off = views.OffVariation{Form: *st.off, Editable: live && a.Can(access.UpdateFlagOffVariation, rn), CommentRequired: w.requireComment}
		for _, v := range f.Variations {
			t.Off.Options = append(t.Off.Options, views.Option{Value: v.ID, Label: variationLabel(v), Selected: v.ID == off})
			if v.ID == f.DisabledVariationID {
				t.Off.Current = variationLabel(v)
			}
		}
		tf := targetingFromFlag(f)
		if st.targeting != nil {
			tf = *st.targeting
		}
		segments, err := p.segmentChoices(c, w, tf.rules)
		if err != nil {
			return err
		}
		t.Editor = tf.editorView(f, segments)
		if st.targetingForm == nil {
			st.targetingForm = fresh("targeting", href+"/targeting", nil)
		}
		t.Editor.Form = *st.targetingForm
		t.Editor.CommentRequired = w.requireComment
		t.Editor.Editable = live && (a.Can(access.UpdateFlagIndividualTargeting, rn) ||
			a.Can(access.UpdateFlagTargetingRules, rn) || a.Can(access.UpdateFlagDefaultRule, rn))
		m.Targeting = &t
		if st.tester == nil {
			st.tester = &views.FlagTester{Form: p.form(c, "tester", href+"/test", nil)}
		}
		m.Tester = st.tester
	case tabVariations:
		typ, vars := f.VariationType, variationEdits(f.Variations)
		if st.variationsForm == nil {
			st.variationsForm = fresh("variations", href+"/variations", nil)
		} else {
			typ, vars = st.variationType, renumber(st.variations)
		}
		m.Variations = &views.VariationsEditor{Form: *st.variationsForm, Editable: live && a.Can(access.UpdateFlagVariations, rn),
			CommentRequired: w.requireComment, Types: variationTypes(typ), Variations: vars}
	case tabSettings:
		s := views.SettingsTab{CommentRequired: w.requireComment, Archived: f.IsArchived, Facts: []views.Fact{
			{Label: "Key", Value: f.Key, Code: true}, {Label: "Type", Value: f.VariationType},
			{Label: "Created", Value: when(f.CreatedAt)}, {Label: "Updated", Value: when(f.UpdatedAt)}}}
		if live && a.Can(access.UpdateFlagName, rn) {
			s.Name = postedOr(st.name, func() *views.Form { return fresh("flag-name", href+"/name", map[string]string{"name": f.Name}) })
		}
		if live && a.Can(access.UpdateFlagDescription, rn) {
			s.Description = postedOr(st.description, func() *views.Form {
				return fresh("flag-description", href+"/description", map[string]string{"description": f.Description})
			})
		}
		if live && a.Can(access.UpdateFlagTags, rn) {
			s.Tags = postedOr(st.tags, func() *views.Form {
				return fresh("flag-tags", href+"/tags", map[string]string{"tags": strings.Join(f.Tags, ", ")})
			})
		}
		if s.Name == nil {
			s.Facts = append([]views.Fact{{Label: "Name", Value: f.Name}}, s.Facts...)
		}
		if s.Description == nil {
			s.Facts = append(s.Facts, views.Fact{Label: "Description", Value: f.Description})
		}
		if s.Tags == nil {
			s.Facts = append(s.Facts, views.Fact{Label: "Tags", Value: strings.Join(f.Tags, ", ")})
		}
		if a.Can(access.CloneFlag, rn) && a.Can(access.CreateFlag, store.FlagRN(w.projectKey, w.key, "*", nil)) {
			s.Clone = postedOr(st.clone, func() *views.Form {
				form := p.form(c, "flag-clone", href+"/clone", map[string]string{"name": f.Name + " (copy)", "key": f.Key + "-copy"})
				return &form
			})
		}
		switch {
		case live && a.Can(access.ArchiveFlag, rn):
			s.ArchiveHref = href + "/archive"
		case !live:
			if a.Can(access.RestoreFlag, rn) {
				s.RestoreHref = href + "/restore"
			}
			if a.Can(access.DeleteFlag, rn) {
				s.DeleteHref = href + "/delete"
			}
		}
		m.Settings = &s
	case tabHistory:
		h, err := p.history(c, w, store.AuditFilter{RefType: refFlag, RefID: f.ID.String()}, href+"/history", "flag-history")
		if err != nil {
			return err
		}
		m.History = &h
	}

	if isHTMX(c) {
		return render(c, st.status, views.FlagMainView(m), views.Flashes(p.flashes(c)))
	}
	shell, err := p.shell(c, f.Name, navFlags)
	if err != nil {
		return err
	}
	return render(c, st.status, views.FlagPageView(views.FlagPage{Shell: shell, Main: m}))
}

// postedOr is the form just posted, or a fresh one.
func postedOr(posted *views.Form, fresh func() *views.Form) *views.Form {
	if posted != nil {
		return posted
	}
	return fresh()
}

// segmentChoices are the segments flag conditions may name: those of the
// environment that are not archived, and those the rules already name.
func (p *pages) segmentChoices(c echo.Context, w workEnv, rules []ruleForm) ([]views.Option, error) {
	ctx := c.Request().Context()
	a := actor(c)
	var out []views.Option
	for page := 0; page < 10; page++ { // at most 1,000 segments to choose from
		list, err := p.store.ListSegments(ctx, a, w.id, store.SegmentFilter{Page: store.Page{Index: page, Size: store.MaxPageSize}})
		if err != nil {
			return nil, err
		}
		for _, sg := range list.Items {
			out = append(out, views.Option{Value: sg.ID.String(), Label: sg.Name})
		}
		if int64(len(out)) >= list.TotalCount || len(list.Items) == 0 {
			break
		}
	}
	var missing []string
	for _, r := range rules {
		for _, cnd := range r.conds {
			for _, id := range cnd.segments {
				if _, err := uuid.Parse(id); err == nil && !slices.ContainsFunc(out, func(o views.Option) bool { return o.Value == id }) &&
					!slices.Contains(missing, id) && len(missing) < store.MaxSegmentIDs {
					missing = append(missing, id)
				}
			}
		}
	}
	if len(missing) > 0 {
		named, err := p.store.SegmentsByIDs(ctx, a, w.id, missing)
		if err != nil {
			return nil, err
		}
		for _, sg := range named {
			label := sg.Name
			if sg.IsArchived {
				label += " (archived)"
			}
			out = append(out, views.Option{Value: sg.ID.String(), Label: label})
		}
	}
	return out, nil
}

// flagChange is the part every flag change shares: the posted change is
// applied by do; success shows the tab again with a message, failure shows
// the form again (made by form, with its fields) with the problems.
func (p *pages) flagChange(c echo.Context, tab, message string, do func(w workEnv, key string) error,
	form func(w workEnv, f *views.Form) flagState, fields ...string) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	key := c.Param("key")
	href := flagHref(key)
	if tab != tabTargeting {
		href += "/" + tab
	}
	err = do(w, key)
	if err == nil {
		return p.changed(c, href, message, func() error { return p.flagPage(c, tab, flagState{}) })
	}
	f := p.form(c, "", "", nil)
	st := form(w, &f)
	failure := err
	status, err := changeProblems(err, &f, fields...)
	if err != nil {
		return err
	}
	if tab == tabVariations && stillServed(failure) {
		f.Error = "A variation you removed is still served by the targeting or as the off variation. Change those first, then remove it."
	}
	st.status = status
	return p.flagPage(c, tab, st)
}

// postedValues keeps a change's comment and revision for the form shown again.
func postedValues(ch store.Change, values map[string]string) map[string]string {
	values["comment"] = ch.Comment
	if ch.Revision != nil {
		values["revision"] = ch.Revision.String()
	}
	return values
}

// setFlagOffVariation chooses what the flag serves when off.
func (p *pages) setFlagOffVariation(c echo.Context) error {
	var in store.OffVariationInput
	if err := bind(c, &in); err != nil {
		return err
	}
	return p.flagChange(c, tabTargeting, "Off variation saved.", func(w workEnv, key string) error {
		_, err := p.store.SetFlagOffVariation(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, f *views.Form) flagState {
		f.ID, f.Action = "off-variation", flagHref(c.Param("key"))+"/off-variation"
		f.Values = postedValues(in.Change, map[string]string{"disabledVariationId": in.OffVariationID})
		return flagState{off: f}
	}, "disabledVariationId")
}

// setFlagTargeting saves the targeting editor, or applies one of its edit
// buttons and shows it again unsaved.
func (p *pages) setFlagTargeting(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	var ch store.Change
	if err := bind(c, &ch); err != nil {
		return err
	}
	f, err := p.store.GetFlag(c.Request().Context(), actor(c), w.id, c.Param("key"))
	if err != nil {
		return err
	}
	posted, err := c.FormParams()
	if err != nil {
		return err
	}
	tf := parseTargeting(posted, f.Variations)
	href := flagHref(f.Key)
	formState := func() *views.Form {
		form := p.form(c, "targeting", href+"/targeting", postedValues(ch, map[string]string{}))
		return &form
	}
	if edit := c.FormValue("edit"); edit != "" {
		tf.rules = editRules(tf.rules, edit, f.Variations)
		return p.flagPage(c, tabTargeting, flagState{targeting: &tf, targetingForm: formState()})
	}
	in, ok := tf.input(f)
	in.Change = ch
	if !ok {
		form := formState()
		form.Error = "Some rollouts cannot be saved; see below."
		return p.flagPage(c, tabTargeting, flagState{status: http.StatusBadRequest, targeting: &tf, targetingForm: form})
	}
	return p.flagChange(c, tabTargeting, "Targeting saved.", func(w workEnv, key string) error {
		_, err := p.store.SetFlagTargeting(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, form *views.Form) flagState {
		*form = *formState()
		return flagState{targeting: &tf, targetingForm: form}
	}, "targetUsers", "rules", "fallthrough")
}

// setFlagVariations saves the variations editor, or applies one of its edit
// buttons and shows it again unsaved.
func (p *pages) setFlagVariations(c echo.Context) error {
	var in store.VariationsInput
	if err := bind(c, &in); err != nil {
		return err
	}
	posted, err := c.FormParams()
	if err != nil {
		return err
	}
	vars := parseVariations(posted)
	key := c.Param("key")
	state := func(f *views.Form) flagState {
		f.ID, f.Action = "variations", flagHref(key)+"/variations"
		f.Values = postedValues(in.Change, map[string]string{})
		return flagState{variationsForm: f, variations: vars, variationType: in.VariationType}
	}
	if edit := c.FormValue("edit"); edit != "" {
		vars = editVariations(vars, edit)
		f := p.form(c, "", "", nil)
		return p.flagPage(c, tabVariations, state(&f))
	}
	in.Variations = storeVariations(vars)
	return p.flagChange(c, tabVariations, "Variations saved.", func(w workEnv, key string) error {
		_, err := p.store.SetFlagVariations(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, f *views.Form) flagState {
		st := state(f)
		return st
	}, "variationType", "variations")
}

// stillServed tells that a variations change left targeting or the off
// variation naming a variation that is gone: the store reports those fields.
func stillServed(err error) bool {
	var verr *store.ValidationError
	if !errors.As(err, &verr) {
		return false
	}
	return slices.ContainsFunc(verr.Codes, func(code string) bool {
		return slices.Contains([]string{"targetUsers_is_invalid", "rules_is_invalid", "fallthrough_is_invalid", "disabledVariationId_is_invalid"}, code)
	})
}

// renameFlag changes a flag's name.
func (p *pages) renameFlag(c echo.Context) error {
	var in store.FlagNameInput
	if err := bind(c, &in); err != nil {
		return err
	}
	return p.flagChange(c, tabSettings, "Name saved.", func(w workEnv, key string) error {
		_, err := p.store.RenameFlag(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, f *views.Form) flagState {
		f.ID, f.Action = "flag-name", flagHref(c.Param("key"))+"/name"
		f.Values = postedValues(in.Change, map[string]string{"name": in.Name})
		return flagState{name: f}
	}, "name")
}

// describeFlag changes a flag's description.
func (p *pages) describeFlag(c echo.Context) error {
	var in store.DescriptionInput
	if err := bind(c, &in); err != nil {
		return err
	}
	description := c.FormValue("description") // the form always has the field; empty clears it
	in.Description = &description
	return p.flagChange(c, tabSettings, "Description saved.", func(w workEnv, key string) error {
		_, err := p.store.UpdateFlagDescription(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, f *views.Form) flagState {
		f.ID, f.Action = "flag-description", flagHref(c.Param("key"))+"/description"
		f.Values = postedValues(in.Change, map[string]string{"description": description})
		return flagState{description: f}
	}, "description")
}

// cloneFlag copies a flag under a new name and key and opens the copy.
func (p *pages) cloneFlag(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	var in store.CloneFlagInput
	if err := bind(c, &in); err != nil {
		return err
	}
	in.Description, in.Tags = nil, nil // the copy keeps them
	key := c.Param("key")
	f, err := p.store.CloneFlag(c.Request().Context(), actor(c), w.id, key, in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Feature flag “%s” created as a copy.", f.Name))
		return redirect(c, flagHref(f.Key))
	}
	form := p.form(c, "flag-clone", flagHref(key)+"/clone", postedValues(in.Change, map[string]string{"name": in.Name, "key": in.Key}))
	status, err := changeProblems(err, &form, "name", "key")
	if err != nil {
		return err
	}
	return p.flagPage(c, tabSettings, flagState{status: status, clone: &form})
}

// tagList reads tags typed separated by commas.
func tagList(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// tagFlag replaces a flag's tags.
func (p *pages) tagFlag(c echo.Context) error {
	var ch store.Change
	if err := bind(c, &ch); err != nil {
		return err
	}
	tags := tagList(c.FormValue("tags"))
	in := store.TagsInput{Tags: &tags, Change: ch}
	return p.flagChange(c, tabSettings, "Tags saved.", func(w workEnv, key string) error {
		_, err := p.store.SetFlagTags(c.Request().Context(), actor(c), w.id, key, in)
		return err
	}, func(w workEnv, f *views.Form) flagState {
		f.ID, f.Action = "flag-tags", flagHref(c.Param("key"))+"/tags"
		f.Values = postedValues(ch, map[string]string{"tags": c.FormValue("tags")})
		return flagState{tags: f}
	}, "tags")
}

// flagLifecycle describes archiving, restoring or deleting a flag.
type flagLifecycle struct {
	verb, button string
	danger       bool
	action       access.Action
	consequences func(f store.Flag) []string
	do           func(p *pages, c echo.Context, w workEnv, key string, ch store.Change) error
	done         string
	// to is where the browser goes after the change.
	to func(key string) string
}

var (
	archiveFlag = flagLifecycle{verb: "Archive", button: "Archive flag", danger: true, action: access.ArchiveFlag,
		consequences: func(f store.Flag) []string {
			return []string{"SDKs no longer receive the flag: code asking for it gets its fallback value.",
				"It leaves the list of active flags; you can restore it, or then delete it."}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch store.Change) error {
			_, err := p.store.ArchiveFlag(c.Request().Context(), actor(c), w.id, key, ch)
			return err
		},
		done: "archived", to: func(key string) string { return flagHref(key) + "/settings" }}
	restoreFlag = flagLifecycle{verb: "Restore", button: "Restore flag", action: access.RestoreFlag,
		consequences: func(f store.Flag) []string {
			return []string{fmt.Sprintf("SDKs receive the flag again; it is %s, as it was when archived.", strings.ToLower(onOffWord(f.IsEnabled)))}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch store.Change) error {
			_, err := p.store.RestoreFlag(c.Request().Context(), actor(c), w.id, key, ch)
			return err
		},
		done: "restored", to: func(key string) string { return flagHref(key) + "/settings" }}
	deleteFlag = flagLifecycle{verb: "Delete", button: "Delete flag", danger: true, action: access.DeleteFlag,
		consequences: func(f store.Flag) []string {
			return []string{"The flag, its targeting and its revisions are deleted for good; this cannot be undone.",
				"Its history stays in the environment's audit log."}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch store.Change) error {
			return p.store.DeleteFlag(c.Request().Context(), actor(c), w.id, key, ch)
		},
		done: "deleted", to: func(string) string { return "/flags?archived=1" }}
)

// confirmFlag asks before archiving, restoring or deleting a flag.
func (p *pages) confirmFlag(l flagLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error { return p.confirmFlagPage(c, l, http.StatusOK, nil) }
}

func (p *pages) confirmFlagPage(c echo.Context, l flagLifecycle, status int, posted *views.Form) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	a := actor(c)
	f, err := p.store.GetFlag(c.Request().Context(), a, w.id, c.Param("key"))
	if err != nil {
		return err
	}
	href := flagHref(f.Key)
	vm := views.ChangeConfirm{
		Crumbs:       []views.Crumb{{Label: "Feature flags", Href: "/flags"}, {Label: f.Name, Href: href}},
		Heading:      fmt.Sprintf("%s the flag “%s”?", l.verb, f.Name),
		Consequences: l.consequences(f), Button: l.button, Danger: l.danger, CancelHref: href + "/settings",
		CommentRequired: w.requireComment,
	}
	action := href + "/" + strings.ToLower(l.verb)
	if posted != nil {
		vm.Form = *posted
	} else {
		vm.Form = p.form(c, "confirm", action, map[string]string{"revision": f.Revision.String()})
	}
	if !a.Can(l.action, store.FlagRN(w.projectKey, w.key, f.Key, f.Tags)) {
		vm.Form.Action = ""
	}
	shell, err := p.shell(c, vm.Heading, navFlags)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.ChangeConfirmPage(vm))
}

// changeFlagLifecycle archives, restores or deletes a flag, as confirmed.
func (p *pages) changeFlagLifecycle(l flagLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, err := p.actingEnv(c)
		if err != nil {
			return err
		}
		var ch store.Change
		if err := bind(c, &ch); err != nil {
			return err
		}
		key := c.Param("key")
		err = l.do(p, c, w, key, ch)
		if err == nil {
			p.keepFlash(c, fmt.Sprintf("Feature flag “%s” %s.", key, l.done))
			return c.Redirect(http.StatusSeeOther, l.to(key))
		}
		form := p.form(c, "confirm", flagHref(key)+"/"+strings.ToLower(l.verb), postedValues(ch, map[string]string{}))
		status, err := changeProblems(err, &form)
		if err != nil {
			return err
		}
		return p.confirmFlagPage(c, l, status, &form)
	}
}

// evaluatedAgo says how long ago SDKs last evaluated a flag, so stale flags
// stand out: "3 minutes ago", or "never".
func evaluatedAgo(at *time.Time, now time.Time) string {
	if at == nil {
		return "never"
	}
	d := now.Sub(*at)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, one)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int(d/time.Hour), "hour")
	}
	return unit(int(d/(24*time.Hour)), "day")
}

// testFlag evaluates the flag for the user the "test a user" panel
// describes, with the engine the SDKs use.
func (p *pages) testFlag(c echo.Context) error {
	w, err := p.actingEnv(c)
	if err != nil {
		return err
	}
	key := c.Param("key")
	values := map[string]string{"keyId": c.FormValue("keyId"), "name": c.FormValue("name"), "properties": c.FormValue("properties")}
	t := &views.FlagTester{Form: p.form(c, "tester", flagHref(key)+"/test", values)}
	u := eval.EndUser{KeyID: strings.TrimSpace(values["keyId"])}
	if name := strings.TrimSpace(values["name"]); name != "" {
		u.Name = &name
	}
	for _, line := range strings.Split(values["properties"], "\n") {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(name) != "" {
			u.CustomizedProperties = append(u.CustomizedProperties, eval.UserProperty{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
		}
	}
	ev, err := p.store.EvaluateFlag(c.Request().Context(), actor(c), w.id, key, u)
	status, err := formProblems(err, &t.Form, "keyId")
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		t.Result = &views.FlagTestResult{Variation: "nothing", Reason: ev.Reason}
		if ev.Variation != nil {
			t.Result.Variation, t.Result.Value = ev.Variation.Name, ev.Variation.Value
		}
	}
	return p.flagPage(c, tabTargeting, flagState{status: status, tester: t})
}
