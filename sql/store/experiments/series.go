package experiments

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/stats"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Look is Bunting's analysis of an iteration as it stood at one moment:
// over the users first exposed by then.
type Look struct {
	At         time.Time           `json:"at"`
	Variations []VariationAnalysis `json:"variations"`
}

// Bounds of a series: at least a minute between looks, at most MaxLooks.
const (
	MaxLooks      = 100
	minLookLength = time.Minute
)

// AnalysisSeries reads how an iteration's analysis grew: up to looks
// moments evenly spread from its start to its end (or now), each Bunting's
// analysis (the same as Analyze) of the users first exposed by then, with
// the events they have sent so far. Events are kept per user as running
// totals, not one by one, so a look counts a user's later events too: the
// series shows the interval narrowing as users arrive, which is what the
// always-valid interval may be watched for. It costs one pass over the
// iteration's users.
func (s *Experiments) AnalysisSeries(ctx context.Context, a *core.Actor, envID, id, iterationID uuid.UUID, looks int) ([]Look, error) {
	if looks < 1 || looks > MaxLooks {
		var v core.Validator
		v.Add("looks", "invalid")
		return nil, v.Err()
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	x, err := s.experiment(ctx, s.core.Q, envID, id)
	if err != nil {
		return nil, err
	}
	var it *Iteration
	for i := range x.Iterations {
		if x.Iterations[i].ID == iterationID {
			it = &x.Iterations[i]
		}
	}
	if it == nil {
		return nil, core.ErrNotFound
	}
	end := s.now().UTC()
	if it.EndTime != nil {
		end = *it.EndTime
	}
	step := end.Sub(it.StartTime) / time.Duration(looks)
	step = max(minLookLength, step.Truncate(time.Second)+time.Second)
	rows, err := s.core.Q.ExperimentExposureSteps(ctx, db.ExperimentExposureStepsParams{StepSeconds: step.Seconds(),
		Origin: it.StartTime, IterationID: it.ID})
	if err != nil {
		return nil, core.Translate(err)
	}
	base := Analysis{Numeric: it.IsNumeric(), Alpha: x.Alpha, Baseline: x.BaselineVariationID,
		LowerIsBetter: it.CustomEventSuccessCriteria == CriteriaLower}
	var out []Look
	t := map[string]db.ExperimentVariationTotalsRow{}
	for i := 0; i < len(rows); {
		at := rows[i].StepStart
		for ; i < len(rows) && rows[i].StepStart.Equal(at); i++ {
			r := rows[i]
			sum := t[r.VariationID]
			t[r.VariationID] = db.ExperimentVariationTotalsRow{VariationID: r.VariationID, Users: sum.Users + r.Users,
				Converted: sum.Converted + r.Converted, Total: sum.Total + r.Total, TotalSquares: sum.TotalSquares + r.TotalSquares}
		}
		// The look is at the end of its step, when all its users were in,
		// and never later than the iteration's end.
		look := base
		look.fill(x, t)
		when := at.Add(step)
		if when.After(end) {
			when = end
		}
		out = append(out, Look{At: when, Variations: look.Variations})
	}
	return out, nil
}

// fill computes the analysis of the per-variation totals t of experiment x
// into out: stats.Analyze over every variation of the flag, the sample-ratio
// check against the default rule's split when it names every variation
// users were served.
func (out *Analysis) fill(x Experiment, t map[string]db.ExperimentVariationTotalsRow) {
	in := stats.Input{Baseline: x.BaselineVariationID, Alpha: x.Alpha, Numeric: out.Numeric, Criterion: stats.Higher}
	if out.LowerIsBetter {
		in.Criterion = stats.Lower
	}
	weighted := x.weights != nil
	for _, v := range x.Variations {
		r := t[v.ID]
		// Every exposed user counts (x = 0 without events), so N is the
		// same N the sample-ratio check counts.
		g := stats.Group{Variation: v.ID, N: r.Users, Sum: float64(r.Converted), SumSquares: float64(r.Converted)}
		if out.Numeric {
			g.Sum, g.SumSquares = r.Total, r.TotalSquares
		}
		in.Groups = append(in.Groups, g)
		if _, ok := x.weights[v.ID]; !ok && r.Users > 0 {
			weighted = false // served by a rule the default rule does not name
		}
	}
	if weighted {
		in.Weights = x.weights
	}
	res := stats.Analyze(in)
	out.SequentialAlpha = res.SequentialAlpha
	out.SRMPValue, out.SRM = finite(&res.SRMPValue), res.SRM
	for i, r := range res.Variations {
		v := x.Variations[i]
		row := t[v.ID]
		mean := r.Mean
		va := VariationAnalysis{VariationID: v.ID, Name: v.Name, Value: v.Value, IsBaseline: r.IsBaseline, Users: r.N,
			Conversions: row.Converted, Total: row.Total, Lift: finite(r.Lift), Interval: finitePair(r.Interval),
			SequentialInterval: finitePair(r.SequentialInterval), PValue: finite(r.PValue), AdjustedPValue: finite(r.AdjustedPValue),
			SequentialPValue: finite(r.SequentialPValue), AdjustedSequentialPValue: finite(r.AdjustedSequentialPValue),
			ChanceToBeatBaseline: finite(r.ChanceToBeatBaseline)}
		if r.N > 0 {
			va.Mean = finite(&mean)
		}
		out.Variations = append(out.Variations, va)
	}
	if out.Variations == nil {
		out.Variations = []VariationAnalysis{}
	}
}
