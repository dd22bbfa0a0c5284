// Package storetest holds what the tests of the store's packages share: a
// Store over a fresh database with its owner signed in, a project with two
// environments, and a subscription to the change feed read one event at a
// time. Only tests import it.
package storetest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Options are the store's options in tests: the cheapest password hash and
// a short sign-in delay, so the suite stays fast.
var Options = core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond}

// Keys are the keys of every test store, derived from a fixed secret.
func Keys(t testing.TB) core.Keys {
	t.Helper()
	keys, err := core.DeriveKeys(strings.Repeat("store-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// New is a Store over a fresh database with its owner signed in.
func New(t testing.TB) (*store.Store, *core.Actor, *pgxpool.Pool) {
	t.Helper()
	return NewWith(t, Options)
}

// NewWith is New with the store's options opts (a setting a test turns on).
func NewWith(t testing.TB, opts core.Options) (*store.Store, *core.Actor, *pgxpool.Pool) {
	t.Helper()
	pool := dbtest.New(t, core.ConfigurePool)
	s := store.New(pool, Keys(t), slog.New(slog.DiscardHandler), opts)
	pools.Store(s, pool)
	t.Cleanup(func() { pools.Delete(s) })
	return s, Owner(t, s.IAM()), pool
}

// pools is the pool under each store New made, for Pool.
var pools sync.Map

// Pool is the pool under s, which New made: a test reads and writes the
// database behind the store's back with it (no surface can reach it).
func Pool(t testing.TB, s *store.Store) *pgxpool.Pool {
	t.Helper()
	p, ok := pools.Load(s)
	if !ok {
		t.Fatal("storetest.Pool: the store was not made by storetest.New")
	}
	return p.(*pgxpool.Pool)
}

// Owner bootstraps the workspace of a fresh database through the identity
// seam and signs its owner in.
func Owner(t testing.TB, s *iam.IAM) *core.Actor {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"}); err != nil {
		t.Fatal(err)
	}
	session, err := s.Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Must fails the test on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ProdAndDev creates a project and returns its two environments.
func ProdAndDev(t *testing.T, s *store.Store, a *core.Actor) (core.Environment, core.Environment) {
	t.Helper()
	p, err := s.Projects().CreateProject(context.Background(), a, core.ProjectInput{Name: "Web", Key: "web"})
	if err != nil {
		t.Fatal(err)
	}
	return p.Environments[0], p.Environments[1]
}

// Events reads a subscription one event at a time.
type Events struct {
	sub *feed.Subscription
	buf []feed.Event
}

// RunFeed runs s's change listener until the test ends, as every instance
// runs one.
func RunFeed(t *testing.T, s *store.Store) {
	t.Helper()
	feedtest.Run(t, s.Projects().Feed())
}

// Listen runs s's change listener until the test ends and subscribes to it.
func Listen(t *testing.T, s *store.Store) *Events {
	t.Helper()
	// Subscribe before the listener reads: the reset it sends on starting
	// would otherwise go out before anyone listens.
	sub := s.Projects().Changes().Subscribe()
	t.Cleanup(sub.Close)
	RunFeed(t, s)
	// Listening begins with a reset, once every channel is listened on.
	evs := &Events{sub: sub}
	if ev := Next(t, evs); ev.Kind != feed.EventReset {
		t.Fatalf("first event %+v, want a reset", ev)
	}
	return evs
}

// Next waits for the next event. The bound is generous: the tests are about
// which events arrive; the one-second delivery to SDKs is measured end to
// end by the Node SDK test, and a loaded CI machine must not fail them.
func Next(t *testing.T, e *Events) feed.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(e.buf) == 0 {
		select {
		case <-e.sub.Ready():
			e.buf = e.sub.Take()
		case <-deadline:
			t.Fatal("no event within ten seconds")
		}
	}
	ev := e.buf[0]
	e.buf = e.buf[1:]
	return ev
}
