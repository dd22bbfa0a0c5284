package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// dbStore is a store on a fresh database, with the pool under it, which
// tests read behind the store's back.
type dbStore struct {
	*store.Store
	pool *pgxpool.Pool
}

// openStore returns a store signed in as its owner; private lets its
// webhooks reach loopback, as BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS allows
// in tests.
func openStore(t *testing.T, private bool) (*dbStore, *core.Actor, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("webhook-test-", 4))
	must(t, err)
	s := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost,
		LoginDelayStep: time.Millisecond, WebhookAllowPrivateNetworks: private})
	_, err = s.IAM().Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"})
	must(t, err)
	session, err := s.IAM().Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	must(t, err)
	a, err := s.IAM().Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
	must(t, err)
	return &dbStore{s, pool}, a, pool
}

func testStore(t *testing.T) (*dbStore, *core.Actor, *pgxpool.Pool) { return openStore(t, false) }

// loopbackStore is a store whose webhooks may reach loopback, with its
// Prod environment.
func loopbackStore(t *testing.T) (*dbStore, *core.Actor, core.Environment) {
	s, a, _ := openStore(t, true)
	prod, _ := prodAndDev(t, s, a)
	return s, a, prod
}

// prodAndDev creates a project and returns its two environments.
func prodAndDev(t *testing.T, s *dbStore, a *core.Actor) (core.Environment, core.Environment) {
	t.Helper()
	p, err := s.Projects().CreateProject(context.Background(), a, core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	return p.Environments[0], p.Environments[1]
}

func hookOn(t *testing.T, s *dbStore, a *core.Actor, env core.Environment, url, secret string, events ...string) webhooks.Webhook {
	t.Helper()
	w, err := s.Webhooks().CreateWebhook(context.Background(), a, webhooks.WebhookInput{Name: "hook " + uuid.NewString()[:8], URL: url,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: events, Secret: &secret, IsActive: true})
	must(t, err)
	return w
}

func scopeOf(envs ...core.Environment) []string {
	var ids []string
	for _, e := range envs {
		ids = append(ids, e.ID.String())
	}
	return []string{envs[0].ProjectID.String() + "/" + strings.Join(ids, ",")}
}

// runWorker runs a delivery worker until the test ends.
func runWorker(t *testing.T, s *store.Store, o Options) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, s, slog.New(slog.DiscardHandler), o); close(done) }()
	t.Cleanup(func() { stop(); <-done })
}

var fast = Options{Poll: 20 * time.Millisecond, Retries: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond},
	Timeout: 2 * time.Second}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantInvalid(t *testing.T, what string, err error, code string) {
	t.Helper()
	var verr *core.ValidationError
	if !errors.As(err, &verr) || !strings.Contains(strings.Join(verr.Codes, " "), code) {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// receiver is a webhook endpoint on loopback that records what it gets
// and answers with the statuses it is told, then 200.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
}

type received struct {
	event, delivery, signature, hookID string
	body                               []byte
	status                             int
	header                             http.Header
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.got = append(r.got, received{req.Header.Get(HeaderEvent), req.Header.Get(HeaderDelivery),
			req.Header.Get(HeaderSignature), req.Header.Get(HeaderHookID), body, status, req.Header.Clone()})
		r.mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprintf(w, "answered %d", status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// drained waits until the delivery outbox is empty: every queued delivery
// has had its last attempt (a row leaves the outbox only then), so no
// request comes after it. The worker tells no one when it is done, so the
// outbox is what is watched.
func drained(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	waitUntil(t, "the outbox to empty", func() bool {
		var n int
		must(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_outbox`).Scan(&n))
		return n == 0
	})
}

// waitUntil polls until cond holds or fails the test after ten seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited ten seconds for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
