package web

import (
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/stats"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/views"
)

// experimentResults shows one iteration's results: FeatBit's figures as
// FeatBit's UI reads them (RefreshIterationResults, which FeatBit's UI
// asks for every minute) beside Bunting's analysis, its verdicts in words,
// the sample-ratio warning, and each variation's interval over time (the
// analysis's History).
func (p *pages) experimentResults(c echo.Context, w workEnv, x experiments.Experiment, it experiments.Iteration) (views.ExperimentResults, error) {
	ctx, a := c.Request().Context(), actor(c)
	st := p.store.Experiments()
	fresh, err := st.RefreshIterationResults(ctx, a, w.id, []experiments.IterationParam{{ExperimentID: x.ID, IterationID: it.ID}})
	if err != nil {
		return views.ExperimentResults{}, err
	}
	featbit := it.Results
	if len(fresh) > 0 {
		featbit = fresh[0].Results
	}
	an, err := st.Analyze(ctx, a, w.id, x.ID, &it.ID)
	if err != nil {
		return views.ExperimentResults{}, err
	}
	m := wordsOf(an, x, it.CustomEventUnit)
	out := views.ExperimentResults{Numeric: an.Numeric, Unit: it.CustomEventUnit,
		Updated: "Computed " + an.At.UTC().Format(chartTipTime) + "."}
	var users int64
	for _, v := range an.Variations {
		users += v.Users
	}
	if users == 0 {
		out.Empty = fmt.Sprintf("No user counted yet. A user counts once a FeatBit SDK reports serving them %s for the experiment, "+
			"and then their %s events.", x.FeatureFlagName, metricEvent(x.MetricEventType, x.MetricEventName))
		return out, nil
	}
	out.SRM = srmWarning(an, x)
	out.Verdicts = verdicts(an, x)
	byID := make(map[string]experiments.Result, len(featbit))
	for _, r := range featbit {
		byID[r.VariationID] = r
	}
	for _, v := range an.Variations {
		out.Rows = append(out.Rows, resultRow(v, byID[v.VariationID], x, m, an.Numeric))
	}
	out.Note = fmt.Sprintf("Change, confidence interval and p-value are FeatBit's fixed-horizon figures (α %s): "+
		"they hold only when read once, at a sample size fixed in advance. The always-valid interval (at %s) and the chance to "+
		"beat the baseline may be read at any time, however often: the sentences above use them.",
		strconv.FormatFloat(an.Alpha, 'f', -1, 64), percent(1-an.SequentialAlpha))
	if an.Numeric {
		out.Note += " FeatBit averages over the users who sent the event; Bunting over every exposed user, counting 0 for those who sent none."
	}
	series := 0
	for _, v := range an.Variations {
		if v.IsBaseline {
			continue
		}
		series++
		out.Charts = append(out.Charts, drawIntervalChart("interval-"+strconv.Itoa(series), xVariation(v.VariationID, x), series,
			lookSeries(withNow(an), v.VariationID), m))
	}
	return out, nil
}

// wordsOf is what the sentences need to know of an analysis.
func wordsOf(an experiments.Analysis, x experiments.Experiment, unit string) metricWords {
	return metricWords{numeric: an.Numeric, lower: an.LowerIsBetter, unit: unit, baseline: xVariation(an.Baseline, x),
		minUsers: stats.MinUsers}
}

// verdicts are the analysis's sentences, one per variation but the baseline.
func verdicts(an experiments.Analysis, x experiments.Experiment) []views.Verdict {
	var base experiments.VariationAnalysis
	for _, v := range an.Variations {
		if v.IsBaseline {
			base = v
		}
	}
	m := wordsOf(an, x, x.MetricCustomEventUnit)
	var out []views.Verdict
	for _, v := range an.Variations {
		if !v.IsBaseline {
			out = append(out, verdict(xVariation(v.VariationID, x), v, base, m))
		}
	}
	return out
}

// withNow is the analysis's history ending with the analysis itself: the
// store snapshots at most once a minute, so the latest events may be in
// no snapshot yet.
func withNow(an experiments.Analysis) []experiments.HistoryPoint {
	now := experiments.HistoryPoint{At: an.At}
	for _, v := range an.Variations {
		now.Variations = append(now.Variations, experiments.HistoryVariation{VariationID: v.VariationID, Users: v.Users, Mean: v.Mean,
			Lift: v.Lift, Interval: v.Interval, SequentialInterval: v.SequentialInterval, ChanceToBeatBaseline: v.ChanceToBeatBaseline})
	}
	return append(an.History, now)
}

// lookSeries is one variation's share of each point of the analysis's
// history (the store's snapshots of the iteration's sums, minute by
// minute).
func lookSeries(looks []experiments.HistoryPoint, variation string) []intervalLook {
	var out []intervalLook
	for _, l := range looks {
		for _, v := range l.Variations {
			if v.VariationID != variation {
				continue
			}
			il := intervalLook{at: l.At, users: v.Users, lift: v.Lift, interval: v.SequentialInterval}
			if v.Mean != nil {
				il.mean = *v.Mean
			}
			out = append(out, il)
		}
	}
	return out
}

// resultRow is one variation's row: Bunting's users, FeatBit's counts,
// rate, change, interval and p-value as FeatBit's UI shows them, and
// Bunting's always-valid interval and chance to beat the baseline.
func resultRow(v experiments.VariationAnalysis, r experiments.Result, x experiments.Experiment, m metricWords, numeric bool) views.ResultRow {
	row := views.ResultRow{Variation: xVariation(v.VariationID, x), IsBaseline: v.IsBaseline, IsWinner: r.IsWinner,
		Users: strconv.FormatInt(v.Users, 10), Conversions: "—", Rate: "—", Lift: "—", Interval: "—", PValue: "—",
		Sequential: interval(v.SequentialInterval), Chance: "—", FeatBit: r.Reason}
	if numeric {
		if r.TotalEvents != nil {
			row.Conversions = strconv.FormatInt(*r.TotalEvents, 10)
		}
		if f, ok := number(r.Average); ok {
			row.Rate = rate(f, m)
		}
	} else {
		if r.Conversion != nil {
			row.Conversions = strconv.FormatInt(*r.Conversion, 10)
		}
		if f, ok := number(r.ConversionRate); ok {
			row.Rate = rate(f, m)
		}
	}
	if v.IsBaseline {
		row.FeatBit, row.Sequential = "Baseline", "—"
		return row
	}
	if f, ok := number(r.EffectSize); ok {
		row.Lift = signedPercent(f)
	}
	if len(r.ConfidenceInterval) == 2 {
		lo, ok1 := number(&r.ConfidenceInterval[0])
		hi, ok2 := number(&r.ConfidenceInterval[1])
		if ok1 && ok2 {
			row.Interval = interval(&[2]float64{lo, hi})
		}
	}
	if r.PValue != nil {
		row.PValue = *r.PValue
		if *r.PValue == "0" { // FeatBit's five places round it to nothing
			row.PValue = "< 0.00001"
		}
	}
	if v.ChanceToBeatBaseline != nil {
		row.Chance = chance(*v.ChanceToBeatBaseline)
	}
	if !r.IsInvalid && !r.IsWinner {
		row.FeatBit = "Significant"
	}
	return row
}

// number reads one of FeatBit's figures, which it writes as strings.
func number(s *string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(*s, 64)
	return f, err == nil
}
