// Package feedtest runs the change listener in tests, as every instance runs
// one, and waits on what it reads: tests wait on these events, not on time.
package feedtest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bunting-flags/bunting/sql/feed"
)

// wait bounds how long a test waits for the listener; it only ever runs
// out when something is broken.
const wait = 10 * time.Second

// Run runs a listener of cfg until the test ends, and returns once it reads:
// its first event, the reset it starts with, has been published.
func Run(t testing.TB, cfg feed.Config) {
	t.Helper()
	sub := cfg.Changes.Subscribe()
	defer sub.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); feed.NewListener(cfg, feed.Options{}).Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-sub.Ready():
	case <-time.After(wait):
		t.Fatal("the change listener did not start reading")
	}
}

// Execer is a database connection or pool to record a marker change with.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Settle waits until every change committed so far, and every notification
// sent before it, has reached n's subscribers: it records a marker change
// and wakes the listeners, and PostgreSQL delivers notifications in commit
// order on the listening connection, so once the marker is read everything
// before it has been.
func Settle(t testing.TB, db Execer, n *feed.Notifier) {
	t.Helper()
	sub := n.Subscribe()
	defer sub.Close()
	ctx := context.Background()
	marker := uuid.New()
	if _, err := db.Exec(ctx, `INSERT INTO change_outbox (event) VALUES ($1::json)`,
		`{"kind":"test-marker","id":"`+marker.String()+`"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `SELECT pg_notify('bunting_changes', '')`); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(wait)
	for {
		select {
		case <-sub.Ready():
			for _, ev := range sub.Take() {
				if ev.ID == marker {
					return
				}
			}
		case <-deadline:
			t.Fatal("the marker change was not read")
		}
	}
}
