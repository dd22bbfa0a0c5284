package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/web/sdk"
)

// span is one span as an OTLP receiver got it.
type span struct {
	Name, Kind, Service string
	TraceID, ID, Parent string
	Links               []string // "traceID/spanID"
	Attrs               map[string]any
}

// otlpReceiver is an OTLP trace receiver on loopback, over HTTP
// (protobuf) or gRPC, that keeps every span sent to it.
type otlpReceiver struct {
	ptraceotlp.UnimplementedGRPCServer
	URL string

	mu    sync.Mutex
	spans []span
}

func newOTLPReceiver(t *testing.T, protocol string) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	if protocol == "grpc" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		g := grpc.NewServer()
		ptraceotlp.RegisterGRPCServer(g, r)
		go g.Serve(ln)
		t.Cleanup(g.Stop)
		r.URL = "http://" + ln.Addr().String()
		return r
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.NotFound(w, req)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		er := ptraceotlp.NewExportRequest()
		if err := er.UnmarshalProto(raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.keep(er.Traces())
		answer, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Export is the gRPC receiver's.
func (r *otlpReceiver) Export(_ context.Context, er ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	r.keep(er.Traces())
	return ptraceotlp.NewExportResponse(), nil
}

func (r *otlpReceiver) keep(td ptrace.Traces) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range td.ResourceSpans().All() {
		service, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				sp := span{Name: s.Name(), Kind: s.Kind().String(), Service: service.AsString(), TraceID: s.TraceID().String(),
					ID: s.SpanID().String(), Attrs: s.Attributes().AsRaw()}
				if !s.ParentSpanID().IsEmpty() {
					sp.Parent = s.ParentSpanID().String()
				}
				for _, l := range s.Links().All() {
					sp.Links = append(sp.Links, l.TraceID().String()+"/"+l.SpanID().String())
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
}

func (r *otlpReceiver) received() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}

// tracedServer is Bunting as Serve runs it, over a fresh database whose
// owner, project and flag the test set up, with OTEL_ variables pointing at
// a receiver.
type tracedServer struct {
	*site
	URL  string
	stop func() // stops the server and waits: its last spans are sent
}

func startTracedServer(t *testing.T, otel map[string]string) *tracedServer {
	t.Helper()
	dbURL, _ := dbtest.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(dbURL)
	must(t, err)
	core.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	must(t, err)
	t.Cleanup(pool.Close)
	const secretKey = "test-secret-test-secret-test-secret-test-secret-"
	keys, err := core.DeriveKeys(secretKey)
	must(t, err)
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, WebhookAllowPrivateNetworks: true})
	ctx := context.Background()
	_, err = st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword})
	must(t, err)
	session, err := st.IAM().Login(ctx, iam.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.1")
	must(t, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	vars := map[string]string{"BUNTING_DATABASE_URL": dbURL, "BUNTING_ADDR": addr, "BUNTING_SECRET_KEY": secretKey,
		"BUNTING_ADMIN_EMAIL": ownerEmail, "BUNTING_ADMIN_PASSWORD": ownerPassword, "BUNTING_PASSWORD_COST": "4",
		"BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "BUNTING_SHUTDOWN_GRACE": "5s"}
	for k, v := range otel {
		vars[k] = v
	}
	serverCfg, err := server.LoadConfig(func(name string) string { return vars[name] })
	must(t, err)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(runCtx, serverCfg, slog.New(slog.DiscardHandler)) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	ts := &tracedServer{site: &site{t: t, st: st, owner: "Bearer " + session.Token, ownerID: session.UserID}, URL: "http://" + addr, stop: stop}
	waitFor(t, "the server to answer", func() bool {
		res, err := http.Get(ts.URL + "/health/readiness")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return ts
}

// call sends an API request as the owner, with extra headers as pairs.
func (ts *tracedServer) call(method, path string, headers ...string) int {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	must(ts.t, err)
	req.Header.Set("Authorization", ts.owner)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	must(ts.t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// The trace of one flag change, as an OTLP receiver gets it: the request's
// server span, named by its route and under the caller's traceparent; the
// statements beneath it; the push to the SDK connected and the webhook
// delivery tied to it, the webhook's receiver handed a traceparent under
// the delivery's span.
func TestTracingFollowsAChangeToItsNotificationAndWebhook(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t, "http/protobuf")
	ts := startTracedServer(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL})
	ctx := context.Background()
	env := ts.project("web")
	owner := ts.ownerActor()
	_, err := ts.st.Flags().CreateFlag(ctx, owner, env.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)

	var hookMu sync.Mutex
	var hookTraceparents []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		hookTraceparents = append(hookTraceparents, r.Header.Get("traceparent"))
		hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)
	hookSecret := "a-webhook-secret"
	_, err = ts.st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "Chat", URL: hook.URL,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: []string{webhooks.EventFlagToggled},
		Secret: &hookSecret, IsActive: true})
	must(t, err)

	// A server SDK connected and synced: the change is pushed to it.
	u := "ws" + strings.TrimPrefix(ts.URL, "http") + "/streaming?type=server&token=" +
		url.QueryEscape(sdk.Token(secret(env, core.SecretServer), time.Now(), 10))
	ws, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(u, nil)
	must(t, err)
	t.Cleanup(func() { ws.Close() })
	must(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"messageType":"data-sync","data":{"timestamp":0}}`)))
	ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _, err = ws.ReadMessage() // the full data set
	must(t, err)

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if status := ts.call(http.MethodPut, "/api/v1/envs/"+env.ID.String()+"/feature-flags/pay/toggle/true",
		"traceparent", "00-"+callerTrace+"-"+callerSpan+"-01"); status != http.StatusOK {
		t.Fatalf("toggle: %d, want 200", status)
	}
	_, patch, err := ws.ReadMessage()
	must(t, err)
	if !strings.Contains(string(patch), `"pay"`) {
		t.Fatalf("pushed %s, want the flag pay", patch)
	}
	waitFor(t, "the webhook delivery", func() bool {
		hookMu.Lock()
		defer hookMu.Unlock()
		return len(hookTraceparents) > 0
	})
	ws.Close()
	ts.stop() // sends the spans still buffered

	spans := otlp.received()
	byName := map[string][]span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	const route = "/api/v1/envs/:envId/feature-flags/:key/toggle/:status"
	reqs := byName["PUT "+route]
	if len(reqs) != 1 {
		t.Fatalf("got %d spans named %q, want 1; spans: %v", len(reqs), "PUT "+route, names(spans))
	}
	req := reqs[0]
	if req.TraceID != callerTrace || req.Parent != callerSpan || req.Kind != "Server" || req.Service != "bunting" {
		t.Errorf("request span: trace %s parent %s kind %s service %q, want trace %s parent %s kind Server service bunting",
			req.TraceID, req.Parent, req.Kind, req.Service, callerTrace, callerSpan)
	}
	if req.Attrs["http.route"] != route || req.Attrs["http.request.method"] != "PUT" || req.Attrs["http.response.status_code"] != int64(200) {
		t.Errorf("request span attributes: %v", req.Attrs)
	}

	var statements []string
	for _, s := range spans {
		if s.Parent == req.ID && s.Attrs["db.system.name"] == "postgresql" {
			statements = append(statements, strings.Split(s.Name, " + ")...) // a batch names its statements
			if text, _ := s.Attrs["db.query.text"].(string); text == "" || s.Kind != "Client" || s.TraceID != callerTrace {
				t.Errorf("statement span %s: kind %s, trace %s, text %q", s.Name, s.Kind, s.TraceID, text)
			}
		}
	}
	t.Logf("statements beneath the request: %v", statements)
	if !slices.Contains(statements, "BEGIN") || !slices.Contains(statements, "COMMIT") || len(statements) < 4 {
		t.Errorf("statements beneath the request: %v, want the transaction's, BEGIN to COMMIT", statements)
	}

	requestLink := req.TraceID + "/" + req.ID
	notified := false
	for _, s := range byName["change.notify"] {
		if slices.Contains(s.Links, requestLink) && s.TraceID == req.TraceID && s.Parent == req.ID {
			notified = true
		}
	}
	if !notified {
		t.Errorf("no change.notify span under and linked to the request: %+v", byName["change.notify"])
	}
	deliveries := byName["webhook.deliver"]
	if len(deliveries) != 1 {
		t.Fatalf("got %d webhook.deliver spans, want 1; spans: %v", len(deliveries), names(spans))
	}
	d := deliveries[0]
	if d.TraceID != req.TraceID || d.Parent != req.ID || !slices.Contains(d.Links, requestLink) || d.Attrs["http.response.status_code"] != int64(200) {
		t.Errorf("webhook.deliver: trace %s parent %s links %v attrs %v, want under and linked to request %s", d.TraceID, d.Parent, d.Links, d.Attrs, req.ID)
	}
	hookMu.Lock()
	got := hookTraceparents[0]
	hookMu.Unlock()
	if want := "00-" + req.TraceID + "-" + d.ID + "-01"; got != want {
		t.Errorf("the webhook's receiver got traceparent %q, want %q (under the delivery's span)", got, want)
	}
	for _, s := range spans {
		raw, _ := json.Marshal(s.Attrs)
		if bytes.Contains(raw, []byte(ts.owner[len("Bearer "):])) || bytes.Contains(raw, []byte(secret(env, core.SecretServer))) {
			t.Errorf("span %s holds a credential: %s", s.Name, raw)
		}
	}
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the same spans over gRPC.
func TestTracingOverGRPC(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t, "grpc")
	ts := startTracedServer(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_SERVICE_NAME": "bunting-eu"})
	if status := ts.call(http.MethodGet, "/api/v1/projects"); status != http.StatusOK {
		t.Fatalf("GET /api/v1/projects: %d", status)
	}
	ts.stop()
	var req *span
	spans := otlp.received()
	for i, s := range spans {
		if s.Name == "GET /api/v1/projects" {
			req = &spans[i]
		}
	}
	if req == nil {
		t.Fatalf("no span for GET /api/v1/projects; spans: %v", names(spans))
	}
	if req.Service != "bunting-eu" || req.Parent != "" {
		t.Errorf("request span: service %q parent %q, want bunting-eu and a trace of its own", req.Service, req.Parent)
	}
	for _, s := range spans {
		if s.Parent == req.ID && s.Attrs["db.system.name"] == "postgresql" {
			return
		}
	}
	t.Errorf("no statement beneath the request; spans: %v", names(spans))
}

func names(spans []span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// The OTEL_ variables decide whether spans are sent, where and how; with
// none set nothing is traced and no exporter is made.
func TestTracingConfig(t *testing.T) {
	cases := []struct {
		name                    string
		vars                    map[string]string
		on                      bool
		protocol, endpoint, bad string
	}{
		{name: "none", vars: nil},
		{name: "base endpoint over HTTP", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			on: true, protocol: "http/protobuf", endpoint: "http://collector:4318/v1/traces"},
		{name: "traces endpoint as it is", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/ingest"}, on: true, protocol: "http/protobuf", endpoint: "https://collector/ingest"},
		{name: "grpc", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			on: true, protocol: "grpc", endpoint: "http://collector:4317"},
		{name: "exporter named, default endpoint", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, protocol: "http/protobuf"},
		{name: "SDK disabled", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "exporter none", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "http/json", vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, bad: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{name: "zipkin", vars: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, bad: "OTEL_TRACES_EXPORTER"},
		{name: "bad sampler", vars: map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, bad: "OTEL_TRACES_SAMPLER"},
		{name: "bad ratio", vars: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
			bad: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "bad endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, bad: "OTEL_EXPORTER_OTLP_ENDPOINT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := server.LoadConfig(func(name string) string { return c.vars[name] })
			if c.bad != "" {
				if err == nil || !strings.Contains(err.Error(), c.bad) {
					t.Fatalf("got %v, want a problem with %s", err, c.bad)
				}
				return
			}
			must(t, err)
			tr := cfg.Tracing
			if tr.On != c.on || (c.on && (tr.Protocol != c.protocol || tr.Endpoint != c.endpoint)) {
				t.Errorf("got on %v protocol %q endpoint %q, want on %v protocol %q endpoint %q", tr.On, tr.Protocol, tr.Endpoint, c.on, c.protocol, c.endpoint)
			}
			tp, stop, err := server.StartTracing(context.Background(), tr, slog.New(slog.DiscardHandler))
			must(t, err)
			defer stop(context.Background())
			if (tp != nil) != c.on {
				t.Errorf("got a tracer provider %v, want one only when tracing is on", tp != nil)
			}
		})
	}
}
