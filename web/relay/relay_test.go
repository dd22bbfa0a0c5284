package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/web/relay"
	"github.com/bunting-flags/bunting/web/sdk"
)

// evaluationServer answers the agent protocol as FeatBit's evaluation
// server does (register, the relay-proxy WebSocket's data-sync with rp_full
// or rp_patch, live patches, 4003 for a bad key) and takes event reports:
// the peer the relay's own logic is tested against here. The tests with a
// real Bunting upstream are cmd/internal/server's TestRelayProcess.
type evaluationServer struct {
	t   *testing.T
	key string
	env uuid.UUID

	mu       sync.Mutex
	flags    []flagstore.Flag
	syncs    []json.RawMessage // the data-sync requests received
	conns    []*websocket.Conn
	insight  []string // Authorization and body of each report
	statuses int
	synced   chan json.RawMessage
}

func (u *evaluationServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/public/agent/register":
		if r.Header.Get("Authorization") != u.key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	case "/api/public/insight/track":
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.insight = append(u.insight, r.Header.Get("Authorization")+" "+string(b))
		u.mu.Unlock()
	case "/streaming":
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if r.URL.Query().Get("type") != "relay-proxy" || r.URL.Query().Get("token") != u.key {
			ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4003, "invalid request, close by server"), time.Now().Add(time.Second))
			ws.Close()
			return
		}
		u.mu.Lock()
		u.conns = append(u.conns, ws)
		u.mu.Unlock()
		go u.serve(ws)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (u *evaluationServer) serve(ws *websocket.Conn) {
	defer ws.Close()
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			MessageType string          `json:"messageType"`
			Data        json.RawMessage `json:"data"`
		}
		json.Unmarshal(msg, &m)
		switch m.MessageType {
		case "ping":
			ws.WriteMessage(websocket.TextMessage, []byte(`{"messageType":"pong","data":{}}`))
		case "rp-agent-status":
			u.mu.Lock()
			u.statuses++
			u.mu.Unlock()
		case "data-sync":
			var req struct {
				Timestamp int64 `json:"timestamp"`
				Envs      []struct {
					EnvID     uuid.UUID `json:"envId"`
					Timestamp int64     `json:"timestamp"`
				} `json:"envs"`
			}
			json.Unmarshal(m.Data, &req)
			u.mu.Lock()
			u.syncs = append(u.syncs, m.Data)
			since := int64(0)
			for _, e := range req.Envs {
				if e.EnvID == u.env {
					since = e.Timestamp
				}
			}
			item := map[string]any{"envId": u.env, "secrets": []any{}, "segments": []any{}}
			flags := []flagstore.Flag{}
			for _, f := range u.flags {
				if req.Timestamp == 0 || f.UpdatedAt.UnixMilli() > since {
					flags = append(flags, f)
				}
			}
			item["featureFlags"] = flags
			eventType := "rp_patch"
			if req.Timestamp == 0 {
				eventType = "rp_full"
				item["secrets"] = []map[string]any{
					{"type": "server", "projectKey": "web", "envId": u.env, "envKey": "prod", "value": serverSecret},
					{"type": "client", "projectKey": "web", "envId": u.env, "envKey": "prod", "value": clientSecret}}
			}
			u.mu.Unlock()
			b, _ := json.Marshal(map[string]any{"messageType": "data-sync", "data": map[string]any{"eventType": eventType, "items": []any{item}}})
			ws.WriteMessage(websocket.TextMessage, b)
			u.synced <- m.Data
		}
	}
}

// change replaces a flag, or sends it live to the connected relays.
func (u *evaluationServer) change(f flagstore.Flag, live bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range u.flags {
		if u.flags[i].ID == f.ID {
			u.flags[i] = f
		}
	}
	if !live {
		return
	}
	b, _ := json.Marshal(map[string]any{"messageType": "data-sync", "data": map[string]any{"eventType": "patch",
		"featureFlags": []flagstore.Flag{f}, "segments": []any{}}})
	for _, ws := range u.conns {
		ws.WriteMessage(websocket.TextMessage, b)
	}
}

// drop closes every relay connection, as a restart of the server does.
func (u *evaluationServer) drop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, ws := range u.conns {
		ws.Close()
	}
	u.conns = nil
}

var (
	testEnv      = uuid.New()
	serverSecret = core.NewSecretValue(testEnv)
	clientSecret = core.NewSecretValue(testEnv)
)

func boolFlag(env uuid.UUID, key string, on bool, at time.Time) flagstore.Flag {
	return flagstore.Flag{ID: uuid.NewSHA1(uuid.Nil, []byte(key)), EnvID: env, Key: key, Name: key, VariationType: "boolean",
		Variations: []flagstore.Variation{{ID: "t", Name: "True", Value: "true"}, {ID: "f", Name: "False", Value: "false"}},
		IsEnabled:  on, DisabledVariationID: "f", TargetUsers: []flagstore.TargetUser{}, Rules: []flagstore.FlagRule{},
		Fallthrough: flagstore.Fallthrough{IncludedInExpt: true, Variations: []flagstore.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 1}}},
		Tags:        []string{}, CreatedAt: at, UpdatedAt: at}
}

// TestRelaySyncsServesAndCatchesUp: the relay syncs everything, serves SDKs
// from it, pushes live changes, forwards event reports in batches, and after
// losing the upstream asks for what changed since the versions it holds.
func TestRelaySyncsServesAndCatchesUp(t *testing.T) {
	env := testEnv
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	up := &evaluationServer{t: t, key: "rp-test-key", env: env, synced: make(chan json.RawMessage, 8),
		flags: []flagstore.Flag{boolFlag(env, "checkout", true, t0), boolFlag(env, "search", false, t0)}}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	base, _ := url.Parse(upstream.URL)

	snapshot := filepath.Join(t.TempDir(), "snapshot.json")
	r, err := relay.New(relay.Config{Upstream: base, Key: up.key, AgentID: "agent-1", Snapshot: snapshot}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	r.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	if code, _ := get(t, srv.URL+"/health/readiness", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("readiness before any data: %d, want 503", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { r.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })

	if first := <-up.synced; !strings.Contains(string(first), `"timestamp":0`) {
		t.Fatalf("the first data-sync asks %s, want timestamp 0", first)
	}
	<-r.Upstream.Synced()
	if code, body := get(t, srv.URL+"/health/readiness", ""); code != http.StatusOK || body != "Healthy" {
		t.Fatalf("readiness synced: %d %q", code, body)
	}

	ws := dial(t, srv.URL, "server", serverSecret, `{"messageType":"data-sync","data":{"timestamp":0}}`)
	if full := read(t, ws); !strings.Contains(full, `"eventType":"full"`) || !strings.Contains(full, `"key":"search"`) {
		t.Fatalf("full data-sync: %.300s", full)
	}
	cws := dial(t, srv.URL, "client", clientSecret, `{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u1","name":"","customizedProperties":[]}}}`)
	if full := read(t, cws); !strings.Contains(full, `"id":"checkout","variation":"true"`) {
		t.Fatalf("client full data-sync: %.300s", full)
	}

	// A live change reaches both SDKs.
	up.change(boolFlag(env, "checkout", false, t0.Add(time.Minute)), true)
	if patch := read(t, ws); !strings.Contains(patch, `"eventType":"patch"`) || !strings.Contains(patch, `"isEnabled":false`) {
		t.Fatalf("server patch: %.300s", patch)
	}
	if patch := read(t, cws); !strings.Contains(patch, `"id":"checkout","variation":"false"`) {
		t.Fatalf("client patch: %.300s", patch)
	}

	// Event reports are forwarded with their secret, in one batch.
	for range 3 {
		code, _ := post(t, srv.URL+"/api/public/insight/track", serverSecret, `[{"user":{"keyId":"u1"},"variations":[]}]`)
		if code != http.StatusOK {
			t.Fatalf("insight: %d", code)
		}
	}
	r.Forward.Flush(context.Background())
	up.mu.Lock()
	got := up.insight
	up.mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(got[0], serverSecret+" ") || strings.Count(got[0], `"keyId":"u1"`) != 3 {
		t.Fatalf("forwarded %q, want one batch of three events", got)
	}

	// The upstream goes; a change made meanwhile arrives by patch.
	up.change(boolFlag(env, "search", true, t0.Add(2*time.Minute)), false)
	up.drop()
	again := <-up.synced
	var req struct {
		Timestamp int64 `json:"timestamp"`
		Envs      []struct {
			EnvID     uuid.UUID `json:"envId"`
			Timestamp int64     `json:"timestamp"`
		} `json:"envs"`
	}
	json.Unmarshal(again, &req)
	if want := t0.Add(time.Minute).UnixMilli(); req.Timestamp != want || len(req.Envs) != 1 || req.Envs[0].Timestamp != want {
		t.Fatalf("reconnected with %s, want the versions held (%d)", again, want)
	}
	if patch := read(t, ws); !strings.Contains(patch, `"key":"search"`) || strings.Contains(patch, `"key":"checkout"`) {
		t.Fatalf("catch-up patch: %.300s", patch)
	}

	// Admin routes want the key.
	if code, _ := get(t, srv.URL+"/api/public/proxy/status", "nope"); code != http.StatusUnauthorized {
		t.Fatalf("status without the key: %d", code)
	}
	code, body := get(t, srv.URL+"/api/public/proxy/status", up.key)
	if code != http.StatusOK || !strings.Contains(body, `"serves":"web:prod"`) || !strings.Contains(body, `"syncState":"Stable"`) {
		t.Fatalf("status: %d %s", code, body)
	}
}

// TestRelayBadKeyStops: a key the upstream refuses stops the sync for good
// (no retry loop against the upstream).
func TestRelayBadKeyStops(t *testing.T) {
	up := &evaluationServer{t: t, key: "rp-right", env: uuid.New(), synced: make(chan json.RawMessage, 1)}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	base, _ := url.Parse(upstream.URL)
	r, err := relay.New(relay.Config{Upstream: base, Key: "rp-wrong", AgentID: "a"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.Upstream.Run(context.Background()); close(done) }()
	<-done
	if state, _ := r.Upstream.State(); state != relay.StateStopped {
		t.Fatalf("state %s, want Stopped", state)
	}
}

func dial(t *testing.T, base, typ, secret, request string) *websocket.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(base, "http") + "/streaming?type=" + typ + "&token=" + url.QueryEscape(sdk.Token(secret, time.Now(), 10))
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	if err := ws.WriteMessage(websocket.TextMessage, []byte(request)); err != nil {
		t.Fatal(err)
	}
	return ws
}

func read(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, msg, err := ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

func get(t *testing.T, u, auth string) (int, string) { return do(t, "GET", u, auth, "") }

func post(t *testing.T, u, auth, body string) (int, string) { return do(t, "POST", u, auth, body) }

func do(t *testing.T, method, u, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
