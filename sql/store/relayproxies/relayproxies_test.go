package relayproxies_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// A relay proxy's key is answered once, whole; afterwards lists show its
// first 15 characters and FeatBit's mask, the database holds no copy in
// clear, and the key opens exactly the environments of its scope.
func TestKeyShownOnceStoredHashed(t *testing.T) {
	t.Parallel()
	s, a, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	rp, err := s.RelayProxies().Create(ctx, a, relayproxies.Input{Name: "Edge EU", Scopes: []string{prod.ID.String()}})
	storetest.Must(t, err)
	if !strings.HasPrefix(rp.Key, "rp-") || len(rp.Key) != 43 {
		t.Fatalf("key %q: want rp- and 40 characters", rp.Key)
	}
	page, err := s.RelayProxies().List(ctx, a, relayproxies.Filter{Page: core.Page{Size: 10}})
	storetest.Must(t, err)
	if page.TotalCount != 1 || page.Items[0].Key != rp.Key[:15]+"**************" {
		t.Fatalf("list %+v: want the key masked", page)
	}
	want := prod.ID.String() + ",Web/" + prod.Name
	if got := page.Items[0].Serves; len(got) != 1 || got[0] != want {
		t.Fatalf("serves %v, want [%s]", got, want)
	}
	var stored int
	storetest.Must(t, pool.QueryRow(ctx, `SELECT count(*) FROM relay_proxies r WHERE position($1 in r::text) > 0`, rp.Key).Scan(&stored))
	if stored != 0 {
		t.Fatal("the key is stored in clear")
	}
	relay, err := s.RelayProxies().RelayByKey(ctx, rp.Key)
	storetest.Must(t, err)
	if ids := relay.EnvIDs(); len(ids) != 1 || ids[0] != prod.ID || !relay.HasServerSecret() {
		t.Fatalf("the key opens %v, want only %s with its secrets", ids, prod.ID)
	}
	for _, sc := range relay.Envs[0].Secrets {
		if sc.EnvID != prod.ID || sc.ProjectKey != "web" || sc.EnvKey != prod.Key {
			t.Fatalf("secret %+v", sc)
		}
	}
	if _, err := s.RelayProxies().RelayByKey(ctx, rp.Key[:42]+"x"); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("a wrong key: %v", err)
	}
}

// Bad input names its field; names are unique in the organization,
// ignoring case; a relay proxy's changes need ManageRelayProxies, reading
// them ListRelayProxies, and a scope needs the right to read it.
func TestInputAndRights(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	bad := []struct {
		in   relayproxies.Input
		code string
	}{
		{relayproxies.Input{Scopes: []string{prod.ID.String()}}, "name_is_required"},
		{relayproxies.Input{Name: "x"}, "scopes_is_invalid"},
		{relayproxies.Input{Name: "x", Scopes: []string{"not-a-guid"}}, "scopes_is_invalid"},
		{relayproxies.Input{Name: "x", Scopes: []string{uuid.NewString()}}, "scopes_is_invalid"},
		{relayproxies.Input{Name: "x", IsAllEnvs: true, Agents: []relayproxies.Agent{{ID: "a", Name: "a"}}}, "agents_is_invalid"},
		{relayproxies.Input{Name: "x", IsAllEnvs: true, Agents: []relayproxies.Agent{{ID: "a", Name: "a", Host: "ftp://h"}}}, "agents_is_invalid"},
	}
	for _, b := range bad {
		if _, err := s.RelayProxies().Create(ctx, a, b.in); err == nil || !strings.Contains(err.Error(), b.code) {
			t.Errorf("%+v: %v, want %s", b.in, err, b.code)
		}
	}
	rp, err := s.RelayProxies().Create(ctx, a, relayproxies.Input{Name: "Edge", IsAllEnvs: true})
	storetest.Must(t, err)
	if _, err := s.RelayProxies().Create(ctx, a, relayproxies.Input{Name: "EDGE", IsAllEnvs: true}); err != core.ErrNameUsed {
		t.Fatalf("the same name: %v", err)
	}
	if used, err := s.RelayProxies().IsNameUsed(ctx, a, "edge"); err != nil || !used {
		t.Fatalf("is-name-used: %v %v", used, err)
	}
	lister := *a
	lister.Granted = []access.Statement{{ResourceType: "relay-proxy", Effect: "allow", Actions: []string{"ListRelayProxies"}, Resources: []string{"relay-proxy/*"}}}
	if _, err := s.RelayProxies().List(ctx, &lister, relayproxies.Filter{Page: core.Page{Size: 10}}); err != nil {
		t.Fatalf("list with ListRelayProxies: %v", err)
	}
	if err := s.RelayProxies().Delete(ctx, &lister, rp.ID); err != core.ErrForbidden {
		t.Fatalf("delete without ManageRelayProxies: %v", err)
	}
	manager := lister
	manager.Granted = append(manager.Granted, access.Statement{ResourceType: "relay-proxy", Effect: "allow",
		Actions: []string{"ManageRelayProxies"}, Resources: []string{"relay-proxy/*"}})
	if _, err := s.RelayProxies().Create(ctx, &manager, relayproxies.Input{Name: "y", Scopes: []string{prod.ID.String()}}); err != core.ErrForbidden {
		t.Fatalf("a scope the manager may not read: %v", err)
	}
	nobody := *a
	nobody.Granted = nil
	if _, err := s.RelayProxies().List(ctx, &nobody, relayproxies.Filter{Page: core.Page{Size: 10}}); err != core.ErrForbidden {
		t.Fatalf("list without rights: %v", err)
	}
}

// Agents register under the quota; a status report is kept; an update
// that leaves an auto agent out removes it; every change is audited and a
// change or deletion is announced to connected relays.
func TestAgentsQuotaAuditAndFeed(t *testing.T) {
	t.Parallel()
	s, a, pool := storetest.New(t)
	ctx := context.Background()
	events := storetest.Listen(t, s)
	prod, _ := storetest.ProdAndDev(t, s, a)
	rp, err := s.RelayProxies().Create(ctx, a, relayproxies.Input{Name: "Edge", Scopes: []string{prod.ID.String()},
		Agents: []relayproxies.Agent{{ID: "m1", Name: "manual", Host: "http://10.0.0.1:6100"}}})
	storetest.Must(t, err)
	storetest.Must(t, s.RelayProxies().RegisterAgent(ctx, rp.Key, "agent-1", 2))
	storetest.Must(t, s.RelayProxies().RegisterAgent(ctx, rp.Key, "agent-1", 2)) // again: nothing changes
	storetest.Must(t, s.RelayProxies().RegisterAgent(ctx, rp.Key, "agent-2", 2))
	if err := s.RelayProxies().RegisterAgent(ctx, rp.Key, "agent-1", 2); !errors.Is(err, relayproxies.ErrQuota) {
		t.Fatalf("at the quota: %v (FeatBit refuses even a registered agent)", err)
	}
	if err := s.RelayProxies().RegisterAgent(ctx, "rp-unknown", "agent-3", 9); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("a bad key: %v", err)
	}
	status := `{"serves":"web:prod","dataVersion":1700000000000,"syncState":"Stable","lastSyncedAt":null,"reportedAt":"2026-01-01T00:00:00Z"}`
	storetest.Must(t, s.RelayProxies().ReportStatus(ctx, rp.ID, "agent-1", status))
	q, err := s.RelayProxies().LicenseQuota(ctx, a, 9)
	storetest.Must(t, err)
	if q["auto-agents"] != (relayproxies.Quota{Quota: 9, Used: 2}) {
		t.Fatalf("quota %+v", q)
	}
	it, err := s.RelayProxies().Get(ctx, a, rp.ID)
	storetest.Must(t, err)
	if len(it.AutoAgents) != 2 || it.AutoAgents[0].ID != "agent-2" || it.AutoAgents[1].Status != status {
		t.Fatalf("auto agents %+v: want newest first, the status kept", it.AutoAgents)
	}
	storetest.Must(t, s.RelayProxies().Update(ctx, a, rp.ID, relayproxies.Input{Name: "Edge", IsAllEnvs: true,
		Agents: it.Agents, AutoAgents: it.AutoAgents[1:]}))
	it, err = s.RelayProxies().Get(ctx, a, rp.ID)
	storetest.Must(t, err)
	if len(it.AutoAgents) != 1 || it.AutoAgents[0].ID != "agent-1" || !it.IsAllEnvs || len(it.Agents) != 1 {
		t.Fatalf("after the update %+v", it)
	}
	waitRelayEvent(t, events, rp.ID)
	storetest.Must(t, s.RelayProxies().Delete(ctx, a, rp.ID))
	waitRelayEvent(t, events, rp.ID)
	if _, err := s.RelayProxies().RelayByKey(ctx, rp.Key); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("a deleted key: %v", err)
	}
	var ops []string
	rows, err := pool.Query(ctx, `SELECT operation || coalesce(':' || nullif(comment, ''), '') FROM audit_logs
		WHERE ref_type = 'RelayProxy' AND ref_id = $1 ORDER BY created_at, id`, rp.ID.String())
	storetest.Must(t, err)
	for rows.Next() {
		var op string
		storetest.Must(t, rows.Scan(&op))
		ops = append(ops, op)
	}
	want := []string{"Create", "Update:auto agent agent-1 registered", "Update:auto agent agent-2 registered", "Update", "Remove"}
	if strings.Join(ops, "|") != strings.Join(want, "|") {
		t.Fatalf("audit %v, want %v", ops, want)
	}
}

func waitRelayEvent(t *testing.T, events *storetest.Events, id uuid.UUID) {
	t.Helper()
	for {
		ev := storetest.Next(t, events)
		if ev.Kind == feed.EventRelayProxy && ev.ID == id {
			return
		}
	}
}

// An agent's status reads as FeatBit's agent writes it: times with or
// without their zone (UTC), null, or nonsense (left out).
func TestParseStatus(t *testing.T) {
	t.Parallel()
	st := relayproxies.ParseStatus(`{"serves":"web:prod","dataVersion":1767225600000,"syncState":"Stable","lastSyncedAt":null,"reportedAt":"2026-01-02T03:04:05.1234567"}`)
	if st.Serves != "web:prod" || st.DataVersion != 1767225600000 || st.SyncState != "Stable" || st.LastSyncedAt != nil ||
		st.ReportedAt == nil || st.ReportedAt.Format(time.RFC3339) != "2026-01-02T03:04:05Z" {
		t.Fatalf("%+v", st)
	}
	if st := relayproxies.ParseStatus(`{"reportedAt":"yesterday"}`); st.ReportedAt != nil {
		t.Fatalf("a time that is none: %+v", st)
	}
	if st := relayproxies.ParseStatus(`not json`); st != (relayproxies.Status{}) {
		t.Fatalf("not JSON: %+v", st)
	}
}

// A scope whose environment was deleted is dropped when the relay proxy is
// saved as it was shown, not refused; the key stops serving it at once.
func TestDeletedEnvironmentLeavesTheScope(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, dev := storetest.ProdAndDev(t, s, a)
	rp, err := s.RelayProxies().Create(ctx, a, relayproxies.Input{Name: "Edge", Scopes: []string{prod.ID.String(), dev.ID.String()}})
	storetest.Must(t, err)
	storetest.Must(t, s.Projects().DeleteEnvironment(ctx, a, dev.ProjectID, dev.ID))
	relay, err := s.RelayProxies().RelayByKey(ctx, rp.Key)
	storetest.Must(t, err)
	if ids := relay.EnvIDs(); len(ids) != 1 || ids[0] != prod.ID {
		t.Fatalf("the key serves %v after Dev's deletion, want only Prod", ids)
	}
	it, err := s.RelayProxies().Get(ctx, a, rp.ID)
	storetest.Must(t, err)
	storetest.Must(t, s.RelayProxies().Update(ctx, a, rp.ID, relayproxies.Input{Name: it.Name, Scopes: it.Scopes}))
	it, err = s.RelayProxies().Get(ctx, a, rp.ID)
	storetest.Must(t, err)
	if len(it.Scopes) != 1 || it.Scopes[0] != prod.ID.String() {
		t.Fatalf("scopes %v after saving, want only Prod", it.Scopes)
	}
	if err := s.RelayProxies().Update(ctx, a, rp.ID, relayproxies.Input{Name: it.Name, Scopes: []string{dev.ID.String()}}); err == nil ||
		!strings.Contains(err.Error(), "scopes_is_invalid") {
		t.Fatalf("only a deleted environment: %v", err)
	}
}
