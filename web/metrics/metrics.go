// Package metrics is Bunting's Prometheus instrumentation: one registry of
// its own (never the client library's global one, so nothing registers
// itself behind the process's back), the metric families the process
// exports, and the handler that serves them in Prometheus' text format.
//
// A nil *Metrics is valid and records nothing: that is what metrics turned
// off (BUNTING_METRICS_ADDR=off) costs the code that reports to it, one nil
// check. The hot paths (OFREP, SDK polling, the API) reach only counters
// and histograms resolved once; label lookups happen on the rare paths.
//
// The packages under sql/ do not import this one: they expose observer
// functions that cmd/internal/server wires to it.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds every family Bunting exports and the registry they are
// registered with.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// routes caches each (route, method, status class)'s resolved counter
	// and histogram, so a request costs a map load, not a label lookup.
	routes sync.Map

	sdkOpen     *prometheus.GaugeVec
	sdkServer   prometheus.Gauge
	sdkClient   prometheus.Gauge
	sdkRefusals *prometheus.CounterVec
	sdkDropped  [numDropped]prometheus.Counter

	evaluations [numSources][numOutcomes]prometheus.Counter

	notifications     prometheus.Counter
	notificationDelay prometheus.Histogram

	webhookDeliveries *prometheus.CounterVec
	webhookQueueAge   prometheus.Histogram

	scheduleRuns *prometheus.CounterVec

	statementErrors *prometheus.CounterVec
}

// New returns the metrics with the Go runtime's and the process's
// collectors registered beside Bunting's own families.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto.With(reg)
	m := &Metrics{reg: reg}

	m.httpRequests = f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_http_requests_total",
		Help: "HTTP requests answered, by surface, Echo route pattern, method and status class."},
		[]string{"surface", "route", "method", "status_class"})
	m.httpDuration = f.NewHistogramVec(prometheus.HistogramOpts{Name: "bunting_http_request_duration_seconds",
		Help:    "Time from a request's arrival to its answer, by surface, route pattern, method and status class.",
		Buckets: prometheus.DefBuckets}, []string{"surface", "route", "method", "status_class"})

	m.sdkOpen = f.NewGaugeVec(prometheus.GaugeOpts{Name: "bunting_sdk_connections_open",
		Help: "SDK streaming connections open on this instance, by kind (server or client SDK)."}, []string{"kind"})
	m.sdkServer, m.sdkClient = m.sdkOpen.WithLabelValues(KindServer), m.sdkOpen.WithLabelValues(KindClient)
	m.sdkRefusals = f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_sdk_connection_refusals_total",
		Help: "SDK streaming upgrades and requests refused past a limit or while shutting down, by kind " +
			"(server, client, or request for the SDK's HTTP endpoints) and the limit that refused them."}, []string{"kind", "reason"})

	dropped := f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_sdk_writes_dropped_total",
		Help: "End users and reported evaluations an SDK secret sent past its own limit, dropped while the request " +
			"was answered as usual, by what (end_users, evaluations)."}, []string{"what"})
	for d := range numDropped {
		m.sdkDropped[d] = dropped.WithLabelValues(Dropped(d).String())
	}

	ev := f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_evaluations_total",
		Help: "Flag evaluations, by source (ofrep_single, ofrep_bulk, insight) and outcome kind."}, []string{"source", "kind"})
	for s := range numSources {
		for o := range numOutcomes {
			m.evaluations[s][o] = ev.WithLabelValues(Source(s).String(), Outcome(o).String())
		}
	}

	m.notifications = f.NewCounter(prometheus.CounterOpts{Name: "bunting_change_notifications_total",
		Help: "Changes pushed to the streaming SDKs of an environment."})
	m.notificationDelay = f.NewHistogram(prometheus.HistogramOpts{Name: "bunting_change_notification_delay_seconds",
		Help:    "Time from a change's write, in its transaction, to its push to the last streaming SDK of the environment.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})

	m.webhookDeliveries = f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by result (success, failure, refused)."}, []string{"result"})
	m.webhookQueueAge = f.NewHistogram(prometheus.HistogramOpts{Name: "bunting_webhook_queue_age_seconds",
		Help:    "Time a new webhook delivery waited in the outbox before its first attempt.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}})

	m.scheduleRuns = f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_schedule_runs_total",
		Help: "Scheduled flag changes applied by this instance, by result (applied, failed)."}, []string{"result"})

	m.statementErrors = f.NewCounterVec(prometheus.CounterOpts{Name: "bunting_db_statement_errors_total",
		Help: "Database statements that failed, by SQLSTATE class (23 for integrity, 40 for serialization, ...), " +
			"canceled for those cut short by their context, connection for those that never got an answer."}, []string{"class"})
	for _, class := range []string{ClassCanceled, ClassConnection} {
		m.statementErrors.WithLabelValues(class)
	}
	for _, r := range []string{"success", "failure", "refused"} {
		m.webhookDeliveries.WithLabelValues(r)
	}
	for _, r := range []string{"applied", "failed"} {
		m.scheduleRuns.WithLabelValues(r)
	}
	return m
}

// Registry is where the families are registered, for collectors that
// arrive later (WatchPool) and for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the families in Prometheus' text format (or OpenMetrics,
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Connection kinds.
const (
	KindServer  = "server"
	KindClient  = "client"
	KindRequest = "request"
)

// SDKConnectionOpened counts a streaming connection of an SDK kind open.
func (m *Metrics) SDKConnectionOpened(server bool) {
	if m != nil {
		m.sdkGauge(server).Inc()
	}
}

// SDKConnectionClosed counts it closed.
func (m *Metrics) SDKConnectionClosed(server bool) {
	if m != nil {
		m.sdkGauge(server).Dec()
	}
}

func (m *Metrics) sdkGauge(server bool) prometheus.Gauge {
	if server {
		return m.sdkServer
	}
	return m.sdkClient
}

// SDKRefused counts a refusal. kind is KindServer, KindClient or
// KindRequest; reason is one of a fixed set of limit names, so the labels
// stay bounded whatever clients send.
func (m *Metrics) SDKRefused(kind, reason string) {
	if m != nil {
		m.sdkRefusals.WithLabelValues(kind, reason).Inc()
	}
}

// Dropped is what an SDK secret sent past its own limit.
type Dropped uint8

// What is dropped past a secret's limits.
const (
	DroppedEndUsers         Dropped = iota // new end users past BUNTING_SDK_END_USERS_PER_SECRET
	DroppedEvaluations                     // reported evaluations past BUNTING_SDK_EVALUATIONS_PER_SECRET
	DroppedExperimentEvents                // experiment events past BUNTING_SDK_EXPERIMENT_EVENTS_PER_SECRET
	numDropped
)

func (d Dropped) String() string {
	return [...]string{"end_users", "evaluations", "experiment_events"}[d]
}

// SDKDropped counts n end users or evaluations a secret sent past its limit.
func (m *Metrics) SDKDropped(d Dropped, n int) {
	if m != nil && n > 0 {
		m.sdkDropped[d].Add(float64(n))
	}
}

// ChangePushed records a change pushed to every streaming SDK of an
// environment, written at written.
func (m *Metrics) ChangePushed(written time.Time) {
	if m == nil {
		return
	}
	m.notifications.Inc()
	if !written.IsZero() {
		m.notificationDelay.Observe(max(0, time.Since(written).Seconds()))
	}
}

// WebhookDelivered counts one attempt by its result: "success",
// "failure" or "refused".
func (m *Metrics) WebhookDelivered(result string) {
	if m != nil {
		m.webhookDeliveries.WithLabelValues(result).Inc()
	}
}

// WebhookQueued records how long a new delivery waited before its first
// attempt.
func (m *Metrics) WebhookQueued(wait time.Duration) {
	if m != nil {
		m.webhookQueueAge.Observe(max(0, wait.Seconds()))
	}
}

// ScheduleRan counts a scheduled change's application: "applied" or
// "failed".
func (m *Metrics) ScheduleRan(result string) {
	if m != nil {
		m.scheduleRuns.WithLabelValues(result).Inc()
	}
}
