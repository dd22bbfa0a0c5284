package sdkdata

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// EvaluationCount is how often SDKs reported serving one variation of a flag.
type EvaluationCount struct {
	FlagKey     string
	VariationID string
	Count       int64
}

// maxCountsPerReport bounds one report; SDKs send at most 50 events a request.
const maxCountsPerReport = 10_000

// RecordEvaluations adds an SDK report to its environment's evaluation
// counts, as of at. Pairs of the same flag and variation are summed; unknown
// flags and variations are skipped. One statement writes the whole report.
func (s *SDK) RecordEvaluations(ctx context.Context, env SDKEnv, counts []EvaluationCount, at time.Time) error {
	sum := map[[2]string]int64{}
	for _, c := range counts {
		if c.Count > 0 && c.FlagKey != "" && c.VariationID != "" && len(c.FlagKey) <= core.MaxKeyLen && len(c.VariationID) <= core.MaxKeyLen {
			sum[[2]string{c.FlagKey, c.VariationID}] += c.Count
		}
	}
	if len(sum) == 0 {
		return nil
	}
	if len(sum) > maxCountsPerReport {
		return core.Invalid("body_is_invalid")
	}
	pairs := make([][2]string, 0, len(sum))
	for p := range sum {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	p := db.RecordEvaluationsParams{At: at, EnvID: env.EnvID, Keys: make([]string, len(pairs)),
		VariationIds: make([]string, len(pairs)), Counts: make([]int64, len(pairs))}
	for i, pair := range pairs {
		p.Keys[i], p.VariationIds[i], p.Counts[i] = pair[0], pair[1], sum[pair]
	}
	return core.Translate(s.core.Q.RecordEvaluations(ctx, p))
}

// VariationInsight is how often SDKs served one variation of a flag.
type VariationInsight struct {
	Variation        flagstore.Variation `json:"variation"`
	Count            int64               `json:"count"`
	FirstEvaluatedAt time.Time           `json:"firstEvaluatedAt"`
	LastEvaluatedAt  time.Time           `json:"lastEvaluatedAt"`
}

// FlagInsight is what SDKs reported about a flag: when they last evaluated
// it (nil when never) and how often they served each variation.
type FlagInsight struct {
	Key             string             `json:"key"`
	LastEvaluatedAt *time.Time         `json:"lastEvaluatedAt"`
	Evaluations     int64              `json:"evaluations"`
	Variations      []VariationInsight `json:"variations"`
}

// FlagInsights returns what SDKs reported about one flag.
func (s *SDK) FlagInsights(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (FlagInsight, error) {
	f, err := s.readableFlag(ctx, a, envID, key)
	if err != nil {
		return FlagInsight{}, err
	}
	return s.flagInsight(ctx, f)
}

// readableFlag loads a flag of an environment the caller may read from.
func (s *SDK) readableFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (flagstore.Flag, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return flagstore.Flag{}, err
	}
	row, err := s.core.Q.GetFlag(ctx, db.GetFlagParams{EnvID: env.Environment.ID, Key: key})
	if err != nil {
		return flagstore.Flag{}, core.Translate(err)
	}
	return flagstore.FlagFrom(row)
}

// FlagInsightsOf is FlagInsights of flag f of environment envID as the
// caller holds it already (a page that just changed it), so the flag is not
// read again: the counts are read only where f is envID's.
func (s *SDK) FlagInsightsOf(ctx context.Context, a *core.Actor, envID uuid.UUID, f flagstore.Flag) (FlagInsight, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return FlagInsight{}, err
	}
	rows, err := s.core.Q.FlagEvaluationsInEnv(ctx, db.FlagEvaluationsInEnvParams{FlagID: f.ID, EnvID: envID})
	if err != nil {
		return FlagInsight{}, core.Translate(err)
	}
	return insightOf(f, rows), nil
}

// flagInsight sums what SDKs reported about a flag.
func (s *SDK) flagInsight(ctx context.Context, f flagstore.Flag) (FlagInsight, error) {
	rows, err := s.core.Q.FlagEvaluations(ctx, f.ID)
	if err != nil {
		return FlagInsight{}, core.Translate(err)
	}
	return insightOf(f, rows), nil
}

// insightOf sums a flag's evaluation counts per variation.
func insightOf(f flagstore.Flag, rows []db.FlagEvaluation) FlagInsight {
	out := FlagInsight{Key: f.Key, Variations: []VariationInsight{}}
	for _, r := range rows {
		vr := flagstore.Variation{ID: r.VariationID}
		if known := f.Variation(r.VariationID); known != nil {
			vr = *known
		}
		out.Variations = append(out.Variations, VariationInsight{Variation: vr, Count: r.Count,
			FirstEvaluatedAt: r.FirstEvaluatedAt.UTC(), LastEvaluatedAt: r.LastEvaluatedAt.UTC()})
		out.Evaluations += r.Count
		if last := r.LastEvaluatedAt.UTC(); out.LastEvaluatedAt == nil || last.After(*out.LastEvaluatedAt) {
			out.LastEvaluatedAt = &last
		}
	}
	return out
}

// StaleFlag is a flag with when SDKs last evaluated it.
type StaleFlag struct {
	ID              uuid.UUID  `json:"id"`
	Key             string     `json:"key"`
	Name            string     `json:"name"`
	IsEnabled       bool       `json:"isEnabled"`
	CreatedAt       time.Time  `json:"createdAt"`
	LastEvaluatedAt *time.Time `json:"lastEvaluatedAt"`
	Evaluations     int64      `json:"evaluations"`
}

// StaleFlags pages an environment's flags that are not archived, those SDKs
// never evaluated first, then those they evaluated longest ago.
func (s *SDK) StaleFlags(ctx context.Context, a *core.Actor, envID uuid.UUID, page core.Page) (core.Paged[StaleFlag], error) {
	var v core.Validator
	page.Check(&v)
	if err := v.Err(); err != nil {
		return core.Paged[StaleFlag]{}, err
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return core.Paged[StaleFlag]{}, err
	}
	rows, err := s.core.Q.ListStaleFlags(ctx, db.ListStaleFlagsParams{EnvID: env.Environment.ID, PageSize: page.Limit(), PageOffset: page.Offset()})
	if err != nil {
		return core.Paged[StaleFlag]{}, core.Translate(err)
	}
	total, err := s.core.Q.CountFlags(ctx, db.CountFlagsParams{EnvID: env.Environment.ID, Tags: []string{}})
	if err != nil {
		return core.Paged[StaleFlag]{}, core.Translate(err)
	}
	out := core.Paged[StaleFlag]{TotalCount: total, Items: make([]StaleFlag, len(rows))}
	for i, r := range rows {
		out.Items[i] = StaleFlag{ID: r.ID, Key: r.Key, Name: r.Name, IsEnabled: r.IsEnabled, CreatedAt: r.CreatedAt.UTC(),
			Evaluations: r.Count}
		if r.Evaluated {
			last := r.LastEvaluatedAt.UTC()
			out.Items[i].LastEvaluatedAt = &last
		}
	}
	return out, nil
}

// InsightsFilter is FeatBit's insights query: a flag, an interval type
// (MONTH, WEEK, DAY, HOUR or MINUTE) and a window in Unix milliseconds.
type InsightsFilter struct {
	FeatureFlagKey string
	IntervalType   string
	From, To       int64
}

// InsightsPoint is FeatBit's InsightsVm: what each variation was served in an interval.
type InsightsPoint struct {
	Time       string                   `json:"time"`
	Variations []VariationInsightsCount `json:"variations"`
}

// VariationInsightsCount is FeatBit's VariationInsightsVm: a variation's name and count.
type VariationInsightsCount struct {
	Variation string `json:"variation"`
	Count     int64  `json:"count"`
}

// interval is one of FeatBit's interval types: where an interval starts,
// and where the next one does.
type interval struct {
	truncate func(time.Time) time.Time
	next     func(time.Time) time.Time
}

// intervals are FeatBit's interval types, in UTC.
var intervals = map[string]interval{
	"MONTH": {func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) },
		func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }},
	"WEEK": {func(t time.Time) time.Time {
		d := t.Truncate(24 * time.Hour)
		return d.AddDate(0, 0, -int(d.Weekday()))
	}, func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }},
	"DAY":    {func(t time.Time) time.Time { return t.Truncate(24 * time.Hour) }, func(t time.Time) time.Time { return t.Add(24 * time.Hour) }},
	"HOUR":   {func(t time.Time) time.Time { return t.Truncate(time.Hour) }, func(t time.Time) time.Time { return t.Add(time.Hour) }},
	"MINUTE": {func(t time.Time) time.Time { return t.Truncate(time.Minute) }, func(t time.Time) time.Time { return t.Add(time.Minute) }},
}

// MaxInsightsPoints bounds the intervals one insights query answers (every
// day since 1970, or 34 days by the minute): each is answered, evaluated or
// not.
const MaxInsightsPoints = 50_000

// FlagStatsByVariation answers FeatBit's insights query from the
// evaluation series: what each variation was served per interval in
// [from, to] (both included, as FeatBit's front end sends them), one point
// for every interval from the one from is in to the one to is in, each
// naming every variation of the flag, with a count of 0 where nothing was
// served (FeatBit's front end reads a point's variations for every
// interval it draws). Intervals are UTC; the finest resolution kept for a
// time is used (minutes for 48 hours by default, then hours, then days),
// and a coarser row counts in the interval it starts in.
func (s *SDK) FlagStatsByVariation(ctx context.Context, a *core.Actor, envID uuid.UUID, f InsightsFilter) ([]InsightsPoint, error) {
	var v core.Validator
	if f.FeatureFlagKey == "" {
		v.Add("featureFlagKey", "required")
	}
	iv, ok := intervals[f.IntervalType]
	if !ok {
		v.Add("intervalType", "invalid")
	}
	v.Millis("from", f.From)
	v.Millis("to", f.To)
	if err := v.Err(); err != nil {
		return nil, err
	}
	flag, err := s.readableFlag(ctx, a, envID, f.FeatureFlagKey)
	if err != nil {
		return nil, err
	}
	// Intervals that have not begun have nothing to count: the window ends
	// now at the latest (FeatBit's front end asks up to now).
	from, to := time.UnixMilli(f.From).UTC(), time.UnixMilli(f.To).UTC()
	if now := time.Now().UTC(); to.After(now) {
		to = now
	}
	if to.Before(from) {
		return []InsightsPoint{}, nil
	}
	var times []time.Time
	for at := iv.truncate(from); !at.After(to); at = iv.next(at) {
		if len(times) == MaxInsightsPoints {
			v.At("from", "invalid", "from", fmt.Sprintf("at most %d intervals from from to to", MaxInsightsPoints))
			return nil, v.Err()
		}
		times = append(times, at)
	}
	unit := resHour
	if f.IntervalType == "MINUTE" {
		unit = resMinute
	}
	// to is included: the row of its minute (or hour) starts at or before it.
	series, err := s.series(ctx, flag.EnvID, []uuid.UUID{flag.ID}, from, to.Add(time.Millisecond), unit)
	if err != nil {
		return nil, err
	}
	sums := map[time.Time]map[string]int64{}
	for _, c := range series[flag.ID] {
		at := iv.truncate(c.at)
		if sums[at] == nil {
			sums[at] = map[string]int64{}
		}
		sums[at][c.variation] += c.count
	}
	points := make([]InsightsPoint, len(times))
	for i, at := range times {
		points[i] = InsightsPoint{Time: at.Format(time.RFC3339), Variations: make([]VariationInsightsCount, len(flag.Variations))}
		for j, vr := range flag.Variations {
			points[i].Variations[j] = VariationInsightsCount{Variation: vr.Name, Count: sums[at][vr.ID]}
		}
	}
	return points, nil
}
