package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of requests no route matched, so probes of
// random paths add no series.
const Unmatched = "unmatched"

type routeKey struct {
	route, method string
	class         int
}

type routeMetrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// Request records an answered request: its route is Echo's pattern
// (c.Path()), never the path itself, so the series are bounded by the
// route table. The request logger calls it once the status is final, after
// the error handler answered.
func (m *Metrics) Request(c echo.Context, status int, latency time.Duration) {
	if m == nil {
		return
	}
	route := c.Path()
	method := c.Request().Method
	// Echo leaves the pattern empty when nothing matched; a path that
	// matched only a node of the route tree gets that node's pattern, which
	// the route table bounds as well.
	if route == "" {
		route = Unmatched
	}
	if !knownMethod(method) {
		method = "other"
	}
	key := routeKey{route: route, method: method, class: status / 100}
	rm, ok := m.routes.Load(key)
	if !ok {
		labels := []string{surface(route, c.Request().URL.Path), route, method, statusClass(key.class)}
		rm, _ = m.routes.LoadOrStore(key, &routeMetrics{requests: m.httpRequests.WithLabelValues(labels...),
			duration: m.httpDuration.WithLabelValues(labels...)})
	}
	r := rm.(*routeMetrics)
	r.requests.Inc()
	r.duration.Observe(latency.Seconds())
}

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

func statusClass(class int) string {
	if class < 1 || class > 5 {
		return "other"
	}
	return string(rune('0'+class)) + "xx"
}

// surface names which of Bunting's surfaces a route belongs to: api (the
// management API), sdk (streaming, polling, insight, OFREP), health, or
// pages. An unmatched request is classed by its path's prefix.
func surface(route, path string) string {
	p := route
	if route == Unmatched {
		p = path
	}
	switch {
	case strings.HasPrefix(p, "/api/public/"), strings.HasPrefix(p, "/ofrep/"), p == "/streaming":
		return "sdk"
	case strings.HasPrefix(p, "/api/"):
		return "api"
	case strings.HasPrefix(p, "/health/"):
		return "health"
	case p == "/metrics":
		return "metrics"
	}
	return "pages"
}
