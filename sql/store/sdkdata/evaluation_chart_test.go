package sdkdata_test

import (
	"context"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// A chart carries the span before it, step for step: a day's chart counts
// yesterday's evaluations in the step a day earlier, and nothing older.
func TestEvaluationChartComparesThePeriodBefore(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	now := time.Date(2026, 12, 7, 10, 30, 0, 0, time.UTC)
	tally := func(ago time.Duration, variation int, n int64) sdkdata.EvaluationTally {
		at := now.Add(-ago).Truncate(time.Minute)
		return sdkdata.EvaluationTally{FlagID: f.ID, VariationID: f.Variations[variation].ID, Minute: at, Count: n, First: at, Last: at}
	}
	storetest.Must(t, s.SDK().WriteEvaluationTallies(ctx, []sdkdata.EvaluationTally{
		tally(time.Hour, 0, 3), tally(25*time.Hour, 0, 5), tally(26*time.Hour, 1, 2), tally(49*time.Hour, 0, 7),
	}))
	c, err := s.SDK().FlagEvaluationChart(ctx, a, prod.ID, "pay", sdkdata.SpanDay, now)
	storetest.Must(t, err)
	if c.Total != 3 || c.PreviousTotal != 7 {
		t.Fatalf("day chart: total %d, previous %d; want 3 and 7", c.Total, c.PreviousTotal)
	}
	// 09:00 today and 09:00 yesterday share a step; 08:00 yesterday the one before.
	last := len(c.Steps) - 1
	if c.Steps[last-1] != time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC) || c.Variations[0].Counts[last-1] != 3 ||
		c.Previous[last-1] != 5 || c.Previous[last-2] != 2 {
		t.Errorf("day chart: step %v counts %d, previous %v; want 09:00 with 3, and 5 then 2 before",
			c.Steps[last-1], c.Variations[0].Counts[last-1], c.Previous)
	}
	if got := c.Length(); got != 24*time.Hour {
		t.Errorf("day chart spans %v, want 24h", got)
	}
	h, err := s.SDK().FlagEvaluationChart(ctx, a, prod.ID, "pay", sdkdata.SpanHour, now)
	storetest.Must(t, err)
	if h.Total != 0 || h.PreviousTotal != 3 {
		t.Errorf("hour chart: total %d, previous %d; want 0 and 3", h.Total, h.PreviousTotal)
	}
}
