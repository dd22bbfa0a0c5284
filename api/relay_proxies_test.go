package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// FeatBit's UI, call by call (relay-proxy.service.ts): create with the
// key shown once, list it masked with what it serves, edit with the
// payload the drawer sends (agents with their UI fields, auto agents with
// their status as JSON text), sync a manual agent on loopback (which
// checks the key and receives rp_full), read the licence quota, delete.
func TestRelayProxiesAsFeatBitUIUsesThem(t *testing.T) {
	t.Parallel()
	s := newServerWith(t, core.Options{WebhookAllowPrivateNetworks: true})
	p := s.createProject("Web", "web")
	prod := p.Environments[0]

	var gotKey, gotBody string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health/liveness" {
			return
		}
		b, _ := io.ReadAll(r.Body)
		gotKey, gotBody = r.Header.Get("Authorization"), string(b)
		io.WriteString(w, `{"serves":"web:prod","dataVersion":1767225600000}`)
	}))
	defer agent.Close()

	created := decode[struct {
		ID         string   `json:"id"`
		Key        string   `json:"key"`
		Scopes     []string `json:"scopes"`
		AutoAgents []any    `json:"autoAgents"`
	}](t, s.do("POST", "/api/v1/relay-proxies", s.owner, map[string]any{"name": "Edge", "description": "", "isAllEnvs": false,
		"scopes": []string{prod.ID.String()}, "agents": []map[string]any{{"id": "m1", "name": "manual", "host": agent.URL, "syncAt": nil}}}).ok(t))
	if !strings.HasPrefix(created.Key, "rp-") || len(created.Key) != 43 || created.AutoAgents == nil {
		t.Fatalf("created %+v", created)
	}
	if used := decode[bool](t, s.do("GET", "/api/v1/relay-proxies/is-name-used?name=EDGE", s.owner, nil).ok(t)); !used {
		t.Fatal("is-name-used ignores case in FeatBit")
	}

	page := decode[struct {
		TotalCount int64 `json:"totalCount"`
		Items      []struct {
			Key    string   `json:"key"`
			Serves []string `json:"serves"`
		} `json:"items"`
	}](t, s.do("GET", "/api/v1/relay-proxies?name=dg&pageIndex=0&pageSize=10", s.owner, nil).ok(t))
	want := prod.ID.String() + ",Web/" + prod.Name
	if page.TotalCount != 1 || page.Items[0].Key != created.Key[:15]+"**************" || len(page.Items[0].Serves) != 1 || page.Items[0].Serves[0] != want {
		t.Fatalf("list %+v: want the key masked and serves %q", page, want)
	}

	// The drawer's edit: every environment now, the agent as the form holds it.
	s.do("PUT", "/api/v1/relay-proxies/"+created.ID, s.owner, map[string]any{"id": created.ID, "name": "Edge", "description": "eu",
		"isAllEnvs": true, "scopes": []string{}, "agents": []map[string]any{{"id": "m1", "name": "manual", "host": agent.URL, "syncAt": nil, "isNew": false}},
		"autoAgents": []any{}}).ok(t)

	res := decode[struct {
		Success     bool   `json:"success"`
		Serves      string `json:"serves"`
		DataVersion int64  `json:"dataVersion"`
		SyncAt      *string
	}](t, s.do("PUT", "/api/v1/relay-proxies/"+created.ID+"/agents/m1/sync?host="+agent.URL, s.owner, map[string]any{}).ok(t))
	if !res.Success || res.Serves != "web:prod" || res.DataVersion != 1767225600000 {
		t.Fatalf("sync %+v", res)
	}
	if gotKey != created.Key {
		t.Fatalf("the agent was sent %q as its key", gotKey)
	}
	var boot struct {
		EventType string `json:"eventType"`
		Items     []struct {
			EnvID   string            `json:"envId"`
			Secrets []json.RawMessage `json:"secrets"`
		} `json:"items"`
	}
	must(t, json.Unmarshal([]byte(gotBody), &boot))
	if boot.EventType != "rp_full" || len(boot.Items) != len(p.Environments) {
		t.Fatalf("bootstrap %s: want rp_full of every environment", gotBody)
	}
	s.do("PUT", "/api/v1/relay-proxies/"+created.ID+"/agents/nobody/sync", s.owner, map[string]any{}).fails(t, http.StatusUnprocessableEntity, "Inconsistent relay proxy data")
	if code := decode[int](t, s.do("GET", "/api/v1/relay-proxies/agent-availability?agentHost="+agent.URL, s.owner, nil).ok(t)); code != http.StatusOK {
		t.Fatalf("availability %d", code)
	}
	s.do("GET", "/api/v1/relay-proxies/agent-availability?agentHost=ftp://x", s.owner, nil).fails(t, http.StatusBadRequest, "agentHost_is_invalid")

	quota := decode[map[string]struct {
		Quota int64 `json:"quota"`
		Used  int64 `json:"used"`
	}](t, s.do("GET", "/api/v1/workspaces/license-quota", s.owner, nil).ok(t))
	if q := quota["auto-agents"]; q.Quota != 2147483647 || q.Used != 0 {
		t.Fatalf("quota %+v", quota)
	}

	s.do("POST", "/api/v1/relay-proxies", s.owner, map[string]any{"name": "x", "isAllEnvs": false, "scopes": []string{}}).fails(t, http.StatusBadRequest, "scopes_is_invalid")
	s.do("DELETE", "/api/v1/relay-proxies/"+created.ID, s.owner, nil).ok(t)
	s.do("DELETE", "/api/v1/relay-proxies/"+created.ID, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}
