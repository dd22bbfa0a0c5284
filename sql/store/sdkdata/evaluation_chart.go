package sdkdata

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Chart spans: the flag page charts the last hour by minute, the last day
// by hour, or the last 30 days by day.
const (
	SpanHour  = "hour"
	SpanDay   = "day"
	SpanMonth = "month"
)

// spans are each span's step, number of steps and how minutes are read.
var spans = map[string]struct {
	step  time.Duration
	steps int
	unit  string
}{
	SpanHour:  {time.Minute, 60, resMinute},
	SpanDay:   {time.Hour, 24, resHour},
	SpanMonth: {day, 30, resHour},
}

// ChartVariation is one variation's evaluations in each step of a chart.
type ChartVariation struct {
	ID     string
	Name   string
	Counts []int64
	Total  int64
}

// EvaluationChart is what a flag's variations were served in each step of
// a span ending now: Steps are the steps' UTC starts, every step there even
// when nothing was served.
type EvaluationChart struct {
	Span       string
	Step       time.Duration
	Steps      []time.Time
	Variations []ChartVariation
	Total      int64
	// Previous is the span before, for comparison: its evaluations of all
	// variations in each step (Previous[i] is Steps[i] one span earlier),
	// and PreviousTotal their sum.
	Previous      []int64
	PreviousTotal int64
}

// Length is how long the chart's span is: its steps end to end.
func (c EvaluationChart) Length() time.Duration { return c.Step * time.Duration(len(c.Steps)) }

// FlagEvaluationChart charts a flag's evaluations over a span (SpanHour,
// SpanDay or SpanMonth) ending at now, and the span before it for
// comparison, from the evaluation series in one read.
func (s *SDK) FlagEvaluationChart(ctx context.Context, a *core.Actor, envID uuid.UUID, key, span string, now time.Time) (EvaluationChart, error) {
	sp, ok := spans[span]
	if !ok {
		return EvaluationChart{}, core.Invalid("span_is_invalid")
	}
	f, err := s.readableFlag(ctx, a, envID, key)
	if err != nil {
		return EvaluationChart{}, err
	}
	last := now.UTC().Truncate(sp.step)
	first := last.Add(-time.Duration(sp.steps-1) * sp.step)
	length := time.Duration(sp.steps) * sp.step
	series, err := s.series(ctx, f.EnvID, []uuid.UUID{f.ID}, first.Add(-length), last.Add(sp.step), sp.unit)
	if err != nil {
		return EvaluationChart{}, err
	}
	out := EvaluationChart{Span: span, Step: sp.step, Steps: make([]time.Time, sp.steps), Previous: make([]int64, sp.steps)}
	for i := range out.Steps {
		out.Steps[i] = first.Add(time.Duration(i) * sp.step)
	}
	index := map[string]int{}
	for _, v := range f.Variations {
		if _, dup := index[v.ID]; dup {
			continue
		}
		index[v.ID] = len(out.Variations)
		out.Variations = append(out.Variations, ChartVariation{ID: v.ID, Name: v.Name, Counts: make([]int64, sp.steps)})
	}
	for _, c := range series[f.ID] {
		i, ok := index[c.variation]
		step := int(c.at.Truncate(sp.step).Sub(first) / sp.step)
		if before := step + sp.steps; step < 0 && before >= 0 {
			// The span before counts every variation, even one since removed.
			out.Previous[before] += c.count
			out.PreviousTotal += c.count
			continue
		}
		if !ok || step < 0 || step >= sp.steps {
			continue
		}
		out.Variations[i].Counts[step] += c.count
		out.Variations[i].Total += c.count
		out.Total += c.count
	}
	return out, nil
}

// TrendHours is how many hours a flag list's trend shows.
const TrendHours = 24

// FlagEvaluationTrends returns, for some flags of an environment, how often
// they were evaluated in each of the last TrendHours hours ending at now
// (oldest first; flags never evaluated then are left out).
func (s *SDK) FlagEvaluationTrends(ctx context.Context, a *core.Actor, envID uuid.UUID, flagIDs []uuid.UUID, now time.Time) (map[uuid.UUID][]int64, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	last := now.UTC().Truncate(time.Hour)
	first := last.Add(-(TrendHours - 1) * time.Hour)
	series, err := s.series(ctx, env.Environment.ID, flagIDs, first, last.Add(time.Hour), resHour)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID][]int64, len(series))
	for id, counts := range series {
		hours := make([]int64, TrendHours)
		for _, c := range counts {
			if h := int(c.at.Truncate(time.Hour).Sub(first) / time.Hour); h >= 0 && h < TrendHours {
				hours[h] += c.count
			}
		}
		out[id] = hours
	}
	return out, nil
}
