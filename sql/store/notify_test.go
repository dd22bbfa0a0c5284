package store

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// events reads a subscription one event at a time.
type events struct {
	sub *feed.Subscription
	buf []feed.Event
}

// runFeed runs s's change listener until the test ends, as every instance
// runs one.
func runFeed(t *testing.T, s *Store) {
	t.Helper()
	feedtest.Run(t, s.Feed())
}

// listen runs s's change listener until the test ends and subscribes to it.
func listen(t *testing.T, s *Store) *events {
	t.Helper()
	// Subscribe before the listener reads: the reset it sends on starting
	// would otherwise go out before anyone listens.
	sub := s.Changes().Subscribe()
	t.Cleanup(sub.Close)
	runFeed(t, s)
	// Listening begins with a reset, once every channel is listened on.
	evs := &events{sub: sub}
	if ev := next(t, evs); ev.Kind != feed.EventReset {
		t.Fatalf("first event %+v, want a reset", ev)
	}
	return evs
}

// next waits for the next event. The bound is generous: this test is about
// which events arrive; the one-second delivery to SDKs is measured end to end
// by the Node SDK test, and a loaded CI machine must not fail this one.
func next(t *testing.T, e *events) feed.Event {
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
func prodAndDev(t *testing.T, s *Store, a *core.Actor) (core.Environment, core.Environment) {
	t.Helper()
	p, err := s.CreateProject(context.Background(), a, core.ProjectInput{Name: "Web", Key: "web"})
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
	if ev := next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID || ev.OrgID != a.OrgID || !slices.Equal(ev.EnvIDs, []uuid.UUID{prod.ID}) {
		t.Fatalf("create: %+v", ev)
	}
	if _, err := s.ToggleFlag(ctx, a, prod.ID, "pay", true, Change{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID {
		t.Fatalf("toggle: %+v", ev)
	}
	// A change that fails or changes nothing says nothing: the next event is
	// the shared segment's below, since the events of changes made one after
	// another arrive in that order, and either of these would have come
	// first.
	stale := uuid.New()
	if _, err := s.ToggleFlag(ctx, a, prod.ID, "pay", false, Change{Revision: &stale}); err != core.ErrConflict {
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
	if ev.Kind != feed.EventSegment || ev.ID != sg.ID || !slices.Equal(ev.EnvIDs, want) || !ev.Affects(a.OrgID, dev.ID) {
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
	if !slices.Equal(kinds, []string{feed.EventFlag, feed.EventSegment}) {
		t.Fatalf("segment targeting: events %v, want the segment and the flag", kinds)
	}

	// Removing a secret concerns its environment.
	if err := s.DeleteSecret(ctx, a, dev.ID, dev.Secrets[0].ID); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != feed.EventEnv || ev.ID != dev.ID {
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
	s2 := New(other, s.Keys(), slog.New(slog.DiscardHandler), core.Options{})
	sub := listen(t, s2)
	runFeed(t, s) // which announces s's changes
	prod, _ := prodAndDev(t, s, a)
	f, err := s.CreateFlag(context.Background(), a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID {
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
