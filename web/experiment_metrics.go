package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/views"
)

// The Metrics area: what experiments measure in the working environment.
// Its pages call the store's metric operations, which the API's
// experiment-metrics routes call too.

const navMetrics = "metrics"

// metricFields are the metric form's fields the store names in its errors.
var metricFields = []string{"name", "description", "eventName", "eventType", "customEventTrackOption", "customEventUnit",
	"customEventSuccessCriteria"}

// metrics lists the working environment's metrics.
func (p *pages) metrics(c echo.Context) error { return p.metricsPage(c, http.StatusOK, nil) }

// metricsPage renders the Metrics page; create is the form just posted.
func (p *pages) metricsPage(c echo.Context, status int, create *views.MetricForm) error {
	ctx, a := c.Request().Context(), actor(c)
	w, ok := workEnvOf(c)
	vm := views.Metrics{Env: w.view(ok), Query: c.QueryParam("q")}
	if ok {
		number := pageNumber(c.QueryParam("page"))
		list, err := p.store.Experiments().ListMetrics(ctx, a, w.id, experiments.MetricFilter{Name: vm.Query,
			Page: core.Page{Index: number - 1, Size: listPageSize}})
		if err != nil {
			return err
		}
		vm.Pager = pager(list.TotalCount, number, listPageSize, "metric", "metrics", func(n int) string {
			v := url.Values{}
			if vm.Query != "" {
				v.Set("q", vm.Query)
			}
			if n > 1 {
				v.Set("page", strconv.Itoa(n))
			}
			return withQuery("/experiment-metrics", v)
		})
		for _, m := range list.Items {
			vm.Rows = append(vm.Rows, metricRow(m))
		}
		vm.Empty = "No metrics yet: create one for the event your application tracks."
		if vm.Query != "" {
			vm.Empty = "No metrics match."
		}
		if create == nil && p.mayChangeMetrics(c, w) {
			f := p.metricForm(c, p.form(c, "metric", "/experiment-metrics", map[string]string{"eventType": "1",
				"customEventTrackOption": "1", "customEventSuccessCriteria": "1"}), "Create metric", true)
			create = &f
		}
		vm.Create = create
	}
	return p.respond(c, status, "Metrics", navMetrics, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.MetricsPage(vm)
	}, views.MetricListView(vm))
}

// withQuery is path with its query, when there is one.
func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// mayChangeMetrics tells whether to offer the metric forms; the store
// checks again on each change.
func (p *pages) mayChangeMetrics(c echo.Context, w workEnv) bool {
	return p.store.Experiments().AuthorizeMetricChange(c.Request().Context(), actor(c), w.id) == nil
}

func metricHref(id uuid.UUID) string { return "/experiment-metrics/" + id.String() }

func metricRow(m experiments.Metric) views.MetricRow {
	maintainer := m.MaintainerName
	if maintainer == "" {
		maintainer = m.MaintainerEmail
	}
	return views.MetricRow{Name: m.Name, Href: metricHref(m.ID), Kind: metricKind(m.EventType, m.CustomEventTrackOption),
		EventName: metricEvent(m.EventType, m.EventName), Maintainer: maintainer, Description: m.Description}
}

// metricKind says what a metric counts, in FeatBit's words ("Custom event:
// Conversion", "Page view: Conversion").
func metricKind(eventType, track int) string {
	switch eventType {
	case experiments.EventPageView:
		return "Page view: Conversion"
	case experiments.EventClick:
		return "Click: Conversion"
	}
	if track == experiments.TrackNumeric {
		return "Custom event: Numeric"
	}
	return "Custom event: Conversion"
}

// metricEvent is the event a metric counts, as FeatBit's list shows it.
func metricEvent(eventType int, name string) string {
	switch eventType {
	case experiments.EventPageView:
		return "pageview"
	case experiments.EventClick:
		return "click"
	}
	return name
}

// metricForm fills the metric form's choices from its values.
func (p *pages) metricForm(c echo.Context, f views.Form, submit string, editable bool) views.MetricForm {
	choose := func(name string, opts ...views.Option) []views.Option {
		for i := range opts {
			opts[i].Selected = opts[i].Value == f.Values[name]
		}
		return opts
	}
	return views.MetricForm{Form: f, Submit: submit, Editable: editable,
		EventTypes: choose("eventType", views.Option{Value: "1", Label: "Custom event"}, views.Option{Value: "2", Label: "Page view"},
			views.Option{Value: "3", Label: "Click"}),
		TrackOptions: choose("customEventTrackOption", views.Option{Value: "1", Label: "Conversion"},
			views.Option{Value: "2", Label: "Numeric"}),
		Criteria: choose("customEventSuccessCriteria", views.Option{Value: "1", Label: "Higher is better"},
			views.Option{Value: "2", Label: "Lower is better"})}
}

// metricPost is the metric form as posted; the store reads its numbers as FeatBit numbers them.
type metricPost struct {
	Name        string `form:"name"`
	Description string `form:"description"`
	EventName   string `form:"eventName"`
	EventType   string `form:"eventType"`
	Track       string `form:"customEventTrackOption"`
	Unit        string `form:"customEventUnit"`
	Criteria    string `form:"customEventSuccessCriteria"`
}

// input is the store's input, with the signed-in person as its maintainer.
// A number that does not read is sent as -1, which the store names as
// invalid.
func (f metricPost) input(maintainer uuid.UUID) experiments.MetricInput {
	num := func(s string) int {
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	return experiments.MetricInput{Name: f.Name, Description: f.Description, MaintainerUserID: maintainer, EventName: f.EventName,
		EventType: num(f.EventType), CustomEventTrackOption: num(f.Track), CustomEventUnit: f.Unit,
		CustomEventSuccessCriteria: num(f.Criteria)}
}

func (f metricPost) values() map[string]string {
	return map[string]string{"name": f.Name, "description": f.Description, "eventName": f.EventName, "eventType": f.EventType,
		"customEventTrackOption": f.Track, "customEventUnit": f.Unit, "customEventSuccessCriteria": f.Criteria}
}

// createMetric creates a metric and opens its page.
func (p *pages) createMetric(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	var posted metricPost
	if err := bind(c, &posted); err != nil {
		return err
	}
	m, err := p.store.Experiments().CreateMetric(c.Request().Context(), actor(c), w.id, posted.input(actor(c).UserID))
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Metric “%s” created.", m.Name))
		return redirect(c, metricHref(m.ID))
	}
	f := p.form(c, "metric", "/experiment-metrics", posted.values())
	status, err := formProblems(err, &f, metricFields...)
	if err != nil {
		return err
	}
	form := p.metricForm(c, f, "Create metric", true)
	return p.metricsPage(c, status, &form)
}

// pathMetric is the metric the path names, in the working environment.
func (p *pages) pathMetric(c echo.Context) (workEnv, experiments.Metric, error) {
	return inActingEnv(c, p.store.Experiments().GetMetric)
}

// metric shows a metric: its settings and the experiments that use it.
func (p *pages) metric(c echo.Context) error {
	w, m, err := p.pathMetric(c)
	if err != nil {
		return err
	}
	f := p.form(c, "metric", metricHref(m.ID), map[string]string{"name": m.Name, "description": m.Description,
		"eventName": m.EventName, "eventType": strconv.Itoa(m.EventType), "customEventTrackOption": strconv.Itoa(m.CustomEventTrackOption),
		"customEventUnit": m.CustomEventUnit, "customEventSuccessCriteria": strconv.Itoa(m.CustomEventSuccessCriteria)})
	return p.metricPage(c, http.StatusOK, w, m, f)
}

// metricPage renders a metric's page with its form in the state f.
func (p *pages) metricPage(c echo.Context, status int, w workEnv, m experiments.Metric, f views.Form) error {
	may := !m.IsArchived && p.mayChangeMetrics(c, w)
	vm := views.MetricPage{Name: m.Name, Archived: m.IsArchived, Form: p.metricForm(c, f, "Save", may)}
	if may {
		vm.ArchiveHref = metricHref(m.ID) + "/archive"
	}
	rows, err := p.experimentRows(c, w, experiments.ExperimentFilter{Page: core.Page{Size: core.MaxPageSize}}, func(x experiments.Experiment) bool {
		return x.MetricID == m.ID
	})
	if err != nil {
		return err
	}
	vm.Experiments = rows
	shell, err := p.shell(c, m.Name, navMetrics)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.MetricPageView(vm))
}

// updateMetric saves a metric's settings.
func (p *pages) updateMetric(c echo.Context) error {
	w, id, err := actingEnvAndID(c)
	if err != nil {
		return err
	}
	var posted metricPost
	if err := bind(c, &posted); err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	m, err := p.store.Experiments().UpdateMetric(ctx, a, w.id, id, posted.input(a.UserID))
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Metric “%s” saved.", m.Name))
		return redirect(c, metricHref(m.ID))
	}
	f := p.form(c, "metric", metricHref(id), posted.values())
	status, err := formProblems(err, &f, metricFields...)
	if err != nil {
		return err
	}
	if m, err = p.store.Experiments().GetMetric(ctx, a, w.id, id); err != nil {
		return err
	}
	return p.metricPage(c, status, w, m, f)
}

// confirmArchiveMetric asks before a metric is archived.
func (p *pages) confirmArchiveMetric(c echo.Context) error {
	_, m, err := p.pathMetric(c)
	if err != nil {
		return err
	}
	return p.metricConfirm(c, http.StatusOK, m, "")
}

func (p *pages) metricConfirm(c echo.Context, status int, m experiments.Metric, blocked string) error {
	href := metricHref(m.ID)
	vm := views.Confirm{Crumbs: []views.Crumb{{Label: "Metrics", Href: "/experiment-metrics"}, {Label: m.Name, Href: href}},
		Heading:      fmt.Sprintf("Archive the metric “%s”?", m.Name),
		Consequences: []string{"It leaves the Metrics list and can no longer be chosen for an experiment.", "Archived experiments that used it keep their results."},
		Button:       "Archive metric", CancelHref: href, Blocked: blocked}
	if blocked == "" && !m.IsArchived && p.mayChangeMetrics(c, workEnvMust(c)) {
		vm.Action = href + "/archive"
	}
	return p.iamConfirm(c, status, navMetrics, vm)
}

// workEnvMust is the working environment of a page that has checked it.
func workEnvMust(c echo.Context) workEnv {
	w, _ := workEnvOf(c)
	return w
}

// archiveMetric archives a metric; one a live experiment measures stays,
// and the page says why.
func (p *pages) archiveMetric(c echo.Context) error {
	w, m, err := p.pathMetric(c)
	if err != nil {
		return err
	}
	err = p.store.Experiments().ArchiveMetric(c.Request().Context(), actor(c), w.id, m.ID)
	var rerr *core.RuleError
	if errors.As(err, &rerr) {
		return p.metricConfirm(c, http.StatusUnprocessableEntity, m, explain(err).text)
	}
	if err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf("Metric “%s” archived.", m.Name))
	return redirect(c, "/experiment-metrics")
}
