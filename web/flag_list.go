package web

import (
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

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/views"
)

// flagQuery is the flag list's search, filters, order and page, as in its
// URL, so that a list can be bookmarked and shared.
type flagQuery struct {
	q, status string
	// stage is a lifecycle stage, or "ready" for the flags ready to remove.
	stage    string
	tags     []string
	archived bool
	// sort is a key of flagstore.SortKeys, "-" before it for descending;
	// empty is the default, newest first.
	sort       string
	page, size int
}

// flagPageSizes are the page sizes the list offers; others fall back to
// listPageSize, so a hand-made URL cannot ask for a huge page.
var flagPageSizes = []int{10, 20, 50, 100}

// flagSorts are the list's orders as its sort menu names them, the default first.
var flagSorts = []struct{ value, label string }{
	{"", "Newest first"}, {"createdAt", "Oldest first"},
	{"name", "Name A–Z"}, {"-name", "Name Z–A"}, {"key", "Key A–Z"}, {"-key", "Key Z–A"},
	{"-updatedAt", "Changed most recently"}, {"updatedAt", "Changed least recently"},
	{"-lastEvaluatedAt", "Evaluated most recently"}, {"lastEvaluatedAt", "Evaluated least recently"},
}

func flagQueryOf(q url.Values) flagQuery {
	fq := flagQuery{q: q.Get("q"), status: q.Get("status"), archived: q.Get("archived") == "1",
		page: pageNumber(q.Get("page")), size: listPageSize}
	for _, t := range q["tag"] {
		if t != "" && !slices.Contains(fq.tags, t) {
			fq.tags = append(fq.tags, t)
		}
	}
	if n, err := strconv.Atoi(q.Get("size")); err == nil && slices.Contains(flagPageSizes, n) {
		fq.size = n
	}
	for _, o := range flagSorts {
		if o.value == q.Get("sort") {
			fq.sort = o.value
		}
	}
	if s := q.Get("stage"); knownStage(s) && !fq.archived {
		fq.stage = s
	}
	return fq
}

// order is the store's sort key and direction for the list's sort.
func (fq flagQuery) order() (sortBy, order string) {
	if fq.sort == "" {
		return "createdAt", "desc"
	}
	if key, ok := strings.CutPrefix(fq.sort, "-"); ok {
		return key, "desc"
	}
	return fq.sort, "asc"
}

// href is the list's address at a page.
func (fq flagQuery) href(page int) string {
	v := url.Values{}
	for name, value := range map[string]string{"q": fq.q, "status": fq.status, "sort": fq.sort, "stage": fq.stage} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if len(fq.tags) > 0 {
		v["tag"] = fq.tags
	}
	if fq.archived {
		v.Set("archived", "1")
	}
	if fq.size != listPageSize && fq.size != 0 {
		v.Set("size", strconv.Itoa(fq.size))
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
	w, ok := workEnvOf(c)
	if !ok && c.Request().Method == http.MethodGet && !isHTMX(c) {
		if greet, err := p.greeted(c); err != nil || greet {
			return err
		}
	}
	vm := views.Flags{Env: w.view(ok)}
	if ok {
		sortBy, order := fq.order()
		filter := flagstore.FlagFilter{Name: fq.q, Tags: fq.tags, IsArchived: fq.archived, SortBy: sortBy, Order: order,
			Page: core.Page{Index: fq.page - 1, Size: fq.size}, Stage: fq.stage}
		if on, off := fq.status == "on", fq.status == "off"; on || off {
			filter.IsEnabled = &on
		}
		list, err := p.store.Flags().ListFlags(ctx, a, w.id, filter)
		if err != nil {
			return err
		}
		tags, err := p.store.Flags().FlagTags(ctx, a, w.id)
		if err != nil {
			return err
		}
		vm.Filter = flagFilterOf(fq, tags)
		vm.List = views.FlagList{Archived: fq.archived, Pager: flagPager(list.TotalCount, fq), Filtered: tagsNote(fq.tags),
			StageNote: stageNote(fq.stage)}
		// Only flags evaluated within the trend's day have a trend to read.
		var recent []uuid.UUID
		for _, f := range list.Items {
			if f.LastEvaluatedAt != nil && time.Since(*f.LastEvaluatedAt) < sdkdata.TrendHours*time.Hour {
				recent = append(recent, f.ID)
			}
		}
		trends, err := p.flagTrends(c, w, recent)
		if err != nil {
			return err
		}
		inCode, err := p.archivedInCode(c, w, list.Items)
		if err != nil {
			return err
		}
		for _, f := range list.Items {
			row := p.flagRow(c, w, f, fq.href(fq.page))
			row.Trend = trends[f.ID]
			if n := inCode[f.Key]; n > 0 {
				row.InCode = fmt.Sprintf("Archived but still in code: %d %s", n, plural(n, "reference", "references"))
			}
			if toggled != nil && toggled.key == f.Key && row.Toggle != nil {
				row.Toggle.Form = toggled.form
			}
			vm.List.Rows = append(vm.List.Rows, row)
		}
		switch last := lastPage(list.TotalCount, fq.size); {
		case len(list.Items) == 0 && fq.page > last && list.TotalCount > 0:
			// Past the end of a list that has flags: say so, and where it ends.
			vm.List.Empty = fmt.Sprintf("There is no page %d: the list has %d %s, on %d %s.", fq.page,
				list.TotalCount, plural(int(list.TotalCount), "flag", "flags"), last, plural(last, "page", "pages"))
			vm.List.LastPageHref = fq.href(last)
		case fq.stage == flagstore.ReadyToRemoveFilter:
			vm.List.Empty = "No flag is ready to remove."
		case fq.q != "" || len(fq.tags) > 0 || fq.status != "" || fq.stage != "":
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
	regions := []templ.Component{views.FlagListView(vm.List)}
	if ok {
		regions = append(regions, views.FlagTagSummary(vm.Filter))
	}
	if vm.Create != nil {
		regions = append(regions, views.FlagCreateView(*vm.Create))
	}
	return p.respond(c, status, "Feature flags", navFlags, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.FlagsPage(vm)
	}, regions...)
}

// flagRow shows one flag of the list; next is the list's address, where a
// toggle without script returns.
func (p *pages) flagRow(c echo.Context, w workEnv, f flagstore.FlagListItem, next string) views.FlagRow {
	row := views.FlagRow{ID: f.ID.String(), Key: f.Key, Name: f.Name, Href: flagHref(f.Key), On: f.IsEnabled,
		Archived: f.IsArchived, Serving: servingLines(f.Serving), OffServes: f.Serves.DisabledVariation, Tags: f.Tags,
		LastChange: when(f.UpdatedAt), LastEvaluated: evaluatedAgo(f.LastEvaluatedAt, time.Now()), Stage: stageView(f.Stage, f.ReadyToRemove)}
	if f.LastChange != nil {
		row.LastChange, row.LastComment = when(f.LastChange.ChangedAt), f.LastChange.Comment
	}
	// Where changes need approval, a flag is turned on or off from its page,
	// with a reason and reviewers; the list shows its state.
	if w.approvals == 0 && w.rights.Flag(f.Key, f.Tags, f.IsArchived).Toggle {
		row.Toggle = &views.FlagToggle{On: f.IsEnabled, CommentRequired: w.requireComment, Row: true,
			Form: p.form(c, f.ID.String(), flagHref(f.Key)+"/toggle", map[string]string{"revision": f.Revision.String(), "next": next})}
	}
	return row
}

// flagCreate is the creation form, nil when the person may not create flags;
// values and variations carry a form just posted.
func (p *pages) flagCreate(c echo.Context, w workEnv, values map[string]string, vars []views.VariationEdit, open bool) *views.FlagCreate {
	if !w.rights.CreateFlag {
		return nil
	}
	if values == nil {
		values = map[string]string{"variationType": targeting.VariationBoolean}
	}
	if vars == nil {
		vars = variationEdits(flagstore.DefaultVariations(values["variationType"]))
	}
	create := &views.FlagCreate{Form: p.form(c, "flag-create", "/flags", values), Types: variationTypes(values["variationType"]),
		Variations: renumber(vars), CommentRequired: w.requireComment, Open: open}
	// Where changes need approval a new flag comes in with a change request:
	// the form asks for its reason and reviewers. Without the choice of
	// reviewers (the store could not list them) it asks for nothing, and
	// the store refuses the flag, saying why.
	_ = p.withRequest(c, w, &create.Form)
	return create
}

// createFlag creates a flag and opens its page. The form's edit buttons
// (another type's variations, add or remove one) come back changed, unsaved.
func (p *pages) createFlag(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	in, form, err := postedEditor[flagForm](c)
	if err != nil {
		return err
	}
	vars := parseVariations(form)
	values := map[string]string{"name": in.Name, "key": in.Key, "description": in.Description,
		"variationType": in.VariationType, "comment": in.Comment}
	if edit := c.FormValue("edit"); edit != "" {
		if edit == "defaults" {
			vars = variationEdits(flagstore.DefaultVariations(in.VariationType))
		} else {
			vars = editVariations(vars, edit)
		}
		return p.flagsPage(c, http.StatusOK, flagQuery{page: 1, size: listPageSize}, p.flagCreate(c, w, values, vars, true), nil)
	}
	in.Variations = storeVariations(vars)
	if in.NewFlagRequest, err = newFlagRequest(c); err != nil {
		return err
	}
	f, err := p.store.Flags().CreateFlagRequesting(c.Request().Context(), actor(c), w.id, in)
	if err == nil {
		return p.flagCreated(c, f, fmt.Sprintf("Feature flag “%s” created.", f.Name), "")
	}
	create := p.flagCreate(c, w, values, vars, true)
	if create == nil {
		return err
	}
	status, err := changeProblems(err, &create.Form, "name", "key", "description", "variationType", "variations", "reason", "reviewers")
	if err != nil {
		return err
	}
	return p.flagsPage(c, status, flagQuery{page: 1, size: listPageSize}, create, nil)
}

// toggleFlag turns a flag on or off, from its row in the list (which htmx
// replaces) or from its page.
func (p *pages) toggleFlag(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	in, err := postedInput[changeForm](c)
	if err != nil {
		return err
	}
	on := c.FormValue("on") == "true"
	if next := c.FormValue("next"); next != "" {
		return p.toggleRow(c, w, on, in, next)
	}
	// From its page: where changes need approval, the toggle requests the change.
	key := c.Param("key")
	f, err := p.changeServing(c, w, key, flagstore.ServingChange{IsEnabled: &on, Change: in})
	var message string
	if f != nil {
		message = turned(*f)
		focusOn(c, views.ToggleID("flag-toggle", false)) // the button, now saying the way back
	}
	return p.flagChanged(c, tabTargeting, message, f, err, func(form *views.Form) flagState {
		form.ID, form.Action = "flag-toggle", flagHref(key)+"/toggle"
		form.Values = postedValues(in, map[string]string{})
		return flagState{toggle: form}
	})
}

// turned says that a flag was turned on or off.
func turned(f flagstore.Flag) string {
	return fmt.Sprintf("“%s” turned %s.", f.Name, strings.ToLower(onOffWord(f.IsEnabled)))
}

// toggleRow turns a flag on or off from its row in the list, which htmx
// replaces; without script the list at next is shown again. Where changes
// need approval the list offers no toggle (flagRow).
func (p *pages) toggleRow(c echo.Context, w workEnv, on bool, in flagstore.Change, next string) error {
	ctx := c.Request().Context()
	a := actor(c)
	key := c.Param("key")
	f, err := p.store.Flags().ToggleFlag(ctx, a, w.id, key, on, in)
	if err == nil {
		msg := turned(f)
		if !isHTMX(c) {
			p.keepFlash(c, msg)
			return c.Redirect(http.StatusSeeOther, localPath(next))
		}
		item := flagstore.FlagListItem{ID: f.ID, Name: f.Name, Key: f.Key, IsEnabled: f.IsEnabled, Tags: f.Tags,
			Serves: f.Serves(), Serving: flagstore.ServingOf(f), Revision: f.Revision, UpdatedAt: f.UpdatedAt,
			LastChange: &flagstore.LastChange{Comment: in.Comment, ChangedAt: f.UpdatedAt}}
		row, err := p.listedRow(c, w, f, item, next)
		if err != nil {
			return err
		}
		c.Set(flashKey, []views.Flash{{Kind: "success", Text: msg}})
		announce(c, msg)
		// Back on the switch, closed: the pop-up's form, kept open with the
		// keyboard in it, would take a second Enter as turning it back.
		focusOn(c, views.ToggleID(row.ID, true))
		return render(c, http.StatusOK, views.FlagRowView(row), views.Flashes(p.flashes(c)))
	}
	values := postedValues(in, map[string]string{"next": next})
	cur, getErr := p.store.Flags().GetFlag(ctx, a, w.id, key)
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
	item := flagstore.FlagListItem{ID: cur.ID, Name: cur.Name, Key: cur.Key, IsEnabled: cur.IsEnabled, Tags: cur.Tags,
		Serves: cur.Serves(), Serving: flagstore.ServingOf(cur), Revision: cur.Revision, UpdatedAt: cur.UpdatedAt}
	row, err := p.listedRow(c, w, cur, item, next)
	if err != nil {
		return err
	}
	if row.Toggle != nil {
		row.Toggle.Form = form
	}
	return render(c, status, views.FlagRowView(row), views.Flashes(p.flashes(c)))
}

// listedRow is a row of flag f (item) of the list drawn again on its own,
// as the whole list draws it: with when SDKs last evaluated the flag and its
// day's trend.
func (p *pages) listedRow(c echo.Context, w workEnv, f flagstore.Flag, item flagstore.FlagListItem, next string) (views.FlagRow, error) {
	insight, err := p.store.SDK().FlagInsightsOf(c.Request().Context(), actor(c), w.id, f)
	if err != nil {
		return views.FlagRow{}, err
	}
	item.LastEvaluatedAt, item.Evaluations = insight.LastEvaluatedAt, insight.Evaluations
	row := p.flagRow(c, w, item, next)
	if item.LastEvaluatedAt != nil && time.Since(*item.LastEvaluatedAt) < sdkdata.TrendHours*time.Hour {
		trends, err := p.flagTrends(c, w, []uuid.UUID{item.ID})
		if err != nil {
			return views.FlagRow{}, err
		}
		row.Trend = trends[item.ID]
	}
	return row, nil
}

func onOffWord(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}
