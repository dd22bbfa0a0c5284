package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/views"
)

func flagHref(key string) string { return "/flags/" + url.PathEscape(key) }

// flagState carries the forms just posted on a flag's page, to show them
// again with what was typed and their problems; nil ones start fresh.
type flagState struct {
	status                               int
	toggle, off, name, description, tags *views.Form
	clone                                *views.Form
	targetingForm, variationsForm        *views.Form
	targeting                            *targetingForm
	pending                              *views.Form
	variations                           []views.VariationEdit
	variationType                        string
	tester                               *views.FlagTester
	// trigger is the trigger form just posted; revealed is the URL of a
	// trigger just made or reset, shown this once.
	trigger  *views.Form
	revealed *views.TriggerURL
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
		{Label: "Triggers", Href: href + "/triggers", TestID: "tab-triggers"},
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
	rights, err := p.store.EnvRights(ctx, a, w.id)
	if err != nil {
		return err
	}
	may := rights.Flag(f.Key, f.Tags, f.IsArchived)
	href := flagHref(f.Key)
	fresh := func(id, action string, values map[string]string) *views.Form {
		if values == nil {
			values = map[string]string{}
		}
		values["revision"] = f.Revision.String()
		form := p.form(c, id, action, values)
		return &form
	}
	m := views.FlagMain{Crumbs: []views.Crumb{{Label: "Feature flags", Href: "/flags"}}, Name: f.Name, Key: f.Key,
		Description: f.Description, Type: f.VariationType, On: f.IsEnabled, Archived: f.IsArchived, Tabs: flagTabs(href, tab),
		CompareHref: href + "/compare", CopyHref: "/flags/copy?flag=" + f.ID.String()}
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
		if m.Pending, err = p.pendingChanges(c, w, f, may, st.pending); err != nil {
			return err
		}
		t := views.FlagTargeting{On: f.IsEnabled, Editing: editing(c, st, may, f.IsArchived)}
		if may.Toggle {
			if st.toggle == nil {
				st.toggle = fresh("flag-toggle", href+"/toggle", nil)
			}
			if err := p.withRequest(c, w, st.toggle); err != nil {
				return err
			}
			t.Toggle = &views.FlagToggle{Form: *st.toggle, On: f.IsEnabled, CommentRequired: w.requireComment}
		}
		off := f.DisabledVariationID
		if st.off == nil {
			st.off = fresh("off-variation", href+"/off-variation", nil)
		} else {
			off = st.off.Values["disabledVariationId"]
		}
		if err := p.withRequest(c, w, st.off); err != nil {
			return err
		}
		t.Off = views.OffVariation{Form: *st.off, Editable: may.OffVariation, CommentRequired: w.requireComment}
		for _, v := range f.Variations {
			t.Off.Options = append(t.Off.Options, views.Option{Value: v.ID, Label: variationLabel(v), Selected: v.ID == off})
			if v.ID == f.DisabledVariationID {
				t.Off.Current = variationLabel(v)
			}
		}
		t.CloseHref = href
		names, err := p.segmentNames(c, w, describe.FlagSegmentIDs(f))
		if err != nil {
			return err
		}
		t.Summary = targetingSummary(f, names, href, may)
		if t.Editing == views.EditTargeting {
			// A form just posted (an edit button, a refused save) shows every part.
			posted := st.targeting != nil || st.targetingForm != nil
			tf := targetingFromFlag(f)
			if st.targeting != nil {
				tf = *st.targeting
			}
			segments, err := p.segmentChoices(c, w, tf.rules)
			if err != nil {
				return err
			}
			t.Editor = tf.editorView(f, segments)
			if t.Editor.Attributes, err = p.store.EndUserPropertyNames(c.Request().Context(), actor(c), w.id); err != nil {
				return err
			}
			if st.targetingForm == nil {
				st.targetingForm = fresh("targeting", href+"/targeting", nil)
			}
			if err := p.withRequest(c, w, st.targetingForm); err != nil {
				return err
			}
			t.Editor.Form = *st.targetingForm
			t.Editor.Now = when(time.Now())
			t.Editor.CommentRequired = w.requireComment
			t.Editor.Editable = may.Targeting
			t.Editor.Unsaved = st.targeting != nil
			if !posted {
				t.Editor.Focus = c.QueryParam("part") // a part's Edit folds the others
			}
		}
		m.Targeting = &t
		if t.Editing != "" {
			break // the tester waits below the summary, not below an editor
		}
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
		if err := p.withRequest(c, w, st.variationsForm); err != nil {
			return err
		}
		m.Variations = &views.VariationsEditor{Form: *st.variationsForm, Editable: may.Variations,
			CommentRequired: w.requireComment, Types: variationTypes(typ), Variations: vars}
	case tabSettings:
		s := views.SettingsTab{CommentRequired: w.requireComment, Archived: f.IsArchived, Facts: []views.Fact{
			{Label: "Key", Value: f.Key, Code: true}, {Label: "Type", Value: f.VariationType},
			{Label: "Created", Value: when(f.CreatedAt)}, {Label: "Updated", Value: when(f.UpdatedAt)}}}
		s = settingsTab(s, "flag", href, settingsTexts{name: f.Name, description: f.Description, tags: strings.Join(f.Tags, ", "),
			mayName: may.Name, mayDescription: may.Description, mayTags: may.Tags,
			postedName: st.name, postedDescription: st.description, postedTags: st.tags},
			may.Archive, may.Restore, may.Delete, fresh)
		if may.Clone {
			s.Clone = postedOr(st.clone, func() *views.Form {
				form := p.form(c, "flag-clone", href+"/clone", map[string]string{"name": f.Name + " (copy)", "key": f.Key + "-copy"})
				return &form
			})
		}
		m.Settings = &s
	case tabTriggers:
		// Managing triggers needs what toggling needs, also on an archived flag (to disable or delete them).
		t, err := p.triggersTab(c, f, rights.Flag(f.Key, f.Tags, false).Toggle, st)
		if err != nil {
			return err
		}
		m.Triggers = &t
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

// editing is the part of a flag's targeting whose editor is open: the one
// whose form was just posted, else the one the address asks for ("?edit="),
// when the person may change it; "" shows the summary alone. An archived
// flag is read-only, so it shows only the summary.
func editing(c echo.Context, st flagState, may store.FlagRights, archived bool) string {
	part := c.QueryParam("edit")
	switch {
	case st.targeting != nil || st.targetingForm != nil:
		part = views.EditTargeting
	case st.off != nil:
		part = views.EditOff
	}
	switch {
	case archived:
		return ""
	case part == views.EditTargeting && may.Targeting, part == views.EditOff && may.OffVariation:
		return part
	}
	return ""
}

// targetingSummary says what a flag serves part by part, each part with the
// address of its editor when the person may change it.
func targetingSummary(f store.Flag, names describe.Names, href string, may store.FlagRights) views.TargetingSummary {
	s := describe.FlagSummary(f, names)
	edit := func(part string, allowed bool) string {
		if !allowed || f.IsArchived {
			return ""
		}
		return href + "?edit=" + part
	}
	targeting := func(part string) string {
		if e := edit(views.EditTargeting, may.Targeting); e != "" {
			return e + "&part=" + part
		}
		return ""
	}
	out := views.TargetingSummary{
		Off:         views.SummaryPart{Label: "When off", Sentence: s.Off, EditHref: edit(views.EditOff, may.OffVariation), Show: "#edit-off"},
		Default:     views.SummaryPart{Label: "Default rule", Sentence: s.Default, EditHref: targeting("default"), Show: "#edit-default"},
		AddRuleHref: targeting("rules"),
	}
	for _, t := range s.Targets {
		out.Targets = append(out.Targets, views.SummaryPart{Label: "Individual targets", Sentence: t.Sentence,
			EditHref: targeting("targets"), Show: "#edit-targets"})
	}
	if len(out.Targets) == 0 {
		out.Targets = []views.SummaryPart{{Label: "Individual targets", Sentence: "No individual targets",
			EditHref: targeting("targets"), Show: "#edit-targets"}}
	}
	for i, r := range s.Rules {
		out.Rules = append(out.Rules, views.SummaryPart{Label: describe.RuleLabel(r.Name, i), Sentence: r.Sentence, EditHref: targeting("rules"),
			Show: "#edit-rule-" + strconv.Itoa(i+1)})
	}
	return out
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
	if c.Get(requestedKey) != nil {
		message = requestedMessage
	}
	if err == nil {
		return p.changed(c, href, message, func() error { return p.flagPage(c, tab, flagState{}) })
	}
	f := p.form(c, "", "", nil)
	st := form(w, &f)
	failure := err
	status, err := changeProblems(err, &f, append(fields, "reason", "reviewers")...)
	if err != nil {
		return err
	}
	if tab == tabVariations && stillServed(failure) {
		f.Error = "A variation you removed is still served by the targeting or as the off variation. Change those first, then remove it."
	}
	st.status = status
	return p.flagPage(c, tab, st)
}

// setFlagOffVariation chooses what the flag serves when off.
func (p *pages) setFlagOffVariation(c echo.Context) error {
	var in store.OffVariationInput
	if err := bind(c, &in); err != nil {
		return err
	}
	return p.flagChange(c, tabTargeting, "Off variation saved.", func(w workEnv, key string) error {
		return p.requestChange(c, w, key, store.FlagChangeRequestInput{OffVariationID: &in.OffVariationID}, func() error {
			_, err := p.store.SetFlagOffVariation(c.Request().Context(), actor(c), w.id, key, in)
			return err
		})
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
		form := p.form(c, "targeting", href+"/targeting", postedValues(ch, map[string]string{
			"title": c.FormValue("title"), "scheduledTime": c.FormValue("scheduledTime")}))
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
	shown := func(w workEnv, form *views.Form) flagState {
		*form = *formState()
		return flagState{targeting: &tf, targetingForm: form}
	}
	if c.FormValue("schedule") != "" {
		at := formTime(c.FormValue("scheduledTime"))
		message := "Targeting change scheduled."
		if at != nil {
			message = "Targeting change scheduled for " + when(*at) + "."
		}
		sin := store.ScheduleInput{DraftInput: store.DraftInput{Targeting: in.Targeting, Change: ch},
			Title: c.FormValue("title"), ScheduledTime: at}
		return p.flagChange(c, tabTargeting, message, func(w workEnv, key string) error {
			// Where changes need approval, the schedule waits for a request's.
			if w.approvals > 0 {
				reviewers, err := formIDs(c, "reviewers")
				if err != nil {
					return err
				}
				sin.WithChangeRequest, sin.Reason, sin.Reviewers = true, c.FormValue("reason"), reviewers
			}
			_, err := p.store.CreateFlagSchedule(c.Request().Context(), actor(c), w.id, key, sin)
			return err
		}, shown, "targetUsers", "rules", "fallthrough", "title", "scheduledTime")
	}
	return p.flagChange(c, tabTargeting, "Targeting saved.", func(w workEnv, key string) error {
		return p.requestChange(c, w, key, store.FlagChangeRequestInput{Targeting: in.Targeting}, func() error {
			_, err := p.store.SetFlagTargeting(c.Request().Context(), actor(c), w.id, key, in)
			return err
		})
	}, shown, "targetUsers", "rules", "fallthrough")
}

// formTime reads a datetime-local field as UTC ("2006-01-02T15:04", seconds
// optional); nil when empty or not a time, which the store calls missing.
func formTime(s string) *time.Time {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), time.UTC); err == nil {
			return &t
		}
	}
	return nil
}

// pendingChanges shows a flag's scheduled changes in words, each with a
// cancel button when the person may make the change it would make.
func (p *pages) pendingChanges(c echo.Context, w workEnv, f store.Flag, may store.FlagRights, posted *views.Form) (*views.PendingChanges, error) {
	list, err := p.store.FlagPendingChanges(c.Request().Context(), actor(c), w.id, f.Key)
	if err != nil {
		return nil, err
	}
	out := &views.PendingChanges{Form: p.form(c, "pending", "", nil)}
	if posted != nil {
		out.Form = *posted
	}
	for _, pc := range list {
		names, err := p.segmentNames(c, w, describe.SegmentIDs(refFlag, pc.DataChange.Previous, pc.DataChange.Current))
		if err != nil {
			return nil, err
		}
		item := views.PendingChangeItem{Title: pc.ScheduleTitle, When: "Applies at " + when(pc.ScheduledTime), Who: pc.CreatorName,
			Note: pc.Note, Comment: pc.Comment, FailureReason: pc.FailureReason,
			Lines: describe.Change(refFlag, pc.DataChange.Previous, pc.DataChange.Current, names)}
		if pc.ChangeRequestID != nil {
			item.Href = changeRequestHref(*pc.ChangeRequestID)
			item.Status = requestStatus(pc.Status)
			if pc.Type == store.PendingChangeRequest {
				item.Title, item.When, item.Comment = "Change request: "+pc.ChangeRequestReason, "Requested "+when(pc.CreatedAt), ""
				out.Items = append(out.Items, item)
				continue // withdrawn on its own page, by its author
			}
			item.Status = "Scheduled · " + item.Status
		}
		var base, target store.Flag
		if json.Unmarshal(pc.DataChange.Previous, &base) == nil && json.Unmarshal(pc.DataChange.Current, &target) == nil &&
			!f.IsArchived && pc.ChangeRequestID == nil && !slices.ContainsFunc(store.ChangeActions(base, target), func(a access.Action) bool { return !may.Permits(a) }) {
			item.CancelAction = flagHref(f.Key) + "/schedules/" + pc.ID.String() + "/cancel"
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// cancelSchedule cancels one of a flag's scheduled changes, or dismisses a
// failed one.
func (p *pages) cancelSchedule(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return store.ErrNotFound
	}
	return p.flagChange(c, tabTargeting, "Scheduled change cancelled.", func(w workEnv, key string) error {
		return p.store.CancelFlagSchedule(c.Request().Context(), actor(c), w.id, id)
	}, func(w workEnv, form *views.Form) flagState {
		form.ID = "pending"
		return flagState{pending: form}
	})
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
		return p.requestChange(c, w, key, store.FlagChangeRequestInput{VariationType: in.VariationType, Variations: in.Variations}, func() error {
			_, err := p.store.SetFlagVariations(c.Request().Context(), actor(c), w.id, key, in)
			return err
		})
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
	rights, err := p.store.EnvRights(c.Request().Context(), a, w.id)
	if err != nil {
		return err
	}
	if !rights.Flag(f.Key, f.Tags, f.IsArchived).Permits(l.action) {
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
	for i, line := range strings.Split(values["properties"], "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(name) == "" {
			t.Form.Errors = map[string]string{"properties": fmt.Sprintf("Line %d is not name=value: %q", i+1, strings.TrimSpace(line))}
			return p.flagPage(c, tabTargeting, flagState{status: http.StatusBadRequest, tester: t})
		}
		u.CustomizedProperties = append(u.CustomizedProperties, eval.UserProperty{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	ctx := c.Request().Context()
	ev, err := p.store.EvaluateFlag(ctx, actor(c), w.id, key, u)
	status, err := formProblems(err, &t.Form, "keyId")
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		f, err := p.store.GetFlag(ctx, actor(c), w.id, key)
		if err != nil {
			return err
		}
		names, err := p.segmentNames(c, w, describe.FlagSegmentIDs(f))
		if err != nil {
			return err
		}
		t.Result = &views.FlagTestResult{Variation: "nothing", Reason: ev.Reason, Why: describe.Explain(f, u, ev, names)}
		if ev.Variation != nil {
			t.Result.Variation, t.Result.Value = variationLabel(*ev.Variation), ev.Variation.Value
		}
	}
	return p.flagPage(c, tabTargeting, flagState{status: status, tester: t})
}
