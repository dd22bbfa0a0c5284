package feed

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/dbtest"
)

// instance is what one Bunting instance runs for its changes: a listener
// with its notifier, and the signal its writes give after commit.
type instance struct {
	t       *testing.T
	pool    *pgxpool.Pool
	changes *Notifier
	commits chan struct{}
	sub     *Subscription
	buf     []Event
}

func newInstance(t *testing.T, pool *pgxpool.Pool) *instance {
	in := &instance{t: t, pool: pool, changes: NewNotifier(), commits: make(chan struct{}, 1)}
	// Subscribed before the listener reads, so the first read's events are seen.
	in.sub = in.changes.Subscribe()
	t.Cleanup(in.sub.Close)
	return in
}

// run runs a listener from position from until stop, which returns where
// it stopped reading.
func (in *instance) run(from string) (stop func() string) {
	l := NewListener(Config{Pool: in.pool, Changes: in.changes, Committed: in.commits, Log: slog.New(slog.DiscardHandler)},
		Options{From: from, ReconnectDelay: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { l.Run(ctx) })
	stop = func() string { cancel(); wg.Wait(); return l.Position() }
	in.t.Cleanup(func() { stop() })
	deadline := time.Now().Add(10 * time.Second)
	for !in.changes.Live() {
		if time.Now().After(deadline) {
			in.t.Fatal("the listener never listened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return stop
}

// committed is what the store does after a transaction that recorded
// changes commits.
func (in *instance) committed() {
	select {
	case in.commits <- struct{}{}:
	default:
	}
}

// next waits for the next event.
func (in *instance) next() Event {
	in.t.Helper()
	deadline := time.After(10 * time.Second)
	for len(in.buf) == 0 {
		select {
		case <-in.sub.Ready():
			in.buf = in.sub.Take()
		case <-deadline:
			in.t.Fatal("no event within ten seconds")
		}
	}
	ev := in.buf[0]
	in.buf = in.buf[1:]
	return ev
}

// flagChange is the n-th change of flag id, n carried in Since.
func flagChange(id uuid.UUID, n int) Event {
	return Event{Kind: EventFlag, ID: id, Since: time.Unix(int64(n), 0).UTC()}
}

func record(t *testing.T, ctx context.Context, q db.DBTX, ev Event) {
	t.Helper()
	event, err := Encode(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.New(q).RecordChange(ctx, event); err != nil {
		t.Fatal(err)
	}
}

// A change that takes its sequence number first and commits last is read
// after the one that committed first, and neither is read twice.
func TestChangesCommittedOutOfOrderAreEachReadOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t, func(*pgxpool.Config) {})
	in := newInstance(t, pool)
	in.run("")
	if ev := in.next(); ev.Kind != EventReset {
		t.Fatalf("first event %+v, want a reset: nothing was read before", ev)
	}
	first, second := uuid.New(), uuid.New()
	slow, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	record(t, ctx, slow, flagChange(first, 1))
	fast, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	record(t, ctx, fast, flagChange(second, 1))
	if err := fast.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in.committed()
	if ev := in.next(); ev.ID != second {
		t.Fatalf("got %+v, want the change that committed", ev)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in.committed()
	if ev := in.next(); ev.ID != first {
		t.Fatalf("got %+v, want the change with the lower sequence number that committed later", ev)
	}
	marker := uuid.New()
	record(t, ctx, pool, flagChange(marker, 1))
	in.committed()
	if ev := in.next(); ev.ID != marker {
		t.Fatalf("got %+v, want nothing read twice before the marker", ev)
	}
}

// Writers on two connections change three flags at once, each change
// locking its flag's row first as the store's do: every change is read
// once, and each flag's in the order they were made.
func TestConcurrentChangesAreReadOnceInOrderPerFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t, func(*pgxpool.Config) {})
	flags := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	if _, err := pool.Exec(ctx, `CREATE TABLE test_flags (id uuid PRIMARY KEY, changes int NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	for _, id := range flags {
		if _, err := pool.Exec(ctx, `INSERT INTO test_flags (id) VALUES ($1)`, id); err != nil {
			t.Fatal(err)
		}
	}
	in := newInstance(t, pool)
	in.run("")
	in.next() // the reset of the first read

	const perWriter = 60
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Go(func() {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Release()
			for i := range perWriter {
				id := flags[(i+w)%len(flags)]
				err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
					var n int
					if err := tx.QueryRow(ctx, `UPDATE test_flags SET changes = changes + 1 WHERE id = $1 RETURNING changes`, id).Scan(&n); err != nil {
						return err
					}
					event, err := Encode(ctx, flagChange(id, n))
					if err != nil {
						return err
					}
					return db.New(tx).RecordChange(ctx, event)
				})
				if err != nil {
					errs <- err
					return
				}
				in.committed()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last := map[uuid.UUID]int64{}
	for range 2 * perWriter {
		ev := in.next()
		n := ev.Since.Unix()
		if ev.Kind != EventFlag || n != last[ev.ID]+1 {
			t.Fatalf("flag %s: change %d after change %d; want each once, in order", ev.ID, n, last[ev.ID])
		}
		last[ev.ID] = n
	}
}

// A listener started from where an earlier one stopped (an instance
// restarted) reads the changes made while none ran, in order, and none of
// those the earlier one read.
func TestRestartedListenerCatchesUpFromTheOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t, func(*pgxpool.Config) {})
	before := newInstance(t, pool)
	stop := before.run("")
	before.next() // the reset of the first read
	id := uuid.New()
	record(t, ctx, pool, flagChange(id, 1))
	before.committed()
	if ev := before.next(); ev.Since.Unix() != 1 {
		t.Fatalf("got %+v, want change 1", ev)
	}
	position := stop()

	for n := 2; n <= 4; n++ {
		record(t, ctx, pool, flagChange(id, n))
	}
	after := newInstance(t, pool)
	after.run(position)
	for n := int64(2); n <= 4; n++ {
		if ev := after.next(); ev.Kind != EventFlag || ev.Since.Unix() != n {
			t.Fatalf("got %+v, want change %d", ev, n)
		}
	}
}

// The outbox keeps its changes for Options.Keep; a listener that had not
// read changes pruned since starts over with a reset.
func TestPrunedChangesAreAReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t, func(*pgxpool.Config) {})
	q := db.New(pool)
	position, err := q.ChangesPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	record(t, ctx, pool, flagChange(uuid.New(), 1))
	if err := q.PruneChanges(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	var kept int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM change_outbox`).Scan(&kept); err != nil || kept != 1 {
		t.Fatalf("%d changes kept (%v), want the one newer than an hour", kept, err)
	}
	if err := q.PruneChanges(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	in := newInstance(t, pool)
	in.run(position)
	if ev := in.next(); ev.Kind != EventReset {
		t.Fatalf("got %+v, want a reset in place of the pruned change", ev)
	}
}
