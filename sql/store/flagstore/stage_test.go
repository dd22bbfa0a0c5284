package flagstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

func TestStageOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	evaluated := func(d time.Duration) *time.Time { at := ago(d); return &at }
	for _, tc := range []struct {
		name  string
		facts flagstore.StageFacts
		want  flagstore.Stage
		ready bool
	}{
		{"archived, never evaluated", flagstore.StageFacts{IsArchived: true, CreatedAt: ago(90 * day), ChangedAt: ago(2 * day)}, flagstore.StageArchived, true},
		{"archived, evaluated since", flagstore.StageFacts{IsArchived: true, CreatedAt: ago(90 * day), ChangedAt: ago(2 * day), LastEvaluatedAt: evaluated(day)}, flagstore.StageArchived, false},
		{"archived, evaluated before", flagstore.StageFacts{IsArchived: true, CreatedAt: ago(90 * day), ChangedAt: ago(2 * day), LastEvaluatedAt: evaluated(3 * day)}, flagstore.StageArchived, true},
		{"just created", flagstore.StageFacts{CreatedAt: ago(time.Hour), ChangedAt: ago(time.Hour)}, flagstore.StageNew, false},
		{"never evaluated, 29 days", flagstore.StageFacts{CreatedAt: ago(29 * day), ChangedAt: ago(29 * day)}, flagstore.StageNew, false},
		{"never evaluated, 30 days", flagstore.StageFacts{CreatedAt: ago(30 * day), ChangedAt: ago(30 * day)}, flagstore.StageUnused, true},
		{"not evaluated for 30 days", flagstore.StageFacts{CreatedAt: ago(60 * day), ChangedAt: ago(day), Split: true, LastEvaluatedAt: evaluated(30 * day)}, flagstore.StageUnused, true},
		{"split", flagstore.StageFacts{CreatedAt: ago(60 * day), ChangedAt: ago(50 * day), Split: true, LastEvaluatedAt: evaluated(time.Hour)}, flagstore.StageRollingOut, false},
		{"young and split", flagstore.StageFacts{CreatedAt: ago(day), ChangedAt: ago(day), Split: true, LastEvaluatedAt: evaluated(time.Hour)}, flagstore.StageRollingOut, false},
		{"one variation for 7 days", flagstore.StageFacts{CreatedAt: ago(60 * day), ChangedAt: ago(7 * day), LastEvaluatedAt: evaluated(time.Hour)}, flagstore.StageLaunched, true},
		{"one variation for 6 days", flagstore.StageFacts{CreatedAt: ago(60 * day), ChangedAt: ago(6 * day), LastEvaluatedAt: evaluated(time.Hour)}, flagstore.StageRollingOut, false},
		{"young, evaluated, one variation", flagstore.StageFacts{CreatedAt: ago(3 * day), ChangedAt: ago(3 * day), LastEvaluatedAt: evaluated(time.Hour)}, flagstore.StageNew, false},
	} {
		got := flagstore.StageOf(tc.facts, now)
		if got != tc.want || flagstore.ReadyToRemove(got, tc.facts) != tc.ready {
			t.Errorf("%s: got %s (ready %v), want %s (ready %v)", tc.name, got, flagstore.ReadyToRemove(got, tc.facts), tc.want, tc.ready)
		}
	}
}

// The list says each flag's stage, read from its row, and keeps one stage,
// or the flags ready to remove, on request; a week and a month on, the same
// flags have moved on.
func TestListFlagsByStage(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	env, _ := storetest.ProdAndDev(t, s, a)
	mk := func(key string, enabled bool) flagstore.Flag {
		f, err := s.Flags().CreateFlag(ctx, a, env.ID, flagstore.FlagInput{Name: key, Key: key, IsEnabled: enabled})
		storetest.Must(t, err)
		return f
	}
	mk("young", false)
	split := mk("split", true)
	done := mk("done", true)
	mk("old", false)
	tg := split.Targeting()
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: split.Variations[0].ID, Rollout: []float64{0, .1234}, ExptRollout: 1},
		{ID: split.Variations[1].ID, Rollout: []float64{.1234, 1}, ExptRollout: 1}}
	_, err := s.Flags().SetFlagTargeting(ctx, a, env.ID, "split", flagstore.TargetingInput{Targeting: &tg})
	storetest.Must(t, err)
	_, err = s.Flags().ArchiveFlag(ctx, a, env.ID, "old", flagstore.Change{})
	storetest.Must(t, err)
	now := time.Now().UTC()
	var tallies []sdkdata.EvaluationTally
	for _, f := range []flagstore.Flag{split, done} {
		tallies = append(tallies, sdkdata.EvaluationTally{FlagID: f.ID, VariationID: f.Variations[0].ID, Minute: now.Truncate(time.Minute), Count: 1, First: now, Last: now})
	}
	storetest.Must(t, s.SDK().WriteEvaluationTallies(ctx, tallies))

	list := func(at time.Time, stage string, archived bool) map[string]flagstore.Stage {
		t.Helper()
		got, err := s.Flags().ListFlags(ctx, a, env.ID, flagstore.FlagFilter{Stage: stage, Now: at, IsArchived: archived, Page: core.Page{Size: 10}})
		storetest.Must(t, err)
		out := map[string]flagstore.Stage{}
		for _, it := range got.Items {
			out[it.Key] = it.Stage
		}
		if int(got.TotalCount) != len(out) {
			t.Errorf("%s at %v: total %d for %d flags", stage, at, got.TotalCount, len(out))
		}
		return out
	}
	keys := func(m map[string]flagstore.Stage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	week := now.Add(8 * 24 * time.Hour)
	all := list(week, "", false)
	if all["young"] != flagstore.StageNew || all["split"] != flagstore.StageRollingOut || all["done"] != flagstore.StageLaunched {
		t.Errorf("a week on: %v", all)
	}
	if got := list(now, "", false); got["done"] != flagstore.StageNew || got["split"] != flagstore.StageRollingOut {
		t.Errorf("today: %v", got)
	}
	for stage, want := range map[string][]string{
		"launched": {"done"}, "rolling-out": {"split"}, "new": {"young"}, "unused": nil, "archived": {"old"},
		flagstore.ReadyToRemoveFilter: {"done", "old"},
	} {
		if got := keys(list(week, stage, false)); !slices.Equal(got, want) {
			t.Errorf("a week on, %s: %v, want %v", stage, got, want)
		}
	}
	month := now.Add(31 * 24 * time.Hour)
	if got := keys(list(month, "unused", false)); !slices.Equal(got, []string{"done", "split", "young"}) {
		t.Errorf("a month on, unused: %v", got)
	}
	_, err = s.Flags().ListFlags(ctx, a, env.ID, flagstore.FlagFilter{Stage: "stale", Page: core.Page{Size: 10}})
	var ve *core.ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("an unknown stage: %v, want a validation error", err)
	}
}

// A list filtered by stage reads at most MaxStageScan flags: past them it
// says its total is an estimate. Measured here: the time it takes over
// 2,500 flags, all new.
func TestListFlagsByStageStopsAtItsBound(t *testing.T) {
	t.Parallel()
	s, a, _, envID := scaleFixture(t, flagstore.MaxStageScan+500)
	ctx := context.Background()
	start := time.Now()
	got, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Stage: "new", Page: core.Page{Size: 20}})
	storetest.Must(t, err)
	took := time.Since(start)
	if got.TotalCount != flagstore.MaxStageScan || !got.TotalCountIsEstimate || len(got.Items) != 20 {
		t.Errorf("over %d flags: total %d (estimate %v), %d items; want %d, an estimate, 20",
			flagstore.MaxStageScan+500, got.TotalCount, got.TotalCountIsEstimate, len(got.Items), flagstore.MaxStageScan)
	}
	t.Logf("a stage-filtered list over %d flags read %d in %v", flagstore.MaxStageScan+500, flagstore.MaxStageScan, took)
}
