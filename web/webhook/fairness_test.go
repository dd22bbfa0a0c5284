package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// hangingReceivers are n webhook endpoints on loopback that take every
// request and never answer until release (or the test's end); got counts
// the requests.
func hangingReceivers(t *testing.T, n int) (urls []string, got *atomic.Int64, release func()) {
	hang := make(chan struct{})
	got = new(atomic.Int64)
	var servers []*httptest.Server
	for range n {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Add(1)
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}))
		servers = append(servers, srv)
		urls = append(urls, srv.URL)
	}
	release = sync.OnceFunc(func() { close(hang) })
	t.Cleanup(func() {
		release()
		for _, srv := range servers {
			srv.Close()
		}
	})
	return urls, got, release
}

// One organization's receivers that hang hold only its own share of the
// delivery worker: another organization's delivery is sent at once, long
// before the hanging requests time out.
func TestWebhookDeliveriesAreFairAcrossOrganizations(t *testing.T) {
	t.Parallel()
	s, a, prodA := loopbackStore(t)
	ctx := context.Background()

	// Organization A: eight webhooks whose receivers hang, and three flags
	// created, so 24 deliveries are queued before B's.
	urls, hanging, release := hangingReceivers(t, 8)
	for _, u := range urls {
		hookOn(t, s, a, prodA, u, "", webhooks.EventFlagCreated)
	}
	for i := range 3 {
		key := fmt.Sprintf("a%d", i)
		_, err := s.Flags().CreateFlag(ctx, a, prodA.ID, flagstore.FlagInput{Name: key, Key: key})
		must(t, err)
	}

	// Organization B, with one receiver that answers at once.
	org, err := s.IAM().CreateOrganization(ctx, a, iam.NewOrganizationInput{Name: "Other", Key: "other"})
	must(t, err)
	b, err := s.IAM().UserActor(ctx, a.UserID, "", org.ID.String())
	must(t, err)
	p, err := s.Projects().CreateProject(ctx, b, core.ProjectInput{Name: "Api", Key: "api"})
	must(t, err)
	prodB := p.Environments[0]
	fast := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case fast <- time.Now():
		default:
		}
	}))
	t.Cleanup(srv.Close)
	hookOn(t, s, b, prodB, srv.URL, "", webhooks.EventFlagCreated)

	// The hanging requests would time out after a minute; the worker has
	// its default eight slots.
	const timeout = time.Minute
	runWorker(t, s.Store, Options{Poll: 20 * time.Millisecond, Timeout: timeout})
	t.Cleanup(release) // before the worker stops, which waits for its requests
	waitUntil(t, "A's receivers to be called", func() bool { return hanging.Load() >= 2 })

	start := time.Now()
	_, err = s.Flags().CreateFlag(ctx, b, prodB.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	select {
	case at := <-fast:
		t.Logf("B's delivery arrived %v after its change, while %d of A's requests hang", at.Sub(start), hanging.Load())
	case <-time.After(timeout / 4):
		t.Fatalf("B's delivery did not arrive in %v: A's %d hanging requests hold the worker", timeout/4, hanging.Load())
	}
	// Nothing of A's has timed out: B did not just get a slot A gave back.
	var attemptsA int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.organization_id = $1`, a.OrgID).Scan(&attemptsA))
	if attemptsA != 0 {
		t.Fatalf("%d of A's attempts ended before B's delivery, want none", attemptsA)
	}
}
