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
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/sdk"
)

const (
	ownerEmail    = "owner@example.com"
	ownerPassword = "owner-password"
)

// instance is one Bunting process serving the SDK endpoints: a store with
// its change listener and the SDK endpoints' handler, on a real loopback
// listener. What a test changes, it changes through the store, as the API
// and the pages do.
type instance struct {
	t     *testing.T
	url   string
	dbURL string
	store *store.Store
	sdk   *sdk.Server
	echo  *echo.Echo
	owner string // the owner's session, as an Authorization header value
	// endUsers keeps the end users the instance's SDK endpoints saw; tests
	// run or flush it.
	endUsers *runner.EndUsers
}

// newInstance starts a Bunting instance on the database at dbURL; the first
// one on a database bootstraps it.
func newInstance(t *testing.T, dbURL string) *instance {
	t.Helper()
	return newInstanceWith(t, dbURL, sdk.Options{}, slog.New(slog.DiscardHandler))
}

// newInstanceWith starts an instance with the SDK endpoints' options and log.
func newInstanceWith(t *testing.T, dbURL string, opts sdk.Options, log *slog.Logger) *instance {
	t.Helper()
	poolCfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	core.ConfigurePool(poolCfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), poolCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	keys, err := core.DeriveKeys(strings.Repeat("sdk-test-key-", 4))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	if _, err := st.IAM().Bootstrap(context.Background(), iam.Owner{Email: ownerEmail, Password: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	feedtest.Run(t, st.Projects().Feed())
	waitFor(t, "the change listener", st.Projects().Changes().Live)

	if opts.EndUsers == nil {
		opts.EndUsers = runner.NewEndUsers(st, slog.New(slog.DiscardHandler))
	}
	in := &instance{t: t, dbURL: dbURL, store: st, sdk: sdk.New(st, log, opts), endUsers: opts.EndUsers}
	in.echo = newHandler(in.sdk, log)
	srv := httptest.NewServer(in.echo)
	t.Cleanup(srv.Close)
	in.url = srv.URL
	session, err := st.IAM().Login(context.Background(), iam.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	in.owner = "Bearer " + session.Token
	return in
}

// newHandler serves the SDK endpoints alone, as the server mounts them: on
// the Echo every surface shares, whose request log leaves out what the SDK
// endpoints count in their refusal summary. A failure answers its status
// (the server writes it in the API's envelope under /api/, as a page
// elsewhere; these tests read the status).
func newHandler(s *sdk.Server, log *slog.Logger) *echo.Echo {
	e := httpx.New(log, httpx.Options{Unlogged: sdk.LoggedInSummary})
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		class := core.Classify(httpx.ClientGone(c, err))
		if own, ok := httpx.Classify(err); ok && class.Status == http.StatusInternalServerError {
			class = own
		}
		if !c.Response().Committed {
			c.JSON(class.Status, map[string][]string{"errors": class.Codes})
		}
	}
	s.Register(e)
	return e
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

// actor is the owner, in the workspace's only organization or in the one
// headers name ("Organization", its id), as the API authenticates them.
func (in *instance) actor(headers ...string) *core.Actor {
	in.t.Helper()
	cred := iam.Credentials{Authorization: in.owner, Address: "192.0.2.1"}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Organization" {
			cred.Organization = headers[i+1]
		}
	}
	a, err := in.store.IAM().Authenticate(context.Background(), cred)
	must(in.t, err)
	return a
}

// input decodes body, written as the API's clients write it, into the
// store's input type T, as the API decodes it.
func input[T any](t *testing.T, body any) T {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, err)
	var in T
	must(t, jsonbody.Decode(b, &in))
	return in
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// env is an environment with its secrets, and the owner acting in its
// organization.
type env struct {
	in      *instance
	id      uuid.UUID
	project uuid.UUID
	owner   *core.Actor
	server  string
	client  string
}

// project creates a project and returns its environments Prod and Dev;
// headers (an Organization) choose the organization.
func (in *instance) project(key string, headers ...string) (prod, dev *env) {
	in.t.Helper()
	owner := in.actor(headers...)
	p, err := in.store.Projects().CreateProject(context.Background(), owner, core.ProjectInput{Name: key, Key: key})
	must(in.t, err)
	envs := make([]*env, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = &env{in: in, id: e.ID, project: p.ID, owner: owner}
		for _, s := range e.Secrets {
			if s.Type == core.SecretServer {
				envs[i].server = s.Value
			} else {
				envs[i].client = s.Value
			}
		}
	}
	return envs[0], envs[1]
}

// flag creates a flag from body (a store.FlagInput as JSON).
func (e *env) flag(body map[string]any) flagstore.Flag {
	e.in.t.Helper()
	f, err := e.in.store.Flags().CreateFlag(context.Background(), e.owner, e.id, input[flagstore.FlagInput](e.in.t, body))
	must(e.in.t, err)
	return f
}

// get reads the flag key as instance in sees it.
func (e *env) get(in *instance, key string) flagstore.Flag {
	in.t.Helper()
	f, err := in.store.Flags().GetFlag(context.Background(), e.owner, e.id, key)
	must(in.t, err)
	return f
}

// put changes a flag as the API's route of the same path does ("/key/targeting"
// with FeatBit's body, "/key/toggle/true") and returns it changed. A
// targeting change names the parts it changes; the rest is kept as the flag
// has it, since FeatBit's body carries the whole targeting.
func (e *env) put(path string, body map[string]any) flagstore.Flag {
	e.in.t.Helper()
	ctx := context.Background()
	key, route, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	var err error
	switch route {
	case "targeting":
		f := e.get(e.in, key)
		tg := map[string]any{"targetUsers": f.TargetUsers, "rules": f.Rules, "fallthrough": f.Fallthrough,
			"exptIncludeAllTargets": f.ExptIncludeAllTargets}
		maps.Copy(tg, body)
		_, err = e.in.store.Flags().SetFlagTargeting(ctx, e.owner, e.id, key, input[flagstore.TargetingInput](e.in.t, map[string]any{"targeting": tg}))
	case "toggle/true", "toggle/false":
		_, err = e.in.store.Flags().ToggleFlag(ctx, e.owner, e.id, key, route == "toggle/true", flagstore.Change{})
	default:
		e.in.t.Fatalf("put %s: no such change here", path)
	}
	must(e.in.t, err)
	return e.get(e.in, key)
}

// archive archives the flag key.
func (e *env) archive(key string) {
	e.in.t.Helper()
	_, err := e.in.store.Flags().ArchiveFlag(context.Background(), e.owner, e.id, key, flagstore.Change{})
	must(e.in.t, err)
}

// segment creates a segment from body (a store.SegmentInput as JSON).
func (e *env) segment(body map[string]any) flagstore.Segment {
	e.in.t.Helper()
	sg, err := e.in.store.Segments().CreateSegment(context.Background(), e.owner, e.id, input[segments.SegmentInput](e.in.t, body))
	must(e.in.t, err)
	return sg
}

// fixture is the flags the SDK tests run FeatBit's and OpenFeature's clients against.
type fixture struct {
	*env
	flags   map[string]flagstore.Flag
	segment flagstore.Segment
}

func variationID(f flagstore.Flag, value string) string {
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
	fx := &fixture{env: e, flags: map[string]flagstore.Flag{}}
	fx.segment = e.segment(map[string]any{"name": "Seg", "key": "seg", "type": "environment-specific",
		"included": []string{"u-seg"}})

	on := func(key string, extra map[string]any) flagstore.Flag {
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
		"conditions": []map[string]any{{"id": uuid.NewString(), "property": targeting.SegmentIn, "op": "",
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
// (events are asynchronous). A marker written to the change outbox now is
// read after every change committed before it, so once it arrives,
// everything before it has.
func (in *instance) settle() {
	in.t.Helper()
	conn, err := pgx.Connect(context.Background(), in.dbURL)
	if err != nil {
		in.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	feedtest.Settle(in.t, conn, in.store.Projects().Changes())
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
