package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// manualAgent is a FeatBit agent in manual mode, on loopback: it takes
// data only at /api/public/proxy/bootstrap, only with its key, and answers
// what it now serves, as featbit-agent's ProxyController does.
type manualAgent struct {
	*httptest.Server
	mu    sync.Mutex
	key   string
	items []struct {
		EnvID        string            `json:"envId"`
		Secrets      []json.RawMessage `json:"secrets"`
		FeatureFlags []json.RawMessage `json:"featureFlags"`
	}
	eventType string
	refused   int
}

func newManualAgent(t *testing.T) *manualAgent {
	ag := &manualAgent{}
	ag.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ag.mu.Lock()
		defer ag.mu.Unlock()
		if r.URL.Path != "/api/public/proxy/bootstrap" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if ag.key == "" || r.Header.Get("Authorization") != ag.key {
			ag.refused++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var ds struct {
			EventType string `json:"eventType"`
		}
		json.Unmarshal(body, &ds)
		var items struct {
			Items []struct {
				EnvID        string            `json:"envId"`
				Secrets      []json.RawMessage `json:"secrets"`
				FeatureFlags []json.RawMessage `json:"featureFlags"`
			} `json:"items"`
		}
		json.Unmarshal(body, &items)
		ag.eventType, ag.items = ds.EventType, items.Items
		io.WriteString(w, `{"serves":"web:prod","dataVersion":1767225600000}`)
	}))
	t.Cleanup(ag.Close)
	return ag
}

// In Chromium: create a relay proxy from the navigation with one
// environment, read its key once (the list then shows it masked), add a
// manual agent and sync it (the agent receives rp_full of that environment
// with the key), and remove an auto agent that stopped reporting.
func TestBrowserRelayProxies(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a := newLoopbackApp(t, &logRecorder{}, core.Options{WebhookAllowPrivateNetworks: true})
	ctx := context.Background()
	p, err := a.st.Projects().CreateProject(ctx, a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	prod := p.Environments[0]
	_, err = a.st.Flags().CreateFlag(ctx, a.ownerActor(), prod.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	must(t, err)
	agent := newManualAgent(t)

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("nav", chromedp.Navigate(a.srv.URL+"/projects"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=nav-relay-proxies]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=nav-relay-proxies]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-new]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=relay-new]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-form]`)))
	ch.fill(`#relay-name`, "Edge EU")
	ch.do("choose", chromedp.Click(chromedp.CSS(`[data-testid=relay-scopes] input[value="`+prod.ID.String()+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=relay-submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-key-value]`)))
	key := ch.value(`[data-testid=relay-key-value]`)
	if !strings.HasPrefix(key, "rp-") || len(key) != 43 {
		t.Fatalf("key %q: want rp- and 40 characters", key)
	}
	agent.mu.Lock()
	agent.key = key
	agent.mu.Unlock()

	ch.do("list", chromedp.Navigate(a.srv.URL+"/relay-proxies"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-row]`)))
	row := ch.eval(`document.querySelector("[data-testid=relay-row]").textContent`)
	if strings.Contains(row, key) || !strings.Contains(row, key[:15]+"**************") || !strings.Contains(row, "Web / "+prod.Name) {
		t.Fatalf("list row %q: want the key masked and the environment named", row)
	}

	ch.do("open", chromedp.Click(chromedp.CSS(`[data-testid=relay-row] a`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-agent-form]`)))
	if strings.Contains(ch.eval(`document.body.innerHTML`), key) {
		t.Fatal("the relay proxy's page shows its key again")
	}
	ch.fill(`#relay-agent-name`, "Air-gapped")
	ch.fill(`#relay-agent-host`, agent.URL)
	ch.do("add agent", chromedp.Click(chromedp.CSS(`[data-testid=relay-agent-add]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-agent]`)))
	ch.do("sync", chromedp.Click(chromedp.CSS(`[data-testid=relay-agent-sync]`)))
	ch.waitTrue("the sync's answer", `(document.getElementById("flash") || {textContent: ""}).textContent.match(/Agent synced|Sync failed/) !== null`)
	if flash := ch.eval(`document.getElementById("flash").textContent`); !strings.Contains(flash, "Agent synced: it now serves web:prod") {
		t.Fatalf("flash %q", flash)
	}
	agent.mu.Lock()
	got, items := agent.eventType, agent.items
	agent.mu.Unlock()
	if got != "rp_full" || len(items) != 1 || items[0].EnvID != prod.ID.String() || len(items[0].Secrets) != 2 || len(items[0].FeatureFlags) != 1 {
		t.Fatalf("the agent received %s with %+v: want rp_full of the one environment, its two secrets and its flag", got, items)
	}
	if last := ch.eval(`document.querySelector("[data-testid=relay-agent]").textContent`); !strings.Contains(last, "2026-01-01 00:00:00 UTC") {
		t.Errorf("agent row %q: want the data version the agent answered, as a time", last)
	}

	// An auto agent that last reported long ago may be removed.
	id, err := uuid.Parse(strings.TrimPrefix(ch.eval(`location.pathname`), "/relay-proxies/"))
	must(t, err)
	list, err := a.st.RelayProxies().Get(ctx, a.ownerActor(), id)
	must(t, err)
	must(t, a.st.RelayProxies().RegisterAgent(ctx, key, "edge-1", 9))
	must(t, a.st.RelayProxies().ReportStatus(ctx, list.ID, "edge-1", `{"serves":"web:prod","dataVersion":1767225600000,"syncState":"Interrupted","lastSyncedAt":"2026-01-01T00:00:00Z","reportedAt":"2026-01-01T00:00:00Z"}`))
	ch.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-auto-agent]`)))
	if st := ch.eval(`document.querySelector("[data-testid=relay-auto-agent]").textContent`); !strings.Contains(st, "Interrupted") || !strings.Contains(st, "web:prod") {
		t.Fatalf("auto agent row %q: want its sync state and what it serves", st)
	}
	ch.do("remove stale agent", chromedp.Click(chromedp.CSS(`[data-testid=relay-auto-agent-remove]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=relay-auto-agents] .empty`)))
}

// Without script: the form names what is wrong; the key is shown once, on
// the answer to the creation, and masked everywhere after; a member who
// may only list relay proxies sees them without the controls that change
// them, and is refused those changes.
func TestRelayProxyFormWithoutScript(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	p, err := a.st.Projects().CreateProject(ctx, a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	prod := p.Environments[0]
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/relay-proxies/new").status(http.StatusOK)
	b.post("/relay-proxies", url.Values{"name": {"Edge"}}).status(http.StatusBadRequest)
	if !b.last.has("error-scopes") {
		t.Error("a relay proxy with no environment: the form does not say so")
	}
	b.post("/relay-proxies", url.Values{"name": {"Edge"}, "scopes": {prod.ID.String()}}).status(http.StatusOK)
	key := attr(b.last.must("relay-key-value"), "value")
	if !strings.HasPrefix(key, "rp-") || len(key) != 43 {
		t.Fatalf("key %q", key)
	}
	if cc := b.last.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the key's page may be cached: Cache-Control %q", cc)
	}
	b.get("/relay-proxies").status(http.StatusOK)
	if strings.Contains(b.last.body, key) || !strings.Contains(b.last.body, key[:15]+"**************") {
		t.Fatal("the list does not mask the key")
	}
	href := attr(b.last.must("relay-row"), "data-name")
	if href != "Edge" {
		t.Fatalf("row %q", href)
	}

	lister, err := a.st.IAM().CreatePolicy(ctx, a.ownerActor(), iam.PolicyInput{Name: "Relay readers", Key: "relay-readers"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, a.ownerActor(), lister.ID, []access.Statement{{ID: "r", ResourceType: access.TypeRelayProxy,
		Effect: "allow", Actions: []string{string(access.ListRelayProxies)}, Resources: []string{"relay-proxy/*"}}})
	must(t, err)
	a.addMember("reader@example.com", lister.ID)
	reader := a.signedIn("reader@example.com", memberPassword)
	reader.get("/relay-proxies").status(http.StatusOK)
	if reader.last.has("relay-new") || !reader.last.has("relay-row") {
		t.Error("a member who may only list relay proxies is offered to create one, or does not see them")
	}
	reader.get("/relay-proxies/new").status(http.StatusForbidden)
	reader.post("/relay-proxies", url.Values{"name": {"Mine"}, "scopes": {prod.ID.String()}}).status(http.StatusForbidden)

	a.addMember("nobody@example.com")
	nobody := a.signedIn("nobody@example.com", memberPassword)
	nobody.get("/projects").status(http.StatusOK)
	if nobody.last.has("nav-relay-proxies") {
		t.Error("navigation offers relay proxies to a member who may not see them")
	}
	nobody.get("/relay-proxies").status(http.StatusForbidden)
}
