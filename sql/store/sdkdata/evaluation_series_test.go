package sdkdata_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// seriesRows is the whole series table as "resolution bucket variation=count" lines.
func seriesRows(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT resolution, bucket, variation_id, count FROM flag_evaluation_series
		ORDER BY resolution, bucket, variation_id`)
	storetest.Must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var res, v string
		var at time.Time
		var n int64
		storetest.Must(t, rows.Scan(&res, &at, &v, &n))
		out = append(out, fmt.Sprintf("%s %s %s=%d", res, at.UTC().Format("01-02T15:04"), v, n))
	}
	return out
}

func countRows(t *testing.T, pool *pgxpool.Pool, resolution string) int {
	t.Helper()
	var n int
	storetest.Must(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM flag_evaluation_series WHERE resolution = $1`, resolution).Scan(&n))
	return n
}

// statsByVariation sums FeatBit's insights answer per variation name.
func statsByVariation(t *testing.T, s *store.Store, a *core.Actor, env core.Environment, interval string, from, to time.Time) map[string]int64 {
	t.Helper()
	points, err := s.SDK().FlagStatsByVariation(context.Background(), a, env.ID, sdkdata.InsightsFilter{FeatureFlagKey: "pay",
		IntervalType: interval, From: from.UnixMilli(), To: to.UnixMilli()})
	storetest.Must(t, err)
	out := map[string]int64{}
	for _, p := range points {
		for _, v := range p.Variations {
			out[v.Variation] += v.Count
		}
	}
	return out
}

// TestEvaluationSeriesRollsUpAndPrunes: minutes are summed into hours and
// hours into days, again and again (or on two instances at once) to the
// same rows; each resolution is pruned past its retention, and what the
// insights answer stays every evaluation while a coarser resolution keeps
// it, until the days too are past theirs.
func TestEvaluationSeriesRollsUpAndPrunes(t *testing.T) {
	t.Parallel()
	s, a, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	on, off := f.Variations[0], f.Variations[1]

	base := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	tally := func(v flagstore.Variation, at time.Time, n int64) sdkdata.EvaluationTally {
		return sdkdata.EvaluationTally{FlagID: f.ID, VariationID: v.ID, Minute: at, Count: n, First: at, Last: at}
	}
	storetest.Must(t, s.SDK().WriteEvaluationTallies(ctx, []sdkdata.EvaluationTally{
		tally(on, base.Add(10*time.Hour+5*time.Minute), 3),
		tally(on, base.Add(10*time.Hour+59*time.Minute), 2),
		tally(off, base.Add(11*time.Hour+30*time.Minute), 4),
		tally(on, base.Add(27*time.Hour), 5),
	}))
	// The same minute again adds to it.
	storetest.Must(t, s.SDK().WriteEvaluationTallies(ctx, []sdkdata.EvaluationTally{tally(off, base.Add(11*time.Hour+30*time.Minute), 1)}))
	all := map[string]int64{on.Name: 10, off.Name: 5}
	window := func() (time.Time, time.Time) { return base, base.Add(3 * 24 * time.Hour) }

	keep := sdkdata.DefaultSeriesRetention
	now := base.Add(48*time.Hour + 30*time.Minute)
	r, err := s.SDK().RollUpEvaluations(ctx, now, keep)
	storetest.Must(t, err)
	want := []string{
		"day 01-10T00:00 " + on.ID + "=5", "day 01-10T00:00 " + off.ID + "=5", "day 01-11T00:00 " + on.ID + "=5",
		"hour 01-10T10:00 " + on.ID + "=5", "hour 01-10T11:00 " + off.ID + "=5", "hour 01-11T03:00 " + on.ID + "=5",
		"minute 01-10T10:05 " + on.ID + "=3", "minute 01-10T10:59 " + on.ID + "=2", "minute 01-10T11:30 " + off.ID + "=5",
		"minute 01-11T03:00 " + on.ID + "=5",
	}
	slices.Sort(want) // as the rows are read: by resolution, bucket and variation id
	if got := seriesRows(t, pool); !r.Ran || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the first roll-up (%+v):\n%v\nwant\n%v", r, got, want)
	}
	for _, interval := range []string{"MINUTE", "HOUR", "DAY", "WEEK", "MONTH"} {
		from, to := window()
		if got := statsByVariation(t, s, a, prod, interval, from, to); fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("by %s: %v, want %v", interval, got, all)
		}
	}
	// Again, and on two instances at once: the same rows.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := s.SDK().RollUpEvaluations(ctx, now, keep); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := seriesRows(t, pool); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rolling up again changed the rows:\n%v\nwant\n%v", got, want)
	}

	// Three days on, the minutes are gone; the hours answer.
	_, err = s.SDK().RollUpEvaluations(ctx, base.Add(5*24*time.Hour), keep)
	storetest.Must(t, err)
	if n := countRows(t, pool, "minute"); n != 0 {
		t.Errorf("%d minute rows past their 48 hours", n)
	}
	from, to := window()
	if got := statsByVariation(t, s, a, prod, "HOUR", from, to); fmt.Sprint(got) != fmt.Sprint(all) {
		t.Errorf("by hour from the hours: %v, want %v", got, all)
	}
	// A hundred days on, the hours are gone; the days answer.
	_, err = s.SDK().RollUpEvaluations(ctx, base.Add(100*24*time.Hour), keep)
	storetest.Must(t, err)
	if n := countRows(t, pool, "hour"); n != 0 || countRows(t, pool, "day") != 3 {
		t.Errorf("%d hour rows past their 90 days; %d day rows", n, countRows(t, pool, "day"))
	}
	if got := statsByVariation(t, s, a, prod, "DAY", from, to); fmt.Sprint(got) != fmt.Sprint(all) {
		t.Errorf("by day from the days: %v, want %v", got, all)
	}
	// Past two years, nothing is left; the running totals keep counting.
	_, err = s.SDK().RollUpEvaluations(ctx, base.Add(800*24*time.Hour), keep)
	storetest.Must(t, err)
	if got := seriesRows(t, pool); len(got) != 0 {
		t.Errorf("rows past every retention: %v", got)
	}
	in, err := s.SDK().FlagInsights(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if in.Evaluations != 15 {
		t.Errorf("running total %d, want 15", in.Evaluations)
	}
}

// TestEvaluationSeriesReadsTheFinestKept: an hour not yet rolled up is read
// from its minutes, and an hour whose minutes are kept is never counted
// twice (its minutes and its hour row).
func TestEvaluationSeriesReadsTheFinestKept(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	now := time.Now().UTC()
	at := now.Add(-2 * time.Hour)
	storetest.Must(t, s.SDK().WriteEvaluationTallies(ctx, []sdkdata.EvaluationTally{
		{FlagID: f.ID, VariationID: f.Variations[0].ID, Minute: at, Count: 4, First: at, Last: at},
		{FlagID: f.ID, VariationID: f.Variations[1].ID, Minute: now, Count: 2, First: now, Last: now},
	}))
	check := func(when string) {
		t.Helper()
		for _, span := range []string{sdkdata.SpanHour, sdkdata.SpanDay, sdkdata.SpanMonth} {
			c, err := s.SDK().FlagEvaluationChart(ctx, a, prod.ID, "pay", span, now)
			storetest.Must(t, err)
			want := int64(6)
			if span == sdkdata.SpanHour {
				want = 2
			}
			if c.Total != want || len(c.Variations) != 2 {
				t.Errorf("%s: the %s chart counts %d, want %d", when, span, c.Total, want)
			}
		}
		trends, err := s.SDK().FlagEvaluationTrends(ctx, a, prod.ID, []uuid.UUID{f.ID}, now)
		storetest.Must(t, err)
		var sum int64
		for _, n := range trends[f.ID] {
			sum += n
		}
		if h := trends[f.ID]; sum != 6 || h[len(h)-1] != 2 {
			t.Errorf("%s: trend %v, want 6 with 2 in the last hour", when, h)
		}
	}
	check("before a roll-up")
	_, err = s.SDK().RollUpEvaluations(ctx, now, sdkdata.DefaultSeriesRetention)
	storetest.Must(t, err)
	check("after a roll-up")
}
