package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/stats"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Result is one variation's row of FeatBit's IterationResult: counts as
// numbers, every other figure as FeatBit's string (stats.Format), null
// where FeatBit leaves it null. A conversion metric fills uniqueUsers,
// conversion and conversionRate; a numeric one totalEvents and average.
type Result struct {
	ChangeToBaseline   *string  `json:"changeToBaseline"`
	ConfidenceInterval []string `json:"confidenceInterval"`
	Conversion         *int64   `json:"conversion"`
	ConversionRate     *string  `json:"conversionRate"`
	TotalEvents        *int64   `json:"totalEvents"`
	Average            *string  `json:"average"`
	IsBaseline         bool     `json:"isBaseline"`
	IsInvalid          bool     `json:"isInvalid"`
	IsWinner           bool     `json:"isWinner"`
	PValue             *string  `json:"pValue"`
	UniqueUsers        *int64   `json:"uniqueUsers"`
	VariationID        string   `json:"variationId"`
	EffectSize         *string  `json:"effectSize"`
	Reason             string   `json:"reason"`
}

func formatted(v *float64) *string {
	if v == nil {
		return nil
	}
	s := stats.Format(*v)
	return &s
}

// totals reads an iteration's per-variation sums, one row per variation.
func totals(ctx context.Context, q *db.Queries, iteration uuid.UUID) (map[string]db.ExperimentVariationTotalsRow, error) {
	rows, err := q.ExperimentVariationTotals(ctx, iteration)
	if err != nil {
		return nil, err
	}
	out := make(map[string]db.ExperimentVariationTotalsRow, len(rows))
	for _, r := range rows {
		out[r.VariationID] = r
	}
	return out, nil
}

// featbitResults computes an iteration's results as FeatBit's analytics
// does, over every variation of the flag.
func (s *Experiments) featbitResults(ctx context.Context, q *db.Queries, x Experiment, it Iteration, alpha float64) ([]Result, error) {
	t, err := totals(ctx, q, it.ID)
	if err != nil {
		return nil, err
	}
	numeric := it.IsNumeric()
	in := stats.Input{Baseline: x.BaselineVariationID, Alpha: alpha, Numeric: numeric,
		Criterion: stats.Criterion(it.CustomEventSuccessCriteria)}
	for _, v := range x.Variations {
		r := t[v.ID]
		g := stats.Group{Variation: v.ID, N: r.Users, Sum: float64(r.Converted), SumSquares: float64(r.Converted)}
		if numeric {
			// FeatBit joins exposures to events (an inner join): only the
			// exposed users who sent an event count. The others' totals are 0,
			// so the sums are the same.
			g = stats.Group{Variation: v.ID, N: r.Converted, Sum: r.Total, SumSquares: r.TotalSquares}
		}
		in.Groups = append(in.Groups, g)
	}
	rows := stats.FeatBit(in)
	out := make([]Result, len(rows))
	for i, r := range rows {
		res := Result{VariationID: r.Variation, IsBaseline: r.IsBaseline, IsInvalid: r.IsInvalid, IsWinner: r.IsWinner,
			Reason: r.Reason, EffectSize: formatted(r.EffectSize), PValue: formatted(r.PValue)}
		if r.CI != nil {
			res.ConfidenceInterval = []string{stats.Format(r.CI[0]), stats.Format(r.CI[1])}
		}
		n, mean := r.N, stats.Format(r.Mean)
		if numeric {
			res.TotalEvents, res.Average = &n, &mean
		} else {
			conv := int64(r.Sum)
			res.UniqueUsers, res.Conversion, res.ConversionRate = &n, &conv, &mean
		}
		out[i] = res
	}
	return out, nil
}

// IterationParam asks for one iteration's results: FeatBit's
// ExperimentIterationParam. Only the experiment and iteration are read; the
// rest of what FeatBit's UI sends is taken from the stored experiment, as
// FeatBit takes the end time from the stored iteration.
type IterationParam struct {
	ExperimentID uuid.UUID
	IterationID  uuid.UUID
}

// IterationResults is one iteration's results as PUT iteration-results
// answers them.
type IterationResults struct {
	ID        uuid.UUID  `json:"id"`
	IsUpdated bool       `json:"isUpdated"`
	UpdatedAt *time.Time `json:"updatedAt"`
	Results   []Result   `json:"results"`
	IsFinish  bool       `json:"isFinish"`
}

// MaxIterationParams bounds one iteration-results request.
const MaxIterationParams = 100

// RefreshIterationResults recomputes the results of the iterations asked
// for and keeps them in each iteration, as FeatBit's iteration-results
// does: unknown experiments and iterations are skipped, and an iteration
// finished more than LockAfter ago answers its stored results. Reading
// results needs only CanAccessEnv: what is written is what any reader
// would compute, a cache of the sums, not a change anyone made, so it is
// not audited.
func (s *Experiments) RefreshIterationResults(ctx context.Context, a *core.Actor, envID uuid.UUID, params []IterationParam) ([]IterationResults, error) {
	if len(params) > MaxIterationParams {
		return nil, core.Invalid("body_is_invalid")
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	out := []IterationResults{}
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		for _, p := range params {
			x, err := s.experiment(ctx, q, envID, p.ExperimentID)
			if errors.Is(err, core.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			r, err := q.GetExperimentIteration(ctx, db.GetExperimentIterationParams{ExperimentID: x.ID, ID: p.IterationID})
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			} else if err != nil {
				return err
			}
			it := iterationOf(r)
			now := s.now().UTC()
			if it.IsFinish && it.EndTime != nil && now.Sub(*it.EndTime) >= LockAfter {
				out = append(out, IterationResults{ID: it.ID, Results: it.Results, IsFinish: true})
				continue
			}
			results, err := s.featbitResults(ctx, q, x, it, x.Alpha)
			if err != nil {
				return err
			}
			b, err := json.Marshal(results)
			if err != nil {
				return err
			}
			finished := it.EndTime != nil && it.EndTime.Before(now)
			if err := q.SaveExperimentIterationResults(ctx, db.SaveExperimentIterationResultsParams{ID: it.ID,
				Results: b, UpdatedAt: &now, IsFinish: finished}); err != nil {
				return err
			}
			out = append(out, IterationResults{ID: it.ID, IsUpdated: true, UpdatedAt: &now, Results: results, IsFinish: finished})
		}
		return nil
	})
	return out, core.Translate(err)
}

// Analysis is Bunting's sound reading of an iteration, beside FeatBit's
// figures: the sample-ratio check, fixed-horizon and always-valid intervals
// on the relative lift, Holm-adjusted p-values and the chance to beat the
// baseline (sql/stats.Analyze). Figures that cannot be computed yet are
// null.
type Analysis struct {
	ExperimentID uuid.UUID  `json:"experimentId"`
	IterationID  *uuid.UUID `json:"iterationId"`
	StartTime    *time.Time `json:"startTime"`
	EndTime      *time.Time `json:"endTime"`
	Status       string     `json:"status"`
	Numeric      bool       `json:"numeric"`
	// LowerIsBetter is the metric's success criterion.
	LowerIsBetter   bool    `json:"lowerIsBetter"`
	Alpha           float64 `json:"alpha"`
	SequentialAlpha float64 `json:"sequentialAlpha"`
	// SRMPValue is null when the expected shares are not known: users
	// reach the experiment through targets or rules besides the default
	// rule.
	SRMPValue    *float64            `json:"srmPValue"`
	SRM          bool                `json:"srm"`
	SRMThreshold float64             `json:"srmThreshold"`
	Baseline     string              `json:"baselineVariationId"`
	Variations   []VariationAnalysis `json:"variations"`
	At           time.Time           `json:"at"`
	// History is the analysis at each minute the iteration received
	// events (its latest HistorySnapshots, at most HistoryPoints evenly
	// spaced), oldest first: each variation's interval over time.
	History []HistoryPoint `json:"history"`
}

// VariationAnalysis is one variation's row of the analysis. Mean is the
// conversion rate, or the average value per exposed user; lifts and
// intervals are relative to the baseline's mean.
type VariationAnalysis struct {
	VariationID              string      `json:"variationId"`
	Name                     string      `json:"name"`
	Value                    string      `json:"value"`
	IsBaseline               bool        `json:"isBaseline"`
	Users                    int64       `json:"users"`
	Conversions              int64       `json:"conversions"`
	Total                    float64     `json:"total"`
	Mean                     *float64    `json:"mean"`
	Lift                     *float64    `json:"lift"`
	Interval                 *[2]float64 `json:"interval"`
	SequentialInterval       *[2]float64 `json:"sequentialInterval"`
	PValue                   *float64    `json:"pValue"`
	AdjustedPValue           *float64    `json:"adjustedPValue"`
	SequentialPValue         *float64    `json:"sequentialPValue"`
	AdjustedSequentialPValue *float64    `json:"adjustedSequentialPValue"`
	ChanceToBeatBaseline     *float64    `json:"chanceToBeatBaseline"`
}

// finite keeps a figure JSON can carry: NaN and infinities become null.
func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

func finitePair(v *[2]float64) *[2]float64 {
	if v == nil || finite(&v[0]) == nil || finite(&v[1]) == nil {
		return nil
	}
	return v
}

// Analyze reads an iteration of the experiment (the latest live one when
// iterationID is nil) with Bunting's analysis. An experiment never started
// answers every variation with no users.
func (s *Experiments) Analyze(ctx context.Context, a *core.Actor, envID, id uuid.UUID, iterationID *uuid.UUID) (Analysis, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return Analysis{}, err
	}
	x, err := s.experiment(ctx, s.core.Q, envID, id)
	if err != nil {
		return Analysis{}, err
	}
	var it *Iteration
	for i := range x.Iterations {
		if iterationID == nil || x.Iterations[i].ID == *iterationID {
			it = &x.Iterations[i]
		}
	}
	if iterationID != nil && it == nil {
		return Analysis{}, core.ErrNotFound
	}
	out := Analysis{ExperimentID: x.ID, Status: x.Status, Numeric: x.IsNumeric(), Alpha: x.Alpha, Baseline: x.BaselineVariationID,
		LowerIsBetter: x.MetricCustomEventSuccessCriteria == CriteriaLower, SRMThreshold: stats.SRMThreshold, At: s.now().UTC()}
	t := map[string]db.ExperimentVariationTotalsRow{}
	if it != nil {
		out.IterationID, out.StartTime, out.EndTime = &it.ID, &it.StartTime, it.EndTime
		out.Numeric = it.IsNumeric()
		out.LowerIsBetter = it.CustomEventSuccessCriteria == CriteriaLower
		if t, err = totals(ctx, s.core.Q, it.ID); err != nil {
			return Analysis{}, core.Translate(err)
		}
	}
	res, known := analyze(x, out.Numeric, out.LowerIsBetter, t)
	out.SequentialAlpha = res.SequentialAlpha
	// The check needs the share each variation is expected to get: known
	// when only the default rule sends users to the experiment.
	if known {
		out.SRMPValue, out.SRM = finite(&res.SRMPValue), res.SRM
	}
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
	out.History = []HistoryPoint{}
	if it != nil {
		if out.History, err = s.history(ctx, x, out.Numeric, out.LowerIsBetter, it.ID); err != nil {
			return Analysis{}, err
		}
	}
	return out, nil
}

// analyze is Bunting's analysis of an iteration's sums, and whether the
// sample-ratio check's expected shares are known.
func analyze(x Experiment, numeric, lowerIsBetter bool, t map[string]db.ExperimentVariationTotalsRow) (stats.Analysis, bool) {
	in := stats.Input{Baseline: x.BaselineVariationID, Alpha: x.Alpha, Numeric: numeric, Criterion: stats.Higher}
	if lowerIsBetter {
		in.Criterion = stats.Lower
	}
	known := x.weights != nil
	for _, v := range x.Variations {
		r := t[v.ID]
		// Every exposed user counts (x = 0 without events), so N is the
		// same N the sample-ratio check counts.
		g := stats.Group{Variation: v.ID, N: r.Users, Sum: float64(r.Converted), SumSquares: float64(r.Converted)}
		if numeric {
			g.Sum, g.SumSquares = r.Total, r.TotalSquares
		}
		in.Groups = append(in.Groups, g)
		if _, ok := x.weights[v.ID]; !ok && r.Users > 0 {
			known = false // exposed through something the default rule does not serve
		}
	}
	in.Weights = x.weights
	return stats.Analyze(in), known
}

// HistoryPoint is the analysis as it stood at a past minute: what a page
// draws as each variation's interval over time.
type HistoryPoint struct {
	At         time.Time          `json:"at"`
	Variations []HistoryVariation `json:"variations"`
}

// HistoryVariation is one variation at a HistoryPoint.
type HistoryVariation struct {
	VariationID          string      `json:"variationId"`
	Users                int64       `json:"users"`
	Mean                 *float64    `json:"mean"`
	Lift                 *float64    `json:"lift"`
	Interval             *[2]float64 `json:"interval"`
	SequentialInterval   *[2]float64 `json:"sequentialInterval"`
	ChanceToBeatBaseline *float64    `json:"chanceToBeatBaseline"`
}

// Bounds of the history: the latest HistorySnapshots minutes with events
// are read, and at most HistoryPoints of them, evenly spaced, analysed.
const (
	HistorySnapshots = 2000
	HistoryPoints    = 100
)

// snapshotTotal is one variation in a snapshot (experiment_snapshots.totals).
type snapshotTotal struct {
	V string  `json:"v"`
	N int64   `json:"n"`
	C int64   `json:"c"`
	S float64 `json:"s"`
	Q float64 `json:"q"`
}

// history analyses the iteration's snapshots, oldest first.
func (s *Experiments) history(ctx context.Context, x Experiment, numeric, lowerIsBetter bool, iteration uuid.UUID) ([]HistoryPoint, error) {
	rows, err := s.core.Q.ListExperimentSnapshots(ctx, db.ListExperimentSnapshotsParams{IterationID: iteration, Lim: HistorySnapshots})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := []HistoryPoint{}
	step := max(1, (len(rows)+HistoryPoints-1)/HistoryPoints)
	for i := len(rows) - 1; i >= 0; i -= step {
		var snap []snapshotTotal
		if json.Unmarshal(rows[i].Totals, &snap) != nil {
			continue // written by this package: never
		}
		t := make(map[string]db.ExperimentVariationTotalsRow, len(snap))
		for _, v := range snap {
			t[v.V] = db.ExperimentVariationTotalsRow{VariationID: v.V, Users: v.N, Converted: v.C, Total: v.S, TotalSquares: v.Q}
		}
		res, _ := analyze(x, numeric, lowerIsBetter, t)
		p := HistoryPoint{At: rows[i].At, Variations: make([]HistoryVariation, len(res.Variations))}
		for j, r := range res.Variations {
			mean := r.Mean
			hv := HistoryVariation{VariationID: r.Variation, Users: r.N, Lift: finite(r.Lift), Interval: finitePair(r.Interval),
				SequentialInterval: finitePair(r.SequentialInterval), ChanceToBeatBaseline: finite(r.ChanceToBeatBaseline)}
			if r.N > 0 {
				hv.Mean = finite(&mean)
			}
			p.Variations[j] = hv
		}
		out = append(out, p)
	}
	return out, nil
}
