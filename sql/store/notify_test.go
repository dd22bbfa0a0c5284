package store

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// events reads a subscription one event at a time.
type events struct {
	sub *Subscription
	buf []Event
}

// listen runs s's notifier until the test ends and subscribes to it.
func listen(t *testing.T, s *Store) *events {
	t.Helper()
	// Subscribe before the notifier connects: the reset it sends on
	// connecting would otherwise go out before anyone listens.
	sub := s.Changes().Subscribe()
	t.Cleanup(sub.Close)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Listen(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	// Listening begins with a reset, once every channel is listened on.
	evs := &events{sub: sub}
	if ev := next(t, evs); ev.Kind != EventReset {
		t.Fatalf("first event %+v, want a reset", ev)
	}
	return evs
}

// settle waits until every notification committed so far, on any channel,
// has reached s's listener: PostgreSQL delivers notifications in commit
// order, so once a marker sent now arrives, everything before it has.
func settle(t *testing.T, s *Store) {
	t.Helper()
	sub := s.Changes().Subscribe()
	defer sub.Close()
	marker := uuid.New()
	if _, err := s.pool.Exec(context.Background(), `SELECT pg_notify($1, $2)`, changesChannel,
		`{"kind":"test-marker","id":"`+marker.String()+`"}`); err != nil {
		t.Fatal(err)
	}
	for evs := (&events{sub: sub}); ; {
		if next(t, evs).ID == marker {
			return
		}
	}
}

// next waits for the next event. The bound is generous: these tests are
// about which events arrive; how fast changes reach SDKs is measured end to
// end by bunting-bench's stream-fanout, and a loaded CI machine must not
// fail these.
func next(t *testing.T, e *events) Event {
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

// prodAndDev creates a project and returns its two environments.
func prodAndDev(t *testing.T, s *Store, a *Actor) (Environment, Environment) {
	t.Helper()
	p, err := s.CreateProject(context.Background(), a, ProjectInput{Name: "Web", Key: "web"})
	if err != nil {
		t.Fatal(err)
	}
	return p.Environments[0], p.Environments[1]
}

func TestChangeEvents(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	ctx := context.Background()
	sub := listen(t, s)
	prod, dev := prodAndDev(t, s, a)

	f, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != EventFlag || ev.ID != f.ID || ev.OrgID != a.OrgID || !slices.Equal(ev.EnvIDs, []uuid.UUID{prod.ID}) {
		t.Fatalf("create: %+v", ev)
	}
	if _, err := s.ToggleFlag(ctx, a, prod.ID, "pay", true, Change{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != EventFlag || ev.ID != f.ID {
		t.Fatalf("toggle: %+v", ev)
	}
	// A change that fails or changes nothing says nothing: the next event is
	// the shared segment's below, since events arrive in commit order and
	// either of these would have come first.
	stale := uuid.New()
	if _, err := s.ToggleFlag(ctx, a, prod.ID, "pay", false, Change{Revision: &stale}); err != ErrConflict {
		t.Fatalf("stale revision: %v", err)
	}
	if _, err := s.ToggleFlag(ctx, a, prod.ID, "pay", true, Change{}); err != nil {
		t.Fatal(err)
	}

	// A shared segment concerns every environment its scopes select.
	sg, err := s.CreateSegment(ctx, a, prod.ID, SegmentInput{Name: "All", Key: "all", Type: SegmentShared,
		Scopes: []string{"organization/default-organization:project/web"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, sub)
	slices.SortFunc(ev.EnvIDs, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	want := []uuid.UUID{prod.ID, dev.ID}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	if ev.Kind != EventSegment || ev.ID != sg.ID || !slices.Equal(ev.EnvIDs, want) || !ev.Affects(a.OrgID, dev.ID) {
		t.Fatalf("shared segment: %+v, want its event next, for both environments", ev)
	}
	// Its targeting change also touches the flags that use it.
	tg := f.Targeting()
	tg.Rules = []FlagRule{{ID: "r", Name: "All",
		Conditions: []Condition{{ID: "c", Property: SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
		Variations: []RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	if _, err := s.SetFlagTargeting(ctx, a, prod.ID, "pay", TargetingInput{Targeting: &tg}); err != nil {
		t.Fatal(err)
	}
	next(t, sub)
	users := []string{"u1"}
	if _, err := s.SetSegmentTargeting(ctx, a, prod.ID, sg.ID, SegmentTargetingInput{Included: &users}); err != nil {
		t.Fatal(err)
	}
	kinds := []string{next(t, sub).Kind, next(t, sub).Kind}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{EventFlag, EventSegment}) {
		t.Fatalf("segment targeting: events %v, want the segment and the flag", kinds)
	}

	// Removing a secret concerns its environment.
	if err := s.DeleteSecret(ctx, a, dev.ID, dev.Secrets[0].ID); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != EventEnv || ev.ID != dev.ID {
		t.Fatalf("secret removed: %+v", ev)
	}
}

// Two stores on one database stand for two instances.
func TestChangeEventsReachOtherInstances(t *testing.T) {
	t.Parallel()
	s, a, pool := testStore(t)
	other, err := pgxpool.NewWithConfig(context.Background(), pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	s2 := New(other, s.Keys(), slog.New(slog.DiscardHandler), Options{})
	sub := listen(t, s2)
	prod, _ := prodAndDev(t, s, a)
	f, err := s.CreateFlag(context.Background(), a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != EventFlag || ev.ID != f.ID {
		t.Fatalf("other instance got %+v", ev)
	}
}

// SDKs keep a change only when updatedAt, in milliseconds, grew.
func TestUpdatedAtGrowsByMilliseconds(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	ctx := context.Background()
	prod, _ := prodAndDev(t, s, a)
	f, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	last := f.UpdatedAt.UnixMilli()
	for i := range 20 {
		f, err = s.ToggleFlag(ctx, a, prod.ID, "pay", i%2 == 0, Change{})
		if err != nil {
			t.Fatal(err)
		}
		if ms := f.UpdatedAt.UnixMilli(); ms <= last {
			t.Fatalf("change %d: updatedAt %d ms, not after %d", i, ms, last)
		}
		last = f.UpdatedAt.UnixMilli()
	}
}

func TestSubscriptionOverflowBecomesAReset(t *testing.T) {
	n := newNotifier(slog.New(slog.DiscardHandler))
	sub := n.Subscribe()
	for range maxQueued + 10 {
		n.publish(Event{Kind: EventFlag, ID: uuid.New()})
	}
	evs := sub.Take()
	if len(evs) != 10 || evs[0].Kind != EventReset || evs[0].Since.IsZero() {
		t.Fatalf("after overflowing: %d events, first %+v; want a reset and the 9 since", len(evs), evs[0])
	}
	sub.Close()
	n.publish(Event{Kind: EventFlag}) // a closed subscription gets nothing, and nothing panics
	done := make(chan struct{})
	go func() {
		for range sub.Ready() {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Error("Ready is still open after Close")
	}
}
