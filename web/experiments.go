package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// The Experiments area: the working environment's experiments, a new one
// on a flag and a metric, and one experiment's page with its results. They
// call the store's experiment operations, which FeatBit's routes in the API
// call too. The results are the store's: FeatBit's figures
// (RefreshIterationResults) beside Bunting's analysis (Analyze, with its
// History); experiment_words.go puts them into sentences.

const (
	navExperiments = "experiments"
	// tabExperiments is a flag's Experimentation tab.
	tabExperiments = "experimentation"
	// flagChoices is how many flags the new experiment's search offers.
	flagChoices = 20
)

// experimentFields are the creation form's fields the store names in its
// errors.
var experimentFields = []string{"featureFlagId", "metricId", "baselineVariationId", "alpha"}

func experimentHref(id uuid.UUID) string { return "/experiments/" + id.String() }

// statusBadge names an experiment's status as FeatBit's UI does.
func statusBadge(status string) views.Badge {
	switch status {
	case experiments.StatusRecording:
		return views.Badge{Label: "Recording", Kind: "green"}
	case experiments.StatusPaused:
		return views.Badge{Label: "Paused", Kind: "amber"}
	}
	return views.Badge{Label: "Not started", Kind: "gray"}
}

// xVariation is how a page names a variation: its name, else its value.
func xVariation(id string, x experiments.Experiment) string {
	for _, v := range x.Variations {
		if v.ID == id {
			if v.Name != "" {
				return v.Name
			}
			return v.Value
		}
	}
	return id
}

func experimentRow(x experiments.Experiment) views.ExperimentRow {
	return views.ExperimentRow{Href: experimentHref(x.ID), FlagName: x.FeatureFlagName, FlagHref: flagHref(x.FeatureFlagKey),
		MetricName: x.MetricName, EventName: metricEvent(x.MetricEventType, x.MetricEventName),
		Kind:     metricKind(x.MetricEventType, x.MetricCustomEventTrackOption),
		Baseline: xVariation(x.BaselineVariationID, x), Status: statusBadge(x.Status)}
}

// experimentRows lists one page of the environment's experiments, keeping
// those keep allows (nil: all).
func (p *pages) experimentRows(c echo.Context, w workEnv, f experiments.ExperimentFilter, keep func(experiments.Experiment) bool) ([]views.ExperimentRow, error) {
	list, err := p.store.Experiments().ListExperiments(c.Request().Context(), actor(c), w.id, f)
	if err != nil {
		return nil, err
	}
	var rows []views.ExperimentRow
	for _, x := range list.Items {
		if keep == nil || keep(x) {
			rows = append(rows, experimentRow(x))
		}
	}
	return rows, nil
}

// experiments shows the Experiments area.
func (p *pages) experiments(c echo.Context) error {
	ctx, a := c.Request().Context(), actor(c)
	w, ok := workEnvOf(c)
	vm := views.Experiments{Env: w.view(ok), MetricsHref: "/experiment-metrics"}
	vm.List.Query = c.QueryParam("q")
	if ok {
		counts, err := p.store.Experiments().StatusCounts(ctx, a, w.id)
		if err != nil {
			return err
		}
		byStatus := map[string]int64{}
		for _, s := range counts {
			byStatus[s.Status] = s.Count
		}
		for _, s := range []string{experiments.StatusRecording, experiments.StatusPaused, experiments.StatusNotStarted} {
			vm.Counts = append(vm.Counts, views.StatusCount{Label: statusBadge(s).Label, TestID: "count-" + s, Count: byStatus[s]})
		}
		number := pageNumber(c.QueryParam("page"))
		list, err := p.store.Experiments().ListExperiments(ctx, a, w.id, experiments.ExperimentFilter{FlagName: vm.List.Query,
			Page: core.Page{Index: number - 1, Size: listPageSize}})
		if err != nil {
			return err
		}
		for _, x := range list.Items {
			vm.List.Rows = append(vm.List.Rows, experimentRow(x))
		}
		vm.List.Pager = pager(list.TotalCount, number, listPageSize, "experiment", "experiments", func(n int) string {
			v := url.Values{}
			if vm.List.Query != "" {
				v.Set("q", vm.List.Query)
			}
			if n > 1 {
				v.Set("page", strconv.Itoa(n))
			}
			return withQuery("/experiments", v)
		})
		vm.List.Empty = "No experiments yet: start one from a flag whose variations you want to compare."
		if vm.List.Query != "" {
			vm.List.Empty = "No experiment's flag matches."
		}
		if p.store.Experiments().AuthorizeExperimentChange(ctx, a, w.id) == nil {
			vm.NewHref = "/experiments/new"
		}
	}
	return p.respond(c, http.StatusOK, "Experiments", navExperiments, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.ExperimentsPage(vm)
	}, views.ExperimentListView(vm.List))
}

// newExperiment chooses a new experiment's flag (?q= searches), then, with
// ?flag=key, its metric and baseline.
func (p *pages) newExperiment(c echo.Context) error {
	w, ok := workEnvOf(c)
	vm := views.ExperimentNew{Env: w.view(ok), Query: c.QueryParam("q")}
	if ok {
		if key := c.QueryParam("flag"); key != "" {
			f, err := p.store.Flags().GetFlag(c.Request().Context(), actor(c), w.id, key)
			if err != nil {
				return err
			}
			create, err := p.experimentCreate(c, w, f, nil)
			if err != nil {
				return err
			}
			vm.Create = create
		} else {
			list, err := p.store.Flags().ListFlags(c.Request().Context(), actor(c), w.id, flagstore.FlagFilter{Name: vm.Query,
				Page: core.Page{Size: flagChoices}})
			if err != nil {
				return err
			}
			for _, f := range list.Items {
				vm.Flags = append(vm.Flags, views.FlagChoice{Name: f.Name, Key: f.Key, Href: "/experiments/new?flag=" + url.QueryEscape(f.Key)})
			}
		}
	}
	return p.respond(c, http.StatusOK, "New experiment", navExperiments, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.ExperimentNewPage(vm)
	})
}

// experimentCreate is the creation form on flag f, with the values just
// posted (nil: fresh); nil when the person may not change its targeting.
func (p *pages) experimentCreate(c echo.Context, w workEnv, f flagstore.Flag, posted *views.Form) (*views.ExperimentCreate, error) {
	if f.IsArchived || !w.rights.Flag(f.Key, f.Tags, false).Permits(access.UpdateFlagTargetingRules) {
		return nil, nil
	}
	form := posted
	if form == nil {
		fresh := p.form(c, "experiment", flagHref(f.Key)+"/experiments", map[string]string{"alpha": "0.05"})
		form = &fresh
	}
	vm := views.ExperimentCreate{Form: *form, FlagName: f.Name, MetricsHref: "/experiment-metrics"}
	metrics, err := p.store.Experiments().ListMetrics(c.Request().Context(), actor(c), w.id,
		experiments.MetricFilter{Page: core.Page{Size: core.MaxPageSize}})
	if err != nil {
		return nil, err
	}
	vm.NoMetrics = len(metrics.Items) == 0
	if form.Values["metricId"] == "" && !vm.NoMetrics {
		form.Values["metricId"] = metrics.Items[0].ID.String() // the newest: most likely the one just made for it
	}
	for _, m := range metrics.Items {
		vm.Metrics = append(vm.Metrics, views.Option{Value: m.ID.String(), Label: m.Name + " (" + metricEvent(m.EventType, m.EventName) + ")",
			Selected: m.ID.String() == form.Values["metricId"]})
	}
	baseline := form.Values["baselineVariationId"]
	if baseline == "" {
		baseline = f.DisabledVariationID // what users get while the flag is off: usually today's behaviour
	}
	for _, v := range f.Variations {
		label := v.Name
		if label == "" {
			label = v.Value
		}
		vm.Baselines = append(vm.Baselines, views.Option{Value: v.ID, Label: label, Selected: v.ID == baseline})
	}
	return &vm, nil
}

// experimentPost is the creation form as posted; its flag is the path's.
type experimentPost struct {
	MetricID string `form:"metricId"`
	Baseline string `form:"baselineVariationId"`
	Alpha    string `form:"alpha"`
}

// input is the store's input. An id or a level that does not read is sent
// as what the store names as missing or invalid.
func (f experimentPost) input(flagID uuid.UUID) experiments.ExperimentInput {
	in := experiments.ExperimentInput{FeatureFlagID: flagID, BaselineVariationID: f.Baseline}
	in.MetricID, _ = uuid.Parse(f.MetricID)
	if s := strings.TrimSpace(f.Alpha); s != "" {
		alpha, err := strconv.ParseFloat(s, 64)
		if err != nil {
			alpha = -1
		}
		in.Alpha = &alpha
	}
	return in
}

// createExperiment creates an experiment on the path's flag and opens its
// page.
func (p *pages) createExperiment(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	f, err := p.store.Flags().GetFlag(ctx, a, w.id, c.Param("key"))
	if err != nil {
		return err
	}
	var posted experimentPost
	if err := bind(c, &posted); err != nil {
		return err
	}
	x, err := p.store.Experiments().CreateExperiment(ctx, a, w.id, posted.input(f.ID))
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Experiment on “%s” measuring “%s” created. Start it to begin counting.", x.FeatureFlagName, x.MetricName))
		return redirect(c, experimentHref(x.ID))
	}
	form := p.form(c, "experiment", flagHref(f.Key)+"/experiments", map[string]string{"metricId": posted.MetricID,
		"baselineVariationId": posted.Baseline, "alpha": posted.Alpha})
	status, err := formProblems(err, &form, experimentFields...)
	if err != nil {
		return err
	}
	create, err := p.experimentCreate(c, w, f, &form)
	if err != nil {
		return err
	}
	vm := views.ExperimentNew{Env: w.view(true), Create: create}
	return p.respond(c, status, "New experiment", navExperiments, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.ExperimentNewPage(vm)
	})
}

// pathExperiment is the experiment the path names, in the working environment.
func (p *pages) pathExperiment(c echo.Context) (workEnv, experiments.Experiment, error) {
	return inActingEnv(c, p.store.Experiments().GetExperiment)
}

// experiment shows an experiment's page.
func (p *pages) experiment(c echo.Context) error { return p.experimentPage(c, http.StatusOK, "") }

// experimentPage renders an experiment's page, or for htmx its main part;
// problem says why a change just failed.
func (p *pages) experimentPage(c echo.Context, status int, problem string) error {
	w, x, err := p.pathExperiment(c)
	if err != nil {
		return err
	}
	m, err := p.experimentMain(c, w, x)
	if err != nil {
		return err
	}
	m.Problem = problem
	title := x.FeatureFlagName + " · " + x.MetricName
	return p.respond(c, status, title, navExperiments, func(shell views.Shell) templ.Component {
		return views.ExperimentPageView(views.ExperimentPage{Shell: shell, Main: m})
	}, views.ExperimentMainView(m))
}

// experimentMain is an experiment's page: its facts, the buttons the
// person may use, and the results of the iteration the address names
// (?iteration=), the latest by default.
func (p *pages) experimentMain(c echo.Context, w workEnv, x experiments.Experiment) (views.ExperimentMain, error) {
	ctx, a := c.Request().Context(), actor(c)
	href := experimentHref(x.ID)
	m := views.ExperimentMain{Crumbs: []views.Crumb{{Label: "Experiments", Href: "/experiments"}}, ID: x.ID.String(),
		FlagName: x.FeatureFlagName, FlagHref: flagHref(x.FeatureFlagKey) + "/experiments", MetricName: x.MetricName,
		EventName: metricEvent(x.MetricEventType, x.MetricEventName), Kind: metricKind(x.MetricEventType, x.MetricCustomEventTrackOption),
		MetricHref: metricHref(x.MetricID), Status: statusBadge(x.Status), Baseline: xVariation(x.BaselineVariationID, x),
		Alpha: strconv.FormatFloat(x.Alpha, 'f', -1, 64), CSRF: csrfToken(c), Archived: x.IsArchived,
		NotStarted: len(x.Iterations) == 0}
	f, err := p.store.Flags().GetFlag(ctx, a, w.id, x.FeatureFlagKey)
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		return m, err
	}
	if err == nil && !x.IsArchived && w.rights.Flag(f.Key, f.Tags, false).Permits(access.UpdateFlagTargetingRules) {
		switch x.Status {
		case experiments.StatusRecording:
			m.Actions = append(m.Actions, views.ExperimentAction{Label: "Stop", Action: href + "/stop", TestID: "experiment-stop"})
		case experiments.StatusPaused:
			m.Actions = append(m.Actions, views.ExperimentAction{Label: "Restart", Action: href + "/start", TestID: "experiment-start", Primary: true})
		default:
			m.Actions = append(m.Actions, views.ExperimentAction{Label: "Start", Action: href + "/start", TestID: "experiment-start", Primary: true})
		}
		if len(x.Iterations) > 0 {
			m.ArchiveDataHref = href + "/archive-data"
		}
		m.ArchiveHref = href + "/archive"
	}
	if len(x.Iterations) == 0 {
		return m, nil
	}
	it := x.Iterations[len(x.Iterations)-1]
	if id, err := uuid.Parse(c.QueryParam("iteration")); err == nil {
		for _, i := range x.Iterations {
			if i.ID == id {
				it = i
			}
		}
	}
	for i := len(x.Iterations) - 1; i >= 0; i-- {
		i := x.Iterations[i]
		m.Iterations = append(m.Iterations, views.Tab{Label: iterationSpan(i), Href: href + "?iteration=" + i.ID.String(),
			TestID: "iteration", Active: i.ID == it.ID})
	}
	m.Period = "This iteration " + iterationWords(it)
	results, err := p.experimentResults(c, w, x, it)
	if err != nil {
		return m, err
	}
	m.Results = &results
	return m, nil
}

// iterationSpan names an iteration by when it ran, for its link.
func iterationSpan(it experiments.Iteration) string {
	from := it.StartTime.UTC().Format(chartTipTime)
	if it.EndTime == nil {
		return from + " – now"
	}
	return from + " – " + it.EndTime.UTC().Format(chartTipTime)
}

// iterationWords says when an iteration ran.
func iterationWords(it experiments.Iteration) string {
	from := it.StartTime.UTC().Format(chartTipTime)
	if it.EndTime == nil {
		return "started " + from + " and is recording."
	}
	return "ran from " + from + " to " + it.EndTime.UTC().Format(chartTipTime) + "."
}

// startExperiment starts an experiment's new iteration.
func (p *pages) startExperiment(c echo.Context) error {
	return p.changeExperiment(c, "started: counting from now", func(w workEnv, id uuid.UUID) error {
		_, err := p.store.Experiments().StartExperiment(c.Request().Context(), actor(c), w.id, id)
		return err
	})
}

// stopExperiment ends an experiment's iteration.
func (p *pages) stopExperiment(c echo.Context) error {
	return p.changeExperiment(c, "stopped: its results are kept", func(w workEnv, id uuid.UUID) error {
		return p.store.Experiments().StopExperiment(c.Request().Context(), actor(c), w.id, id)
	})
}

// changeExperiment makes a change to the experiment of the path and shows
// its page again; a change the store refuses is explained there.
func (p *pages) changeExperiment(c echo.Context, what string, change func(workEnv, uuid.UUID) error) error {
	w, id, err := actingEnvAndID(c)
	if err != nil {
		return err
	}
	err = change(w, id)
	if err != nil {
		class := core.Classify(err)
		if class.Status == http.StatusUnprocessableEntity || class.Status == http.StatusConflict {
			return p.experimentPage(c, class.Status, explain(err).text)
		}
		return err
	}
	return p.changed(c, experimentHref(id), "Experiment "+what+".", func() error { return p.experimentPage(c, http.StatusOK, "") })
}

// experimentRemoval is one of the two removals: its data, or the experiment.
type experimentRemoval struct {
	path, heading, button, done string
	consequences                []string
	remove                      func(s *experiments.Experiments, c echo.Context, envID, id uuid.UUID) error
}

var (
	archiveExperimentData = experimentRemoval{path: "/archive-data", heading: "Remove the data of this experiment?",
		button: "Remove data", done: "The experiment's data is removed; it can be started again.",
		consequences: []string{"Its iterations and their results are archived and no longer shown.", "The experiment stays, not started."},
		remove: func(s *experiments.Experiments, c echo.Context, envID, id uuid.UUID) error {
			return s.ArchiveIterations(c.Request().Context(), actor(c), envID, id)
		}}
	archiveExperiment = experimentRemoval{path: "/archive", heading: "Remove this experiment?", button: "Remove experiment",
		done:         "The experiment is removed.",
		consequences: []string{"It stops counting at once and leaves the Experiments list with its results.", "Its metric may then be archived."},
		remove: func(s *experiments.Experiments, c echo.Context, envID, id uuid.UUID) error {
			return s.ArchiveExperiment(c.Request().Context(), actor(c), envID, id)
		}}
)

// confirmExperiment asks before a removal.
func (p *pages) confirmExperiment(r experimentRemoval) echo.HandlerFunc {
	return func(c echo.Context) error {
		_, x, err := p.pathExperiment(c)
		if err != nil {
			return err
		}
		href := experimentHref(x.ID)
		return p.iamConfirm(c, http.StatusOK, navExperiments, views.Confirm{
			Crumbs:  []views.Crumb{{Label: "Experiments", Href: "/experiments"}, {Label: x.FeatureFlagName + " · " + x.MetricName, Href: href}},
			Heading: r.heading, Consequences: r.consequences, Action: href + r.path, Button: r.button, CancelHref: href})
	}
}

// removeExperiment makes a removal and goes to the experiment's page (its
// data) or the list (the experiment).
func (p *pages) removeExperiment(r experimentRemoval) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, id, err := actingEnvAndID(c)
		if err != nil {
			return err
		}
		if err := r.remove(p.store.Experiments(), c, w.id, id); err != nil {
			return err
		}
		p.keepFlash(c, r.done)
		if r.path == archiveExperiment.path {
			return redirect(c, "/experiments")
		}
		return redirect(c, experimentHref(id))
	}
}

// flagExperiments shows a flag's Experimentation tab.
func (p *pages) flagExperiments(c echo.Context) error {
	return p.flagPage(c, tabExperiments, flagState{})
}

// experimentsTab lists a flag's experiments with their first verdict, and
// offers a new one.
func (p *pages) experimentsTab(c echo.Context, w workEnv, f flagstore.Flag) (views.ExperimentsTab, error) {
	ctx, a := c.Request().Context(), actor(c)
	t := views.ExperimentsTab{ListHref: "/experiments"}
	list, err := p.store.Experiments().ListExperiments(ctx, a, w.id, experiments.ExperimentFilter{FlagID: &f.ID,
		Page: core.Page{Size: core.MaxPageSize}})
	if err != nil {
		return t, err
	}
	for _, x := range list.Items {
		row := experimentRow(x)
		if len(x.Iterations) > 0 {
			an, err := p.store.Experiments().Analyze(ctx, a, w.id, x.ID, nil)
			if err != nil {
				return t, err
			}
			if vs := verdicts(an, x); len(vs) > 0 {
				row.Verdict = &vs[0]
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Create, err = p.experimentCreate(c, w, f, nil)
	return t, err
}
