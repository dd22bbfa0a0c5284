package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/web/sdk"
)

// FeatBit's SDKs stop for good on 4003 and retry on anything else, so every
// bad request must be 4003 (FeatBit's evaluation server closes them so).
func TestStreamingRefusesBadRequests(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	unknown := core.NewSecretValue(prod.id) // well formed, never stored
	tests := []struct {
		name, typ, token string
	}{
		{"no token", "server", ""},
		{"malformed token", "server", "not-a-token"},
		{"token of a short secret", "server", sdk.Token("short-secret", time.Now(), 3)},
		{"expired token", "server", sdk.Token(prod.server, time.Now().Add(-31*time.Second), 10)},
		{"token from the future", "server", sdk.Token(prod.server, time.Now().Add(31*time.Second), 10)},
		{"unknown secret", "server", sdk.Token(unknown, time.Now(), 10)},
		{"client secret as server", "server", sdk.Token(prod.client, time.Now(), 10)},
		{"server secret as client", "client", sdk.Token(prod.server, time.Now(), 10)},
		{"unknown type", "relay-proxy", sdk.Token(prod.server, time.Now(), 10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := in.dialToken(tt.typ, tt.token).closed(); code != 4003 {
				t.Errorf("closed with %d, want 4003", code)
			}
		})
	}
	// A bad version too.
	c := in.dialToken("server", sdk.Token(prod.server, time.Now(), 10)+"&version=3")
	if code := c.closed(); code != 4003 {
		t.Errorf("version 3: closed with %d, want 4003", code)
	}
}

func TestServerDataSync(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	fx := seed(prod)
	c := in.dial("server", prod.server)

	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	full := c.readSync(5 * time.Second)
	if full.Data.EventType != "full" || len(full.Data.FeatureFlags) != len(fx.flags) || len(full.Data.Segments) != 1 {
		t.Fatalf("full sync: %s with %d flags and %d segments, want full with %d and 1",
			full.Data.EventType, len(full.Data.FeatureFlags), len(full.Data.Segments), len(fx.flags))
	}
	// Every array present, updatedAt in UTC with a Z, segment values JSON arrays.
	for _, raw := range full.Data.FeatureFlags {
		for _, field := range []string{`"targetUsers":null`, `"rules":null`, `"variations":null`, `"conditions":null`, `"keyIds":null`} {
			if strings.Contains(string(raw), field) {
				t.Errorf("flag has %s: %s", field, raw)
			}
		}
		var f flagstore.Flag
		json.Unmarshal(raw, &f)
		if !strings.Contains(string(raw), `"updatedAt":"`+f.UpdatedAt.Format(time.RFC3339Nano)+`"`) || !strings.HasSuffix(f.UpdatedAt.Format(time.RFC3339Nano), "Z") {
			t.Errorf("flag %s updatedAt is not RFC 3339 UTC: %s", f.Key, raw)
		}
	}
	var sg map[string]any
	json.Unmarshal(full.Data.Segments[0], &sg)
	if sg["envId"] != prod.id.String() || sg["scopes"] != nil || sg["type"] != nil || sg["key"] != "seg" {
		t.Errorf("segment as SDKs get it: %v", sg)
	}

	// The SDK's version is its newest item's updatedAt in milliseconds;
	// nothing changed since, so the patch is empty (arrays, not null).
	var newest int64
	for _, f := range fx.flags {
		newest = max(newest, f.UpdatedAt.UnixMilli())
	}
	newest = max(newest, fx.segment.UpdatedAt.UnixMilli())
	c.send(fmt.Sprintf(`{"messageType":"data-sync","data":{"timestamp":%d}}`, newest))
	if raw := c.read(5 * time.Second); string(raw) != `{"messageType":"data-sync","data":{"eventType":"patch","featureFlags":[],"segments":[]}}` {
		t.Errorf("empty patch: %s", raw)
	}
	// Items changed after a timestamp, by millisecond.
	ts := fx.flags["ft-json"].UpdatedAt.UnixMilli() - 1
	c.send(fmt.Sprintf(`{"messageType":"data-sync","data":{"timestamp":%d}}`, ts))
	if p := c.readSync(5 * time.Second); p.Data.EventType != "patch" || !slices.Equal(keys(p.Data.FeatureFlags, "key"), []string{"ft-json"}) {
		t.Errorf("patch after ft-json's predecessor: %s %v", p.Data.EventType, keys(p.Data.FeatureFlags, "key"))
	}
	// A null or missing timestamp is 0.
	for _, msg := range []string{`{"messageType":"data-sync","data":{"timestamp":null}}`, `{"messageType":"DATA-SYNC","data":{}}`} {
		c.send(msg)
		if p := c.readSync(5 * time.Second); p.Data.EventType != "full" {
			t.Errorf("%s: %s, want full", msg, p.Data.EventType)
		}
	}

	// Unknown types, missing data, bad JSON, binary frames: no answer, the
	// socket stays open, and ping still gets FeatBit's exact pong.
	c.send(`{"messageType":"rp-agent-status","data":{}}`)
	c.send(`{"messageType":"ping"}`)
	c.send(`not json`)
	c.send(`{"messageType":"data-sync","data":{"timestamp":"yesterday"}}`)
	c.ws.WriteMessage(websocket.BinaryMessage, []byte(`{"messageType":"ping","data":null}`))
	c.send(`{"messageType":"ping","data":null}`)
	if raw := c.read(5 * time.Second); string(raw) != `{"messageType":"pong","data":{}}` {
		t.Fatalf("got %s, want the pong", raw)
	}
	c.send(`{"messageType":"echo","data":{"n":1}}`)
	if raw := c.read(5 * time.Second); string(raw) != `{"messageType":"echo","data":{"n":1}}` {
		t.Errorf("echo: %s", raw)
	}
}

func TestServerDataSyncFromSharedSegments(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	prod.segment(map[string]any{"name": "All web", "key": "all-web", "type": "shared",
		"scopes": []string{"organization/default-organization:project/web"}, "included": []string{"u1"}})
	in.settle()
	c := in.dial("server", dev.server)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	full := c.readSync(5 * time.Second)
	var sg map[string]any
	if len(full.Data.Segments) != 1 || json.Unmarshal(full.Data.Segments[0], &sg) != nil || sg["envId"] != dev.id.String() {
		t.Fatalf("dev's segments: %s; want the shared one with dev's envId", full.Data.Segments)
	}
}

func TestClientDataSync(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	fx := seed(prod)
	prod.archive("ft-string")
	in.settle()
	c := in.dial("client", prod.client)

	// Without a user FeatBit answers nothing.
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":" "}}}`)
	c.send(`{"messageType":"ping","data":null}`)
	if raw := c.read(5 * time.Second); string(raw) != `{"messageType":"pong","data":{}}` {
		t.Fatalf("got %s, want only the pong", raw)
	}

	c.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u-seg","name":"Ann",
		"customizedProperties":[{"name":"country","value":"us"},{"name":"age","value":30}]}}}`)
	full := c.readSync(5 * time.Second)
	if full.Data.EventType != "full" || full.Data.UserKeyID != "u-seg" || len(full.Data.FeatureFlags) != len(fx.flags) {
		t.Fatalf("client full sync: %s for %q with %d flags", full.Data.EventType, full.Data.UserKeyID, len(full.Data.FeatureFlags))
	}
	got := map[string]map[string]any{}
	for _, raw := range full.Data.FeatureFlags {
		var f map[string]any
		json.Unmarshal(raw, &f)
		got[f["id"].(string)] = f
	}
	for key, want := range map[string][2]any{
		"ft-bool": {"true", "default"}, "ft-off": {"false", "flag disabled"}, "ft-rule": {"false", "China and US"},
		"ft-seg": {"false", "In segment"}, "ft-string": {nil, "flag archived"}, "ft-json": {`{"limit":5,"tags":["a"]}`, "default"},
	} {
		f := got[key]
		if f["variation"] != want[0] || f["matchReason"] != want[1] {
			t.Errorf("%s: variation %v reason %v, want %v %v", key, f["variation"], f["matchReason"], want[0], want[1])
		}
	}
	if opts := got["ft-bool"]["variationOptions"].([]any); len(opts) != 2 || opts[0].(map[string]any)["name"] != nil {
		t.Errorf("variationOptions %v, want id and value only", opts)
	}
	if ts := int64(got["ft-bool"]["timestamp"].(float64)); ts != fx.flags["ft-bool"].UpdatedAt.UnixMilli() {
		t.Errorf("timestamp %d, want updatedAt %d", ts, fx.flags["ft-bool"].UpdatedAt.UnixMilli())
	}
	// Client SDKs never receive targeting rules or segments.
	if raw, _ := json.Marshal(full); strings.Contains(string(raw), "u-seg\"]") || strings.Contains(string(raw), "rules") {
		t.Errorf("client data leaks targeting: %s", raw)
	}

	// identify: a new user on the same socket.
	c.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u-false"}}}`)
	again := c.readSync(5 * time.Second)
	for _, raw := range again.Data.FeatureFlags {
		var f map[string]any
		json.Unmarshal(raw, &f)
		if f["id"] == "ft-target" && (f["variation"] != "false" || f["matchReason"] != "targeted") {
			t.Errorf("u-false on ft-target: %v", f)
		}
	}
}

// pushWait bounds the wait for a push that never comes; it is no speed
// goal: how fast pushes arrive is what bunting-bench's stream-fanout
// scenario measures.
const pushWait = 10 * time.Second

// readUntil reads data-sync messages until one has the flag key, failing
// after the deadline.
func (c *sdkConn) readUntil(deadline time.Time, key string) dataSync {
	c.t.Helper()
	for {
		d := c.readSync(time.Until(deadline))
		if slices.Contains(keys(d.Data.FeatureFlags, "key"), key) || slices.Contains(keys(d.Data.FeatureFlags, "id"), key) {
			return d
		}
	}
}

// A change is pushed to the SDKs of its environment: server SDKs get the
// flag, client SDKs its evaluation for their user; other environments hear
// nothing.
func TestChangesArePushed(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	fx := seed(prod)
	server := in.dial("server", prod.server)
	server.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	server.readSync(5 * time.Second)
	client := in.dial("client", prod.client)
	client.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u1"}}}`)
	client.readSync(5 * time.Second)
	other := in.dial("server", dev.server)
	other.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	other.readSync(5 * time.Second)

	// (Pushes of the seeding may still arrive: the events are asynchronous.)
	start := time.Now()
	toggled := prod.put("/ft-bool/toggle/false", map[string]any{})
	p := server.readUntil(start.Add(pushWait), "ft-bool")
	if p.Data.EventType != "patch" || !slices.Equal(keys(p.Data.FeatureFlags, "key"), []string{"ft-bool"}) || len(p.Data.Segments) != 0 {
		t.Fatalf("server push: %s %v %v", p.Data.EventType, keys(p.Data.FeatureFlags, "key"), p.Data.Segments)
	}
	var pushed flagstore.Flag
	json.Unmarshal(p.Data.FeatureFlags[0], &pushed)
	if pushed.IsEnabled || pushed.Revision != toggled.Revision || !pushed.UpdatedAt.After(fx.flags["ft-bool"].UpdatedAt) {
		t.Errorf("pushed flag %+v, want the toggled one with a later updatedAt", pushed)
	}
	cp := client.readUntil(start.Add(pushWait), "ft-bool")
	var cf map[string]any
	json.Unmarshal(cp.Data.FeatureFlags[0], &cf)
	if cp.Data.UserKeyID != "u1" || cf["id"] != "ft-bool" || cf["variation"] != "false" || cf["matchReason"] != "flag disabled" {
		t.Errorf("client push: %+v %v", cp.Data, cf)
	}
	t.Logf("pushed in %v", time.Since(start))

	// A segment's targeting change pushes the segment, and the flag that
	// uses it with a new updatedAt.
	_, err := in.store.Segments().SetSegmentTargeting(context.Background(), prod.owner, prod.id, fx.segment.ID,
		input[segments.SegmentTargetingInput](t, map[string]any{"included": []string{"u-seg", "u1"}}))
	must(t, err)
	deadline := time.Now().Add(pushWait)
	sawSegment, sawFlag := false, false
	for !sawSegment || !sawFlag {
		d := server.readSync(time.Until(deadline))
		sawSegment = sawSegment || slices.Contains(keys(d.Data.Segments, "id"), fx.segment.ID.String())
		sawFlag = sawFlag || slices.Contains(keys(d.Data.FeatureFlags, "key"), "ft-seg")
	}
	cp = client.readUntil(time.Now().Add(pushWait), "ft-seg")
	json.Unmarshal(cp.Data.FeatureFlags[0], &cf)
	if cf["variation"] != "false" {
		t.Errorf("u1 joined the segment; ft-seg serves %v, want false", cf["variation"])
	}

	// Archiving is a change too; the other environment heard nothing.
	prod.archive("ft-off")
	server.readUntil(time.Now().Add(pushWait), "ft-off")
	other.send(`{"messageType":"ping","data":null}`)
	if raw := other.read(pushWait); string(raw) != `{"messageType":"pong","data":{}}` {
		t.Errorf("dev's connection got %s", raw)
	}
}

// A change made through one instance reaches SDKs connected to another
// instance on the same database.
func TestChangesReachOtherInstances(t *testing.T) {
	t.Parallel()
	a := newServer(t)
	prod, _ := a.project("web")
	seed(prod)
	b := newInstance(t, a.dbURL)
	c := b.dial("server", prod.server)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	c.readSync(5 * time.Second)

	start := time.Now()
	prod.put("/ft-bool/toggle/false", map[string]any{})
	p := c.readUntil(time.Now().Add(pushWait), "ft-bool")
	var f flagstore.Flag
	json.Unmarshal(p.Data.FeatureFlags[0], &f)
	if f.IsEnabled {
		t.Errorf("instance b pushed %+v, want ft-bool off", f)
	}
	t.Logf("pushed across instances in %v", time.Since(start))

	// Instance b's OFREP cache saw it too.
	res, body := b.request("POST", "/ofrep/v1/evaluate/flags/ft-bool", `{"context":{"targetingKey":"u1"}}`, "Authorization", prod.server)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"value":false`) {
		t.Errorf("instance b evaluates %d %s, want false", res.StatusCode, body)
	}
}

func TestRemovedSecretsAreDisconnected(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	c := in.dial("server", prod.server)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	c.readSync(5 * time.Second)
	ctx := context.Background()
	e, err := in.store.Projects().GetEnvironment(ctx, prod.owner, prod.project, prod.id)
	must(t, err)
	for _, s := range e.Secrets {
		if s.Value == prod.server {
			must(t, in.store.Projects().DeleteSecret(ctx, prod.owner, prod.id, s.ID))
		}
	}
	if code := c.closed(); code != 4003 {
		t.Errorf("closed with %d, want 4003", code)
	}
	if code := in.dial("server", prod.server).closed(); code != 4003 {
		t.Errorf("reconnecting: closed with %d, want 4003", code)
	}
}

func TestOversizedFramesCloseTheConnection(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	c := in.dial("client", prod.client)
	c.send(`{"messageType":"data-sync","data":{"user":{"keyId":"` + strings.Repeat("x", 40<<10) + `"}}}`)
	if code := c.closed(); code != websocket.CloseMessageTooBig {
		t.Errorf("closed with %d, want 1009", code)
	}
}

// When the listening connection drops, changes made meanwhile are not
// announced; once it is back, every SDK is patched with what changed.
func TestChangesMissedWhileNotListeningAreCaughtUp(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	c := in.dial("server", prod.server)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	c.readSync(5 * time.Second)

	conn, err := pgx.Connect(t.Context(), in.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var terminated bool
	if err := conn.QueryRow(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, feed.ApplicationName).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("terminate the listener: %v %v", terminated, err)
	}
	prod.put("/ft-bool/toggle/false", map[string]any{})
	// The listener may be back before the change (a push) or after it (a
	// catch-up patch of everything recent); either way ft-bool goes off.
	deadline := time.Now().Add(5 * time.Second)
	for off := false; !off; {
		p := c.readUntil(deadline, "ft-bool")
		t.Logf("patch keys %v", keys(p.Data.FeatureFlags, "key"))
		for _, raw := range p.Data.FeatureFlags {
			var f flagstore.Flag
			if json.Unmarshal(raw, &f) == nil && f.Key == "ft-bool" && !f.IsEnabled {
				off = true
			}
		}
	}
	waitFor(t, "the listener to come back", in.store.Projects().Changes().Live)
}
