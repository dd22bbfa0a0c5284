package stats

import (
	"math"
	"strconv"
	"strings"
)

// FeatBitResult is one row of FeatBit's IterationResult, before formatting.
type FeatBitResult struct {
	Variation  string
	N          int64
	Sum        float64     // conversions (binomial) — uniqueUsers=N, conversion=Sum
	Mean       float64     // conversionRate or average
	EffectSize *float64    // relative lift; nil when invalid by sample size
	CI         *[2]float64 // on relative lift
	PValue     *float64
	IsBaseline bool
	IsInvalid  bool
	IsWinner   bool
	Reason     string
}

// FeatBit computes FeatBit's data-analytics results (Welch t-test on relative lift,
// delta method, min 30 per group, power check 0.8, winner rule, FeatBit's row order).
func FeatBit(in Input) []FeatBitResult {
	out := make([]FeatBitResult, 0, len(in.Groups))
	for _, g := range in.Groups {
		out = append(out, FeatBitResult{Variation: g.Variation, N: g.N, Sum: g.Sum, Mean: g.Mean(),
			IsBaseline: g.Variation == in.Baseline, IsInvalid: true})
	}
	return out
}

// Format renders a number as FeatBit does: numpy format_float_positional(v, precision=5, trim='-').
func Format(v float64) string {
	s := strconv.FormatFloat(v, 'f', 5, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	_ = math.Abs
	return s
}
