package sdk_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
	"github.com/bunting-flags/bunting/web/sdk"
)

// budgetInstance starts an instance with caps and two organizations: the
// first one's project "web" and a second organization's project "api".
// Client secrets are public, so the tests flood with them from several
// loopback addresses.
func budgetInstance(t *testing.T, caps sdk.Connections, logs *httpxtest.LogBuffer) (in *instance, webProd, webDev, apiProd *env) {
	t.Helper()
	dbURL, _ := dbtest.NewDatabase(t)
	in = newInstanceWith(t, dbURL, sdk.Options{Connections: caps, RefusalLog: 50 * time.Millisecond},
		slog.New(slog.NewTextHandler(logs, nil)))
	webProd, webDev = in.project("web") // before there are two organizations to choose from
	other, err := in.store.IAM().CreateOrganization(context.Background(), in.actor(), iam.NewOrganizationInput{Name: "Other", Key: "other"})
	must(t, err)
	apiProd, _ = in.project("api", "Organization", other.ID.String())
	return in, webProd, webDev, apiProd
}

// flood opens client connections with secrets, in turn, from addresses
// 127.0.0.2 on (each address its own), n in all, and returns the statuses
// counted; the connections opened stay open.
func (in *instance) flood(n, addresses int, secrets ...string) map[int]int {
	in.t.Helper()
	got := map[int]int{}
	for i := range n {
		ws, status, retry := in.tryDialAs(from(fmt.Sprintf("127.0.0.%d", 2+i%addresses)), "client", secrets[i%len(secrets)])
		if ws == nil && retry != "1" {
			in.t.Errorf("refused with %d and Retry-After %q, want 1", status, retry)
		}
		got[status]++
	}
	return got
}

// TestStreamingBudgetPerOrganization: one organization's public client
// secrets, used from several addresses, fill only that organization's
// client share (429 beyond, naming the organization's or the
// environment's cap); the same organization's server SDKs keep their part,
// and another organization's server SDK connects.
func TestStreamingBudgetPerOrganization(t *testing.T) {
	t.Parallel()
	var logs httpxtest.LogBuffer
	// In all 10 (5 for clients); an organization 6 (3 for clients); an
	// environment 4 (2 for clients).
	in, webProd, webDev, apiProd := budgetInstance(t, sdk.Connections{Total: 10, PerSecret: 10, PerAddress: 3,
		PerOrg: 6, PerEnv: 4, ClientShare: 50}, &logs)

	got := in.flood(20, 5, webProd.client, webDev.client)
	if got[101] != 3 || got[429] != 17 {
		t.Fatalf("one organization's client flood: %v, want 3 connected (its client share) and 17 refused with 429", got)
	}
	for _, secret := range []string{webProd.server, webDev.server} {
		if ws, status, _ := in.tryDial(from("127.0.0.9"), secret); ws == nil {
			t.Errorf("the flooded organization's own server SDK: %d, want 101", status)
		} else if !pings(t, ws) {
			t.Error("the flooded organization's server SDK does not answer")
		}
	}
	ws, status, _ := in.tryDial(nil, apiProd.server)
	if ws == nil {
		t.Fatalf("another organization's server SDK during the flood: %d, want 101", status)
	}
	if !pings(t, ws) {
		t.Error("another organization's server SDK does not answer")
	}

	waitFor(t, "the refusal summary", func() bool { return strings.Contains(logs.String(), "per organization") })
	for _, want := range []string{`limit="client connections per organization" key="organization `,
		`limit="client connections per environment" key="environment ` + webProd.id.String()} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no refusal summary %s in\n%s", want, logs.String())
		}
	}
}

// TestStreamingServerShare: client connections of every organization
// together never take the server SDKs' share of the total (503 beyond their
// share); server SDKs fill the rest, and a connection past the total is
// refused with 503 too.
func TestStreamingServerShare(t *testing.T) {
	t.Parallel()
	var logs httpxtest.LogBuffer
	// Only the total binds: 6 in all, 3 of them for clients.
	in, webProd, webDev, apiProd := budgetInstance(t, sdk.Connections{Total: 6, PerSecret: 10, PerAddress: 10,
		ClientShare: 50}, &logs)

	got := in.flood(12, 4, webProd.client, apiProd.client, webDev.client)
	if got[101] != 3 || got[503] != 9 {
		t.Fatalf("clients of two organizations: %v, want 3 connected (the client share) and 9 refused with 503", got)
	}
	for i, secret := range []string{webProd.server, apiProd.server, webDev.server} {
		if ws, status, _ := in.tryDial(from("127.0.0.9"), secret); ws == nil {
			t.Errorf("server SDK %d after the client flood: %d, want 101", i, status)
		}
	}
	if ws, status, _ := in.tryDial(nil, apiProd.server); ws != nil || status != http.StatusServiceUnavailable {
		t.Errorf("a seventh connection: %d, want 503 (6 in all)", status)
	}
	waitFor(t, "the refusal summary", func() bool { return strings.Contains(logs.String(), `limit="client connections" key=all`) })
}

// TestStreamingClientSecretCountsAsClient: a client secret presented as a
// server SDK's still counts against the client share, and is closed with
// 4003 as FeatBit does; it never takes a server SDK's place.
func TestStreamingClientSecretCountsAsClient(t *testing.T) {
	t.Parallel()
	var logs httpxtest.LogBuffer
	in, webProd, _, _ := budgetInstance(t, sdk.Connections{Total: 4, PerSecret: 10, PerAddress: 10, ClientShare: 50}, &logs)
	if got := in.flood(2, 2, webProd.client); got[101] != 2 {
		t.Fatalf("two clients: %v, want both connected", got)
	}
	ws, status, _ := in.tryDial(nil, webProd.client)
	if ws != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("a client secret claiming to be a server SDK past the client share: %d, want 503", status)
	}
	ws, _, _ = in.tryDial(nil, webProd.server)
	if ws == nil || !pings(t, ws) {
		t.Fatal("a server SDK is refused with the client share full")
	}
}
