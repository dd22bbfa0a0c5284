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

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/views"
)

// A flag's page: its tabs and what each shows. The forms it posts are
// flag_changes.go's; its scheduled changes flag_pending.go's.

func flagHref(key string) string { return "/flags/" + url.PathEscape(key) }

// flagState carries the forms just posted on a flag's page, to show them
// again with what was typed and their problems; nil ones start fresh.
type flagState struct {
	status int
	// flag is the flag as a change just left it; nil loads it.
	flag                          *flagstore.Flag
	toggle, off                   *views.Form
	texts                         postedTexts
	clone                         *views.Form
	targetingForm, variationsForm *views.Form
	targeting                     *targetingForm
	pending                       *views.Form
	variations                    []views.VariationEdit
	variationType                 string
	tester                        *views.FlagTester
	// trigger is the trigger form just posted; revealed is the URL of a
	// trigger just made or reset, shown this once.
	trigger  *views.Form
	revealed *views.TriggerURL
	// served tells an htmx answer to a change of what the flag serves,
	// made at once: only the regions it changed are drawn (servedRegions).
	served bool
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
		{Label: "Insights", Href: href + "/insights", TestID: "tab-insights"},
		{Label: "Variations", Href: href + "/variations", TestID: "tab-variations"},
		{Label: "Triggers", Href: href + "/triggers", TestID: "tab-triggers"},
		{Label: "Settings", Href: href + "/settings", TestID: "tab-settings"},
		{Label: "History", Href: href + "/history", TestID: "tab-history"},
		{Label: "Code", Href: href + "/code", TestID: "tab-code"},
		{Label: "Experimentation", Href: href + "/experiments", TestID: "tab-experimentation"},
	}
	for i := range tabs {
		tabs[i].Active = strings.ToLower(tabs[i].Label) == active
	}
	return tabs
}

// flagPage renders a flag's page at a tab, or for htmx its main part.
func (p *pages) flagPage(c echo.Context, tab string, st flagState) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	// The targeting tab shows the flag's pending changes, unless a change
	// left them as they were: read with the flag, which is then read once.
	withPending := tab == tabTargeting && !st.served && (st.flag == nil || st.flag.Key != c.Param("key"))
	var f flagstore.Flag
	var pending []governance.PendingChange
	if withPending {
		f, pending, err = p.store.Governance().FlagAndPendingChanges(ctx, a, w.id, c.Param("key"))
	} else {
		f, err = p.pageFlag(c, w, st.flag)
	}
	if err != nil {
		return err
	}
	may := w.rights.Flag(f.Key, f.Tags, f.IsArchived)
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
	insight, err := p.store.SDK().FlagInsightsOf(ctx, a, w.id, f)
	if err != nil {
		return err
	}
	facts := flagstore.FlagStageFacts(f, insight.LastEvaluatedAt)
	stage := flagstore.StageOf(facts, time.Now())
	m.Stage = stageView(stage, flagstore.ReadyToRemove(stage, facts))
	m.Evaluated = "Never evaluated by an SDK"
	if insight.LastEvaluatedAt != nil {
		m.Evaluated = fmt.Sprintf("Evaluated %s, %d %s", evaluatedAgo(insight.LastEvaluatedAt, time.Now()), insight.Evaluations, plural(int(insight.Evaluations), "time", "times"))
	}
	// An archived flag still used in code says so; the count costs a query,
	// so a live flag's page counts only on its Code tab.
	if f.IsArchived {
		if m.CodeRefs, err = p.codeRefsCount(c, w, f.Key); err != nil {
			return err
		}
	}

	switch tab {
	case tabTargeting:
		if !st.served { // else the pending changes are as they were, and not drawn
			if m.Pending, err = p.pendingChanges(c, w, f, may, st.pending, pending); err != nil {
				return err
			}
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
			if t.Editor.Attributes, err = p.store.SDK().EndUserPropertyNames(c.Request().Context(), actor(c), w.id); err != nil {
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
			t.Editor.Part = c.FormValue("part") // the query's on opening, the form's after its buttons
			if !posted {
				t.Editor.Focus = t.Editor.Part // a part's Edit folds the others
			}
			t.Editor.CancelFocus = summaryFocus(t.Editor.Part, &f)
			t.Editor.SuggestHref = suggestHref
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
			posted: st.texts},
			may.Archive, may.Restore, may.Delete, fresh)
		if may.Clone {
			s.Clone = postedOr(st.clone, func() *views.Form {
				form := p.form(c, "flag-clone", href+"/clone", map[string]string{"name": f.Name + " (copy)", "key": f.Key + "-copy"})
				return &form
			})
			// Where changes need approval the copy comes in with a change request.
			if err := p.withRequest(c, w, s.Clone); err != nil {
				return err
			}
		}
		m.Settings = &s
	case tabTriggers:
		// Managing triggers needs what toggling needs, also on an archived flag (to disable or delete them).
		t, err := p.triggersTab(c, f, w.rights.Flag(f.Key, f.Tags, false).Toggle, st)
		if err != nil {
			return err
		}
		m.Triggers = &t
	case tabHistory:
		h, err := p.history(c, w, flagstore.AuditFilter{RefType: refFlag, RefID: f.ID.String()}, href+"/history", "flag-history")
		if err != nil {
			return err
		}
		m.History = &h
	case tabCode:
		code, err := p.codeRefsTab(c, w, f.Key)
		if err != nil {
			return err
		}
		m.Code = &code
		if n := code.Count; n > 0 {
			m.CodeRefs = fmt.Sprintf("%d %s", n, plural(n, "reference", "references"))
		}
	case tabInsights:
		ev, err := p.evaluationsTab(c, w, f, href)
		if err != nil {
			return err
		}
		m.Evaluations = &ev
	case tabExperiments:
		ex, err := p.experimentsTab(c, w, f)
		if err != nil {
			return err
		}
		m.Experiments = &ex
	}

	if st.served {
		return p.servedRegions(c, m)
	}
	return p.respond(c, statusOr(st.status), f.Name, navFlags, func(shell views.Shell) templ.Component {
		return views.FlagPageView(views.FlagPage{Shell: shell, Main: m})
	}, views.FlagMainView(m))
}

// servedRegions answers htmx after a change to what a flag serves, made at
// once, with only what it changed: the targeting summary and the tester
// (the form's own region, #flag-main, is narrowed to them by the HX-
// headers, which htmx obeys over the form's attributes), the heading out of
// band (the state and the stage may have changed), and the message. The
// tabs, the pending changes and the rest of the page are as they were, so
// nothing is read for them.
func (p *pages) servedRegions(c echo.Context, m views.FlagMain) error {
	h := c.Response().Header()
	h.Set("HX-Retarget", "#flag-serving")
	h.Set("HX-Reselect", "#flag-serving")
	h.Set("HX-Reswap", "outerHTML")
	return render(c, http.StatusOK, views.FlagServingView(m), views.FlagHeaderOOB(m), views.Flashes(p.flashes(c)))
}

// pageFlag is the flag of the page's address: changed, as a change just
// left it, else as the store has it.
func (p *pages) pageFlag(c echo.Context, w workEnv, changed *flagstore.Flag) (flagstore.Flag, error) {
	if changed != nil && changed.Key == c.Param("key") {
		return *changed, nil
	}
	return p.store.Flags().GetFlag(c.Request().Context(), actor(c), w.id, c.Param("key"))
}

// editing is the part of a flag's targeting whose editor is open: the one
// whose form was just posted, else the one the address asks for ("?edit="),
// when the person may change it; "" shows the summary alone. An archived
// flag is read-only, so it shows only the summary.
func editing(c echo.Context, st flagState, may flagstore.FlagRights, archived bool) string {
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
func targetingSummary(f flagstore.Flag, names describe.Names, href string, may flagstore.FlagRights) views.TargetingSummary {
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
	// Each Edit gives the keyboard to the first field of what it opens.
	firstTarget := ""
	if len(f.Variations) > 0 {
		firstTarget = "target-" + f.Variations[0].ID
	}
	out := views.TargetingSummary{
		Off: views.SummaryPart{Label: views.PartOff.Summary, Sentence: s.Off, EditHref: edit(views.EditOff, may.OffVariation), Show: "#edit-off",
			ID: summaryEditOff, FocusAfter: "off-variation"},
		Default: views.SummaryPart{Label: views.PartDefault.Summary, Sentence: s.Default, EditHref: targeting("default"), Show: "#edit-default",
			ID: summaryEditDefault, FocusAfter: "serve-default"},
		AddRuleHref: targeting("rules"),
	}
	for i, t := range s.Targets {
		part := views.SummaryPart{Label: views.PartTargets.Summary, Sentence: t.Sentence, EditHref: targeting("targets"), Show: "#edit-targets",
			FocusAfter: firstTarget}
		if i == 0 {
			part.ID = summaryEditTargets
		}
		out.Targets = append(out.Targets, part)
	}
	if len(out.Targets) == 0 {
		out.Targets = []views.SummaryPart{{Label: views.PartTargets.Summary, Sentence: "No individual targets",
			EditHref: targeting("targets"), Show: "#edit-targets", ID: summaryEditTargets, FocusAfter: firstTarget}}
	}
	for i, r := range s.Rules {
		out.Rules = append(out.Rules, views.SummaryPart{Label: describe.RuleLabel(r.Name, i), Sentence: r.Sentence, EditHref: targeting("rules"),
			Show: "#edit-rule-" + strconv.Itoa(i+1), ID: summaryEditRule(i), FocusAfter: ruleFieldID("targeting", i, "name")})
	}
	return out
}

// Ids of the summary's Edit links, which the keyboard returns to when an
// editor closes.
const (
	summaryEditTargets = "summary-edit-targets"
	summaryEditDefault = "summary-edit-default"
	summaryEditOff     = "summary-edit-off"
	summaryAddRule     = "summary-add-rule"
	targetingHeading   = "targeting-heading"
	pendingHeading     = "pending-changes-heading"
)

func summaryEditRule(i int) string { return "summary-edit-rule-" + strconv.Itoa(i+1) }

// summaryFocus is where the keyboard goes when the editor of part closes
// and the summary of flag f shows again: the part's Edit link (for the
// rules, the last rule's, the one added most recently; with none, "Add a
// rule…"), else the summary's heading. A nil f (a change requested, not
// made) or an unknown part gives the heading.
func summaryFocus(part string, f *flagstore.Flag) string {
	switch {
	case f == nil:
		return targetingHeading
	case part == "targets":
		return summaryEditTargets
	case part == "default":
		return summaryEditDefault
	case part == views.EditOff:
		return summaryEditOff
	case part == "rules" && len(f.Rules) > 0:
		return summaryEditRule(len(f.Rules) - 1)
	case part == "rules":
		return summaryAddRule
	}
	return targetingHeading
}

// maxSegmentChoices bounds the segments the rule editor lists to choose from.
const maxSegmentChoices = 1000

// segmentChoices are the segments flag conditions may name: those of the
// environment that are not archived, and those the rules already name.
func (p *pages) segmentChoices(c echo.Context, w workEnv, rules []ruleForm) ([]views.Option, error) {
	ctx := c.Request().Context()
	a := actor(c)
	var out []views.Option
	for page := 0; page*core.MaxPageSize < maxSegmentChoices; page++ {
		list, err := p.store.Segments().ListSegments(ctx, a, w.id, segments.SegmentFilter{Page: core.Page{Index: page, Size: core.MaxPageSize}})
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
					!slices.Contains(missing, id) && len(missing) < segments.MaxSegmentIDs {
					missing = append(missing, id)
				}
			}
		}
	}
	if len(missing) > 0 {
		named, err := p.store.Segments().SegmentsByIDs(ctx, a, w.id, missing)
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
