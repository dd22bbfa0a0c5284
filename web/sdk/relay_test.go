package sdk_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/web/sdk"
)

// rpSync is a relay's data-sync message as FeatBit's agent reads it
// (DataSet.FromJson, PatchDataSet.FromJson).
type rpSync struct {
	MessageType string `json:"messageType"`
	Data        struct {
		EventType string `json:"eventType"`
		Items     []struct {
			EnvID   uuid.UUID `json:"envId"`
			Secrets []struct {
				Type       string    `json:"type"`
				ProjectKey string    `json:"projectKey"`
				EnvID      uuid.UUID `json:"envId"`
				EnvKey     string    `json:"envKey"`
				Value      string    `json:"value"`
			} `json:"secrets"`
			FeatureFlags []json.RawMessage `json:"featureFlags"`
			Segments     []json.RawMessage `json:"segments"`
		} `json:"items"`
		FeatureFlags []json.RawMessage `json:"featureFlags"`
		Segments     []json.RawMessage `json:"segments"`
	} `json:"data"`
}

func (c *sdkConn) readRelay(timeout time.Duration) rpSync {
	c.t.Helper()
	b := c.read(timeout)
	var m rpSync
	if err := json.Unmarshal(b, &m); err != nil || m.MessageType != "data-sync" {
		c.t.Fatalf("got %s, want a data-sync message", b)
	}
	return m
}

// relayProxy makes a relay proxy serving envs, and returns it with its key.
func (in *instance) relayProxy(name string, envs ...*env) relayproxies.RelayProxy {
	in.t.Helper()
	scopes := make([]string, len(envs))
	for i, e := range envs {
		scopes[i] = e.id.String()
	}
	rp, err := in.store.RelayProxies().Create(context.Background(), in.actor(), relayproxies.Input{Name: name, Scopes: scopes})
	must(in.t, err)
	return rp
}

// A FeatBit agent's session, message by message as its source sends them:
// it registers, connects with its key, asks for everything (timestamp 0)
// and gets rp_full of its scope only, with both secrets; a change arrives
// as the server SDKs' patch; a reconnect's per-environment timestamps get
// rp_patch; ping is answered; its status is kept for the pages.
func TestRelayAgentSession(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	f := prod.flag(map[string]any{"name": "Checkout", "key": "checkout"})
	dev.flag(map[string]any{"name": "Other", "key": "other"})
	rp := in.relayProxy("edge", prod)

	resp, body := in.request(http.MethodPost, "/api/public/agent/register", `"agent-1"`, "Authorization", rp.Key)
	if resp.StatusCode != http.StatusOK || string(body) != "agent-1" {
		t.Fatalf("register: %d %s", resp.StatusCode, body)
	}
	if resp, _ := in.request(http.MethodPost, "/api/public/agent/register", `"agent-1"`, "Authorization", "rp-"+strings.Repeat("x", 40)); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("register with a bad key: %d", resp.StatusCode)
	}

	c := in.dialToken("relay-proxy", rp.Key)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	full := c.readRelay(5 * time.Second)
	if full.Data.EventType != "rp_full" || len(full.Data.Items) != 1 || full.Data.Items[0].EnvID != prod.id {
		t.Fatalf("rp_full %+v: want one item, the scope's environment", full.Data)
	}
	it := full.Data.Items[0]
	types := map[string]string{}
	for _, sc := range it.Secrets {
		types[sc.Type] = sc.Value
		if sc.EnvID != prod.id || sc.ProjectKey != "web" || sc.EnvKey == "" {
			t.Errorf("secret %+v", sc)
		}
	}
	if types["server"] != prod.server || types["client"] != prod.client {
		t.Fatalf("secrets %v: want the environment's server and client secrets", types)
	}
	if got := keys(it.FeatureFlags, "key"); len(got) != 1 || got[0] != "checkout" {
		t.Fatalf("flags %v, want [checkout]", got)
	}
	var flag map[string]any
	must(t, json.Unmarshal(it.FeatureFlags[0], &flag))
	for _, field := range []string{"envId", "updatedAt", "exptIncludeAllTargets", "fallthrough", "rules", "variations", "targetUsers"} {
		if _, ok := flag[field]; !ok {
			t.Errorf("the flag has no %s: the agent's evaluator reads it", field)
		}
	}

	c.send(`{"messageType":"ping","data":{}}`)
	if b := c.read(5 * time.Second); string(b) != `{"messageType":"pong","data":{}}` {
		t.Fatalf("ping answered %s", b)
	}

	prod.put("/checkout/toggle/true", nil)
	patch := c.readRelay(5 * time.Second)
	if patch.Data.EventType != "patch" || len(patch.Data.FeatureFlags) != 1 || len(patch.Data.Segments) != 0 {
		t.Fatalf("change %+v: want the server SDKs' patch of the flag", patch.Data)
	}
	var pushed map[string]any
	must(t, json.Unmarshal(patch.Data.FeatureFlags[0], &pushed))
	if pushed["isEnabled"] != true || pushed["envId"] != prod.id.String() {
		t.Fatalf("pushed %v", pushed)
	}
	// A change elsewhere reaches no relay that does not serve it; the
	// next message is the answer to the reconnect's data-sync.
	dev.put("/other/toggle/true", nil)

	ts := int64(f.UpdatedAt.UnixMilli())
	c.send(`{"messageType":"data-sync","data":{"timestamp":` + itoa(ts) + `,"envs":[{"envId":"` + prod.id.String() + `","timestamp":` + itoa(ts) + `}]}}`)
	rpPatch := c.readRelay(5 * time.Second)
	if rpPatch.Data.EventType != "rp_patch" || len(rpPatch.Data.Items) != 1 || len(rpPatch.Data.Items[0].Secrets) != 0 ||
		len(rpPatch.Data.Items[0].FeatureFlags) != 1 {
		t.Fatalf("rp_patch %+v: want the toggled flag, no secrets", rpPatch.Data)
	}

	status := `{"serves":"web:prod","dataVersion":1,"syncState":"Stable","lastSyncedAt":null,"reportedAt":"2026-01-01T00:00:00Z"}`
	statusJSON, _ := json.Marshal(status)
	c.send(`{"messageType":"rp-agent-status","data":{"agentId":"agent-1","status":` + string(statusJSON) + `}}`)
	waitFor(t, "the agent's status", func() bool {
		got, err := in.store.RelayProxies().Get(context.Background(), in.actor(), rp.ID)
		return err == nil && len(got.AutoAgents) == 1 && got.AutoAgents[0].Status == status
	})
}

// A change of scope reaches a connected relay as a new rp_full; deleting
// its key closes it with 4003, after which FeatBit's agent stops; a bad
// key is 4003 at once.
func TestRelayScopeChangeAndRevocation(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	rp := in.relayProxy("edge", prod)
	if code := in.dialToken("relay-proxy", "rp-"+strings.Repeat("y", 40)).closed(); code != 4003 {
		t.Fatalf("a bad key: closed with %d, want 4003", code)
	}
	c := in.dialToken("relay-proxy", rp.Key)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	if m := c.readRelay(5 * time.Second); len(m.Data.Items) != 1 {
		t.Fatalf("first sync %+v", m.Data)
	}
	owner := in.actor()
	must(t, in.store.RelayProxies().Update(context.Background(), owner, rp.ID,
		relayproxies.Input{Name: "edge", Scopes: []string{prod.id.String(), dev.id.String()}}))
	m := c.readRelay(5 * time.Second)
	if m.Data.EventType != "rp_full" || len(m.Data.Items) != 2 {
		t.Fatalf("after widening the scope %+v: want rp_full of both environments", m.Data)
	}
	must(t, in.store.RelayProxies().Delete(context.Background(), owner, rp.ID))
	if code := c.closed(); code != 4003 {
		t.Fatalf("after deleting the key: closed with %d, want 4003", code)
	}
}

// Registration past the workspace's quota is 403, as FeatBit answers.
func TestRelayAgentQuota(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	in := newInstanceWith(t, dbURL, sdk.Options{RelayAgentQuota: 1}, slog.New(slog.DiscardHandler))
	prod, _ := in.project("web")
	rp := in.relayProxy("edge", prod)
	if resp, _ := in.request(http.MethodPost, "/api/public/agent/register", `"a1"`, "Authorization", rp.Key); resp.StatusCode != http.StatusOK {
		t.Fatalf("first agent: %d", resp.StatusCode)
	}
	if resp, _ := in.request(http.MethodPost, "/api/public/agent/register", `"a2"`, "Authorization", rp.Key); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("past the quota: %d, want 403", resp.StatusCode)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
