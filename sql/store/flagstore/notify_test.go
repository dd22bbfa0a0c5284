package flagstore_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
)

func TestChangeEvents(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	sub := storetest.Listen(t, s)
	prod, dev := storetest.ProdAndDev(t, s, a)

	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := storetest.Next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID || ev.OrgID != a.OrgID || !slices.Equal(ev.EnvIDs, []uuid.UUID{prod.ID}) {
		t.Fatalf("create: %+v", ev)
	}
	if _, err := s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", true, flagstore.Change{}); err != nil {
		t.Fatal(err)
	}
	if ev := storetest.Next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID {
		t.Fatalf("toggle: %+v", ev)
	}
	// A change that fails or changes nothing says nothing: the next event is
	// the shared segment's below, since the events of changes made one after
	// another arrive in that order, and either of these would have come
	// first.
	stale := uuid.New()
	if _, err := s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", false, flagstore.Change{Revision: &stale}); err != core.ErrConflict {
		t.Fatalf("stale revision: %v", err)
	}
	if _, err := s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", true, flagstore.Change{}); err != nil {
		t.Fatal(err)
	}

	// A shared segment concerns every environment its scopes select.
	sg, err := s.Segments().CreateSegment(ctx, a, prod.ID, segments.SegmentInput{Name: "All", Key: "all", Type: flagstore.SegmentShared,
		Scopes: []string{"organization/default-organization:project/web"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := storetest.Next(t, sub)
	slices.SortFunc(ev.EnvIDs, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	want := []uuid.UUID{prod.ID, dev.ID}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	if ev.Kind != feed.EventSegment || ev.ID != sg.ID || !slices.Equal(ev.EnvIDs, want) || !ev.Affects(a.OrgID, dev.ID) {
		t.Fatalf("shared segment: %+v, want its event next, for both environments", ev)
	}
	// Its targeting change also touches the flags that use it.
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "All",
		Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	if _, err := s.Flags().SetFlagTargeting(ctx, a, prod.ID, "pay", flagstore.TargetingInput{Targeting: &tg}); err != nil {
		t.Fatal(err)
	}
	storetest.Next(t, sub)
	users := []string{"u1"}
	if _, err := s.Segments().SetSegmentTargeting(ctx, a, prod.ID, sg.ID, segments.SegmentTargetingInput{Included: &users}); err != nil {
		t.Fatal(err)
	}
	kinds := []string{storetest.Next(t, sub).Kind, storetest.Next(t, sub).Kind}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{feed.EventFlag, feed.EventSegment}) {
		t.Fatalf("segment targeting: events %v, want the segment and the flag", kinds)
	}

	// Removing a secret concerns its environment.
	if err := s.Projects().DeleteSecret(ctx, a, dev.ID, dev.Secrets[0].ID); err != nil {
		t.Fatal(err)
	}
	if ev := storetest.Next(t, sub); ev.Kind != feed.EventEnv || ev.ID != dev.ID {
		t.Fatalf("secret removed: %+v", ev)
	}
}

// Two stores on one database stand for two instances.
func TestChangeEventsReachOtherInstances(t *testing.T) {
	t.Parallel()
	s, a, pool := storetest.New(t)
	other, err := pgxpool.NewWithConfig(context.Background(), pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	s2 := store.New(other, s.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{})
	sub := storetest.Listen(t, s2)
	storetest.RunFeed(t, s) // which announces s's changes
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(context.Background(), a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := storetest.Next(t, sub); ev.Kind != feed.EventFlag || ev.ID != f.ID {
		t.Fatalf("other instance got %+v", ev)
	}
}

// SDKs keep a change only when updatedAt, in milliseconds, grew.
func TestUpdatedAtGrowsByMilliseconds(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	last := f.UpdatedAt.UnixMilli()
	for i := range 20 {
		f, err = s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", i%2 == 0, flagstore.Change{})
		if err != nil {
			t.Fatal(err)
		}
		if ms := f.UpdatedAt.UnixMilli(); ms <= last {
			t.Fatalf("change %d: updatedAt %d ms, not after %d", i, ms, last)
		}
		last = f.UpdatedAt.UnixMilli()
	}
}
