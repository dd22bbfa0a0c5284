package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestMetricsFollowEveryKindOfTraffic runs the server as `bunting serve`
// does (server.Serve), drives each kind of traffic at it, scrapes /metrics
// from its own loopback listener, parses the answer with Prometheus' text
// parser, and checks that every family moved: requests by route, SDK
// connections open and refused, evaluations by source, a change pushed to a
// connected SDK, a webhook delivered, a schedule applied, the database pool
// and a failed statement, the Go runtime and the process. The main listener
// has no /metrics.
func TestMetricsFollowEveryKindOfTraffic(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	setup, err := pgxpool.New(context.Background(), dbURL)
	must(t, err)
	t.Cleanup(setup.Close)
	// The setup store is another instance on the same database: what it
	// changes reaches the server through the change feed and the outboxes.
	s := newSiteWith(t, setup, core.Options{WebhookAllowPrivateNetworks: true})
	s.listen()
	ctx := context.Background()
	owner := s.ownerActor()
	env := s.project("shop")
	_, err = s.st.Flags().CreateFlag(ctx, owner, env.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	must(t, err)
	delivered := make(chan struct{}, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case delivered <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(receiver.Close)
	hookSecret := "metrics-webhook-secret"
	_, err = s.st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "metrics hook", URL: receiver.URL,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: []string{webhooks.EventFlagToggled},
		Secret: &hookSecret, IsActive: true})
	must(t, err)

	addr, metricsAddr := freeAddr(t), freeAddr(t)
	cfg, err := server.LoadConfig(func(name string) string {
		return map[string]string{
			"BUNTING_ADDR": addr, "BUNTING_DATABASE_URL": dbURL, "BUNTING_SECRET_KEY": strings.Repeat("test-secret-", 4),
			"BUNTING_ADMIN_EMAIL": ownerEmail, "BUNTING_ADMIN_PASSWORD": ownerPassword, "BUNTING_PASSWORD_COST": "4",
			"BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "BUNTING_METRICS_ADDR": metricsAddr,
			// One streaming connection in all: the second is refused.
			"BUNTING_SDK_CONNECTIONS": "1",
		}[name]
	})
	must(t, err)
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- server.Serve(serveCtx, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + addr
	waitFor(t, "the server to answer", func() bool {
		res, err := http.Get(base + "/health/readiness")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})

	call := func(method, path, auth, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		must(t, err)
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		must(t, err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	serverSecret := secret(env, core.SecretServer)
	for _, c := range []struct {
		method, path, auth, body string
		want                     int
	}{
		{"GET", "/api/v1/projects", s.owner, "", http.StatusOK},
		{"GET", "/no-such-page-" + fmt.Sprint(time.Now().UnixNano()), "", "", http.StatusNotFound},
		{"POST", "/ofrep/v1/evaluate/flags/checkout", serverSecret, `{"context":{"targetingKey":"u1"}}`, http.StatusOK},
		{"POST", "/ofrep/v1/evaluate/flags/nope", serverSecret, `{"context":{"targetingKey":"u1"}}`, http.StatusNotFound},
		{"POST", "/ofrep/v1/evaluate/flags", serverSecret, `{"context":{"targetingKey":"u2"}}`, http.StatusOK},
		{"POST", "/api/public/insight/track", serverSecret,
			`[{"user":{"keyId":"i1"},"variations":[{"featureFlagKey":"checkout","variation":{"id":"x"}}]}]`, http.StatusOK},
		// A flag whose key is taken: the insert fails in the database
		// (unique_violation, SQLSTATE class 23) and answers a conflict.
		{"POST", "/api/v1/envs/" + env.ID.String() + "/feature-flags", s.owner, `{"name":"Again","key":"checkout"}`, 0},
	} {
		if got := call(c.method, c.path, c.auth, c.body); c.want != 0 && got != c.want {
			t.Fatalf("%s %s: %d, want %d", c.method, c.path, got, c.want)
		}
	}

	// A server SDK connects; a second is refused past the cap.
	dial := func() (*websocket.Conn, int) {
		u := "ws://" + addr + "/streaming?type=server&token=" + url.QueryEscape(sdk.Token(serverSecret, time.Now(), 10))
		ws, res, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(u, nil)
		if err != nil {
			if res == nil {
				t.Fatalf("dial: %v", err)
			}
			return nil, res.StatusCode
		}
		t.Cleanup(func() { ws.Close() })
		return ws, http.StatusSwitchingProtocols
	}
	ws, status := dial()
	if ws == nil {
		t.Fatalf("first streaming connection: %d", status)
	}
	if _, status := dial(); status != http.StatusServiceUnavailable {
		t.Fatalf("second streaming connection: %d, want 503 past the cap", status)
	}
	pushed := make(chan struct{}, 16)
	go func() {
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
			select {
			case pushed <- struct{}{}:
			default:
			}
		}
	}()
	// The SDK connection is registered once its upgrade answered; changes
	// made from now on are pushed to it.
	waitFor(t, "the connection to count as open", func() bool {
		return value(scrape(t, metricsAddr), "bunting_sdk_connections_open", "kind", "server") == 1
	})

	// A change pushed to the SDK and delivered to the webhook, and a
	// schedule that turns the flag back off.
	_, err = s.st.Flags().ToggleFlag(ctx, owner, env.ID, "checkout", true, flagstore.Change{})
	must(t, err)
	_, err = s.st.Governance().CreateFlagSchedule(ctx, owner, env.ID, "checkout", scheduleInput(t, time.Now().Add(time.Second)))
	must(t, err)
	for what, ch := range map[string]chan struct{}{"the push to the SDK": pushed, "the webhook delivery": delivered} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s", what)
		}
	}

	checks := []struct {
		what string
		ok   func(families) bool
	}{
		{"API requests by route", func(f families) bool {
			return value(f, "bunting_http_requests_total", "surface", "api", "route", "/api/v1/projects", "method", "GET", "status_class", "2xx") >= 1
		}},
		{"request durations", func(f families) bool {
			return count(f, "bunting_http_request_duration_seconds", "route", "/ofrep/v1/evaluate/flags/:key", "status_class", "2xx") >= 1
		}},
		{"unmatched paths in one series", func(f families) bool {
			return value(f, "bunting_http_requests_total", "route", metrics.Unmatched, "status_class", "4xx") >= 1
		}},
		{"SDK connections open", func(f families) bool {
			return value(f, "bunting_sdk_connections_open", "kind", "server") == 1
		}},
		{"SDK connections refused", func(f families) bool {
			return value(f, "bunting_sdk_connection_refusals_total", "kind", "server", "reason", "connections") >= 1
		}},
		{"OFREP single evaluations", func(f families) bool {
			return value(f, "bunting_evaluations_total", "source", "ofrep_single", "kind", "served") == 1 &&
				value(f, "bunting_evaluations_total", "source", "ofrep_single", "kind", "flag_not_found") == 1
		}},
		{"OFREP bulk evaluations", func(f families) bool {
			return value(f, "bunting_evaluations_total", "source", "ofrep_bulk", "kind", "served") == 1
		}},
		{"insight evaluations", func(f families) bool {
			return value(f, "bunting_evaluations_total", "source", "insight", "kind", "served") == 1
		}},
		{"change notifications and their delay", func(f families) bool {
			return value(f, "bunting_change_notifications_total") >= 1 && count(f, "bunting_change_notification_delay_seconds") >= 1
		}},
		{"webhook deliveries and queue age", func(f families) bool {
			return value(f, "bunting_webhook_deliveries_total", "result", "success") >= 1 && count(f, "bunting_webhook_queue_age_seconds") >= 1
		}},
		{"schedule runs", func(f families) bool {
			return value(f, "bunting_schedule_runs_total", "result", "applied") >= 1
		}},
		{"the database pool", func(f families) bool {
			return value(f, "bunting_db_pool_acquires_total") >= 1 && value(f, "bunting_db_pool_max_connections") >= 1 &&
				value(f, "bunting_db_pool_total_connections") >= 1 && value(f, "bunting_db_pool_acquire_waits_total") >= 1 &&
				has(f, "bunting_db_pool_acquired_connections") && has(f, "bunting_db_pool_idle_connections") &&
				has(f, "bunting_db_pool_acquire_wait_seconds_total")
		}},
		{"failed statements", func(f families) bool {
			return value(f, "bunting_db_statement_errors_total", "class", "23") >= 1
		}},
		{"the Go runtime and the process", func(f families) bool {
			return value(f, "go_goroutines") >= 1 && value(f, "process_resident_memory_bytes") >= 1
		}},
	}
	var last families
	var failing []string
	ok := poll(30*time.Second, func() bool {
		last, failing = scrape(t, metricsAddr), nil
		for _, c := range checks {
			if !c.ok(last) {
				failing = append(failing, c.what)
			}
		}
		return len(failing) == 0
	})
	if !ok {
		t.Fatalf("these did not move: %s\n%s", strings.Join(failing, "; "), dump(last, "bunting_"))
	}
	if got := call("GET", "/metrics", "", ""); got != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener: %d, want 404", got)
	}
}

// TestMetricsOnTheMainListener: with BUNTING_METRICS_ADDR=main, /metrics
// answers on the main listener to the token only; by default it is not
// there.
func TestMetricsOnTheMainListener(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const token = "a-metrics-token-of-some-length"
	on := s.handler(server.Config{MetricsAddr: server.MetricsMain, MetricsToken: token, Metrics: metrics.New()}, slog.New(slog.DiscardHandler))
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer " + token, http.StatusOK}} {
		rec := send(on, "GET", "/metrics", "", "Authorization", c.auth)
		if rec.Code != c.want {
			t.Errorf("GET /metrics with %q: %d, want %d", c.auth, rec.Code, c.want)
		}
		if c.want == http.StatusOK && !strings.Contains(rec.Body.String(), "bunting_http_requests_total") {
			t.Errorf("GET /metrics with the token: no families in %.500s", rec.Body)
		}
	}
	off := s.handler(server.Config{Metrics: metrics.New(), MetricsAddr: server.DefaultMetricsAddr}, slog.New(slog.DiscardHandler))
	if rec := send(off, "GET", "/metrics", "", "Authorization", "Bearer "+token); rec.Code != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener by default: %d, want 404", rec.Code)
	}
}

// TestMetricsConfig: the metrics address is loopback by default; off and
// main are the other words, and main needs a token.
func TestMetricsConfig(t *testing.T) {
	t.Parallel()
	load := func(vars map[string]string) (server.Config, error) {
		return server.LoadConfig(func(name string) string { return vars[name] })
	}
	cfg, err := load(nil)
	if err != nil || cfg.MetricsAddr != "127.0.0.1:9464" {
		t.Fatalf("default: %q %v, want 127.0.0.1:9464", cfg.MetricsAddr, err)
	}
	for _, v := range []map[string]string{
		{"BUNTING_METRICS_ADDR": "off"},
		{"BUNTING_METRICS_ADDR": ":9464"},
		{"BUNTING_METRICS_ADDR": "main", "BUNTING_METRICS_TOKEN": strings.Repeat("t", 16)},
	} {
		if cfg, err := load(v); err != nil || cfg.MetricsAddr != v["BUNTING_METRICS_ADDR"] {
			t.Errorf("%v: %q %v", v, cfg.MetricsAddr, err)
		}
	}
	for _, v := range []map[string]string{
		{"BUNTING_METRICS_ADDR": "main"},
		{"BUNTING_METRICS_ADDR": "main", "BUNTING_METRICS_TOKEN": "short"},
		{"BUNTING_METRICS_ADDR": "nowhere"},
	} {
		if _, err := load(v); err == nil || !strings.Contains(err.Error(), "BUNTING_METRICS_") {
			t.Errorf("%v: %v, want a refusal naming the variable", v, err)
		}
	}
}

type families map[string]*dto.MetricFamily

// scrape reads /metrics from addr and parses it with Prometheus' own text
// parser.
func scrape(t *testing.T, addr string) families {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	must(t, err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return f
}

// series are a family's metrics whose labels include the name, value pairs.
func series(f families, name string, labels ...string) []*dto.Metric {
	fam := f[name]
	if fam == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && have[labels[i]] == labels[i+1]
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

func has(f families, name string) bool { return f[name] != nil && len(f[name].Metric) > 0 }

// value sums the counters or gauges of a family's matching series.
func value(f families, name string, labels ...string) float64 {
	var sum float64
	for _, m := range series(f, name, labels...) {
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum
}

// count sums the observations of a histogram's matching series.
func count(f families, name string, labels ...string) uint64 {
	var n uint64
	for _, m := range series(f, name, labels...) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// dump is the families named with prefix, for a failure's message.
func dump(f families, prefix string) string {
	var b strings.Builder
	for name, fam := range f {
		if strings.HasPrefix(name, prefix) {
			expfmt.MetricFamilyToText(&b, fam)
		}
	}
	return b.String()
}

func scheduleInput(t *testing.T, at time.Time) governance.ScheduleInput {
	t.Helper()
	in := governance.ScheduleInput{Title: "off again", ScheduledTime: &at}
	in.TargetFlag = json.RawMessage(`{"isEnabled":false}`)
	return in
}

// freeAddr is a loopback address free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

// poll asks ok until it holds or the time is up.
func poll(limit time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !poll(30*time.Second, ok) {
		t.Fatalf("timed out waiting for %s", what)
	}
}
