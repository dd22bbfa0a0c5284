package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bunting-flags/bunting/web/metrics"
)

// TestRequestLabelsAreBounded: the route label is the pattern, paths no
// route matched share one series, and unusual methods share "other".
func TestRequestLabelsAreBounded(t *testing.T) {
	m := metrics.New()
	e := echo.New()
	e.GET("/api/v1/envs/:envId/feature-flags/:key", func(c echo.Context) error { return nil })
	observe := func(method, path string, status int) {
		c := e.NewContext(httptest.NewRequest(method, path, nil), httptest.NewRecorder())
		e.Router().Find(method, path, c)
		m.Request(c, status, time.Millisecond)
	}
	for i := range 50 {
		observe("GET", "/api/v1/envs/e/feature-flags/flag-"+strings.Repeat("x", i), http.StatusOK)
		observe("GET", "/probe/"+strings.Repeat("y", i), http.StatusNotFound)
	}
	observe("BREW", "/api/v1/envs/e/feature-flags/f", http.StatusMethodNotAllowed)
	if n := testutil.CollectAndCount(m.Registry(), "bunting_http_requests_total"); n != 3 {
		t.Errorf("%d series of bunting_http_requests_total, want 3 (the route, unmatched, other method)", n)
	}
	want := `
# HELP bunting_http_requests_total HTTP requests answered, by surface, Echo route pattern, method and status class.
# TYPE bunting_http_requests_total counter
bunting_http_requests_total{method="GET",route="/api/v1/envs/:envId/feature-flags/:key",status_class="2xx",surface="api"} 50
bunting_http_requests_total{method="GET",route="unmatched",status_class="4xx",surface="pages"} 50
bunting_http_requests_total{method="other",route="/api/v1/envs/:envId/feature-flags/:key",status_class="4xx",surface="api"} 1
`
	if err := testutil.CollectAndCompare(m.Registry(), strings.NewReader(want), "bunting_http_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestNilRecordsNothing: metrics off is a nil *Metrics, and every report
// to it is a no-op.
func TestNilRecordsNothing(t *testing.T) {
	var m *metrics.Metrics
	m.Request(echo.New().NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder()), 200, time.Millisecond)
	m.Evaluated(metrics.OFREPBulk, metrics.Served, 10)
	m.SDKConnectionOpened(true)
	m.SDKRefused(metrics.KindServer, "connections")
	m.SDKDropped(metrics.DroppedEndUsers, 3)
	m.ChangePushed(time.Now())
	m.WebhookDelivered("success")
	m.WebhookQueued(time.Second)
	m.ScheduleRan("applied")
	m.WatchPool(nil)
	if m.StatementTracer() != nil {
		t.Error("a tracer from nil metrics")
	}
}

// BenchmarkRequest is what counting costs one request of a hot route: its
// counter and histogram, found by route, method and status class.
func BenchmarkRequest(b *testing.B) {
	m := metrics.New()
	e := echo.New()
	e.POST("/ofrep/v1/evaluate/flags/:key", func(c echo.Context) error { return nil })
	c := e.NewContext(httptest.NewRequest("POST", "/ofrep/v1/evaluate/flags/checkout", nil), httptest.NewRecorder())
	e.Router().Find("POST", "/ofrep/v1/evaluate/flags/checkout", c)
	b.ReportAllocs()
	for b.Loop() {
		m.Request(c, http.StatusOK, time.Millisecond)
	}
}

// BenchmarkEvaluated is what counting a request's evaluations costs.
func BenchmarkEvaluated(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.Evaluated(metrics.OFREPSingle, metrics.Served, 1)
	}
}
