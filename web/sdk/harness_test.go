package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web"
	"github.com/bunting-flags/bunting/web/sdk"
)

const (
	ownerEmail    = "owner@example.com"
	ownerPassword = "owner-password"
)

// instance is one Bunting process: a store with its change listener and
// the complete HTTP handler, on a real loopback listener.
type instance struct {
	t     *testing.T
	url   string
	dbURL string
	store *store.Store
	owner string // Authorization header value
}

// newInstance starts a Bunting instance on the database at dbURL; the first
// one on a database bootstraps it.
func newInstance(t *testing.T, dbURL string) *instance {
	t.Helper()
	return newInstanceWith(t, dbURL, web.Config{}, slog.New(slog.DiscardHandler))
}

// newInstanceWith starts an instance with cfg (its BaseURL set here) and log.
func newInstanceWith(t *testing.T, dbURL string, cfg web.Config, log *slog.Logger) *instance {
	t.Helper()
	poolCfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(poolCfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), poolCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	keys, err := store.DeriveKeys(strings.Repeat("sdk-test-key-", 4))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), store.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	if _, err := st.Bootstrap(context.Background(), store.Owner{Email: ownerEmail, Password: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { st.Listen(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitFor(t, "the change listener", st.Changes().Live)

	cfg.BaseURL, _ = url.Parse("http://bunting.test")
	srv := httptest.NewServer(web.New(cfg, st, log))
	t.Cleanup(srv.Close)
	in := &instance{t: t, url: srv.URL, dbURL: dbURL, store: st}
	var session struct{ Token string }
	in.call("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}, &session)
	in.owner = "Bearer " + session.Token
	return in
}

// newServer starts one instance on a fresh database.
func newServer(t *testing.T) *instance {
	t.Helper()
	dbURL, _ := dbtest.NewDatabase(t)
	return newInstance(t, dbURL)
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// request sends an HTTP request and returns the answer with its body read.
func (in *instance) request(method, path string, body any, headers ...string) (*http.Response, []byte) {
	in.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			in.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, in.url+path, r)
	if err != nil {
		in.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		in.t.Fatal(err)
	}
	return res, b
}

// call makes a management API call that must succeed and decodes its data
// into out; headers are more request headers, name then value.
func (in *instance) call(method, path, auth string, body, out any, headers ...string) {
	in.t.Helper()
	if auth != "" {
		headers = append(headers, "Authorization", auth)
	}
	res, b := in.request(method, path, body, headers...)
	var env struct {
		Success bool
		Data    json.RawMessage
	}
	if err := json.Unmarshal(b, &env); err != nil || res.StatusCode != http.StatusOK || !env.Success {
		in.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			in.t.Fatalf("%s %s: decode %s: %v", method, path, env.Data, err)
		}
	}
}

// env is an environment with its secrets.
type env struct {
	in      *instance
	id      uuid.UUID
	project uuid.UUID
	server  string
	client  string
	flags   string // the flags API path
	segs    string
}

// project creates a project and returns its environments Prod and Dev;
// headers (an Organization) are sent with the request.
func (in *instance) project(key string, headers ...string) (prod, dev *env) {
	in.t.Helper()
	var p store.Project
	in.call("POST", "/api/v1/projects", in.owner, map[string]string{"name": key, "key": key}, &p, headers...)
	envs := make([]*env, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = &env{in: in, id: e.ID, project: p.ID, flags: "/api/v1/envs/" + e.ID.String() + "/feature-flags",
			segs: "/api/v1/envs/" + e.ID.String() + "/segments"}
		for _, s := range e.Secrets {
			if s.Type == store.SecretServer {
				envs[i].server = s.Value
			} else {
				envs[i].client = s.Value
			}
		}
	}
	return envs[0], envs[1]
}

// flag creates a flag and applies changes to it (path suffix → body).
func (e *env) flag(body map[string]any) store.Flag {
	e.in.t.Helper()
	var f store.Flag
	e.in.call("POST", e.flags, e.in.owner, body, &f)
	return f
}

// put changes a flag (path suffix → FeatBit's body) and returns it changed.
// A targeting change names the parts it changes; the rest is sent as the flag
// has it, since FeatBit's body carries the whole targeting.
func (e *env) put(path string, body map[string]any) store.Flag {
	e.in.t.Helper()
	key, route, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	var f store.Flag
	if route == "targeting" {
		e.in.call("GET", e.flags+"/"+key, e.in.owner, nil, &f)
		tg := map[string]any{"targetUsers": f.TargetUsers, "rules": f.Rules, "fallthrough": f.Fallthrough,
			"exptIncludeAllTargets": f.ExptIncludeAllTargets}
		maps.Copy(tg, body)
		body = map[string]any{"targeting": tg}
	}
	e.in.call("PUT", e.flags+path, e.in.owner, body, nil)
	e.in.call("GET", e.flags+"/"+key, e.in.owner, nil, &f)
	return f
}

// fixture is the flags of the protocol notes' test plan (§7.1).
type fixture struct {
	*env
	flags   map[string]store.Flag
	segment store.Segment
}

func variationID(f store.Flag, value string) string {
	for _, v := range f.Variations {
		if v.Value == value {
			return v.ID
		}
	}
	panic("no variation " + value)
}

func rollout(id string, lo, hi float64) map[string]any {
	return map[string]any{"id": id, "rollout": []float64{lo, hi}, "exptRollout": 1}
}

// seed makes the fixture flags in e: every kind of targeting the SDKs must
// evaluate like FeatBit.
func seed(e *env) *fixture {
	t := e.in.t
	t.Helper()
	fx := &fixture{env: e, flags: map[string]store.Flag{}}
	e.in.call("POST", e.segs, e.in.owner, map[string]any{"name": "Seg", "key": "seg", "type": "environment-specific",
		"included": []string{"u-seg"}}, &fx.segment)

	on := func(key string, extra map[string]any) store.Flag {
		body := map[string]any{"name": key, "key": key, "isEnabled": true}
		for k, v := range extra {
			body[k] = v
		}
		return e.flag(body)
	}
	fx.flags["ft-bool"] = on("ft-bool", nil)
	fx.flags["ft-off"] = e.flag(map[string]any{"name": "ft-off", "key": "ft-off"})

	f := on("ft-target", nil)
	fx.flags["ft-target"] = e.put("/ft-target/targeting", map[string]any{
		"targetUsers": []map[string]any{{"keyIds": []string{"u-false"}, "variationId": variationID(f, "false")}}})

	f = on("ft-rule", nil)
	fx.flags["ft-rule"] = e.put("/ft-rule/targeting", map[string]any{"rules": []map[string]any{{
		"id": uuid.NewString(), "name": "China and US", "includedInExpt": true,
		"conditions": []map[string]any{{"id": uuid.NewString(), "property": "country", "op": "IsOneOf", "value": `["cn","us"]`}},
		"variations": []any{rollout(variationID(f, "false"), 0, 1)}}}})

	f = on("ft-seg", nil)
	fx.flags["ft-seg"] = e.put("/ft-seg/targeting", map[string]any{"rules": []map[string]any{{
		"id": uuid.NewString(), "name": "In segment", "includedInExpt": true,
		"conditions": []map[string]any{{"id": uuid.NewString(), "property": store.SegmentIn, "op": "",
			"value": fmt.Sprintf(`[%q]`, fx.segment.ID)}},
		"variations": []any{rollout(variationID(f, "false"), 0, 1)}}}})

	f = on("ft-split", nil)
	fx.flags["ft-split"] = e.put("/ft-split/targeting", map[string]any{"fallthrough": map[string]any{
		"dispatchKey": nil, "includedInExpt": true,
		"variations": []any{rollout(variationID(f, "true"), 0, 0.5), rollout(variationID(f, "false"), 0.5, 1)}}})

	fx.flags["ft-string"] = on("ft-string", map[string]any{"variationType": "string", "variations": []map[string]string{
		{"id": "s1", "name": "Blue", "value": "blue"}, {"id": "s2", "name": "Green", "value": "green"}}})
	fx.flags["ft-number"] = on("ft-number", map[string]any{"variationType": "number", "variations": []map[string]string{
		{"id": "n1", "name": "Ten", "value": "10"}, {"id": "n2", "name": "Pi", "value": "3.5"}}})
	fx.flags["ft-json"] = on("ft-json", map[string]any{"variationType": "json", "variations": []map[string]string{
		{"id": "j1", "name": "Config", "value": `{"limit":5,"tags":["a"]}`}, {"id": "j2", "name": "Empty", "value": "{}"}}})
	e.in.settle()
	return fx
}

// settle waits until every change made so far has been announced on this
// instance, so a connection opened next gets no pushes of earlier changes
// (events are asynchronous). Notifications arrive in commit order, so once
// a marker sent now arrives, everything before it has.
func (in *instance) settle() {
	in.t.Helper()
	sub := in.store.Changes().Subscribe()
	defer sub.Close()
	conn, err := pgx.Connect(context.Background(), in.dbURL)
	if err != nil {
		in.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	marker := uuid.New()
	if _, err := conn.Exec(context.Background(), `SELECT pg_notify('bunting_changes', $1)`,
		`{"kind":"test-marker","id":"`+marker.String()+`"}`); err != nil {
		in.t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case <-sub.Ready():
			for _, ev := range sub.Take() {
				if ev.ID == marker {
					return
				}
			}
		case <-deadline:
			in.t.Fatal("the change events did not settle")
		}
	}
}

// sdkConn is an SDK's WebSocket connection.
type sdkConn struct {
	t  *testing.T
	ws *websocket.Conn
}

// dial opens /streaming with a token made now from secret.
func (in *instance) dial(typ, secret string) *sdkConn {
	in.t.Helper()
	return in.dialToken(typ, sdk.Token(secret, time.Now(), 10))
}

func (in *instance) dialToken(typ, token string) *sdkConn {
	in.t.Helper()
	u := "ws" + strings.TrimPrefix(in.url, "http") + "/streaming?type=" + url.QueryEscape(typ) + "&token=" + url.QueryEscape(token)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, u, nil)
	if err != nil {
		in.t.Fatalf("dial %s: %v", u, err)
	}
	in.t.Cleanup(func() { ws.Close() })
	return &sdkConn{t: in.t, ws: ws}
}

func (c *sdkConn) send(msg string) {
	c.t.Helper()
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next message, failing after the timeout.
func (c *sdkConn) read(timeout time.Duration) []byte {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(timeout))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return b
}

// closed waits for the server to close the connection and returns its code.
func (c *sdkConn) closed() int {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := c.ws.ReadMessage(); err != nil {
			return closeCode(err)
		}
	}
}

// closeCode is the code of the close frame that ended a read, or -1 when
// the read ended otherwise (a timeout).
func closeCode(err error) int {
	if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
		return ce.Code
	}
	return -1
}

// dataSync is a data-sync answer.
type dataSync struct {
	MessageType string `json:"messageType"`
	Data        struct {
		EventType    string            `json:"eventType"`
		UserKeyID    string            `json:"userKeyId"`
		FeatureFlags []json.RawMessage `json:"featureFlags"`
		Segments     []json.RawMessage `json:"segments"`
	} `json:"data"`
}

func (c *sdkConn) readSync(timeout time.Duration) dataSync {
	c.t.Helper()
	b := c.read(timeout)
	var d dataSync
	if err := json.Unmarshal(b, &d); err != nil || d.MessageType != "data-sync" {
		c.t.Fatalf("got %s, want a data-sync message", b)
	}
	return d
}

// keys is the keys (flags) or ids (segments) of items.
func keys(items []json.RawMessage, field string) []string {
	out := []string{}
	for _, it := range items {
		var m map[string]any
		json.Unmarshal(it, &m)
		out = append(out, fmt.Sprint(m[field]))
	}
	return out
}
