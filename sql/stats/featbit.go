package stats

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
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

// FeatBit's reason strings, spelled as FeatBit spells them ("traitement").
const (
	ReasonTooSmall       = "quantity of control or traitement is too small"
	ReasonControlEmpty   = "control is empty"
	ReasonTreatmentEmpty = "traitement is empty"
	ReasonBaseline       = "is baseline"
	// ReasonControlMeanZero is Bunting's: a numeric control whose mean is
	// exactly 0 makes FeatBit divide by zero and fail the whole request.
	ReasonControlMeanZero = "control mean is zero"
)

// FeatBit's fixed settings (FrequenstSettings).
const (
	featbitPower   = 0.8
	featbitMinSize = 30
)

// featbitGroup is one variation as FeatBit's Variation classes see it.
type featbitGroup struct {
	n, mean, variance float64
}

func newFeatbitGroup(g Group, numeric bool) featbitGroup {
	fg := featbitGroup{n: float64(g.N), mean: g.Mean()}
	if numeric {
		fg.variance = g.SampleVariance() // var_samp over the per-user sums
	} else {
		fg.variance = fg.mean * (1 - fg.mean) // BinomialVariation: p(1−p), not n/(n−1)
	}
	return fg
}

// FeatBit computes FeatBit's data-analytics results (Welch t-test on relative lift,
// delta method, min 30 per group, power check 0.8, winner rule, FeatBit's row order).
//
// Rows come back as FeatBit orders them: the significant rows by effect size,
// ascending, then the others in Input order. A baseline missing from Groups
// counts as a variation without users (FeatBit would fail the request).
// Invalid alphas (outside (0, 1)) mean 0.05.
//
// The p-value written into a "p_value >= alpha (p >= alpha)" reason is
// Python's repr of the float; its last digits can differ from FeatBit's, which
// computes Student's t with scipy rather than gonum; they agree far beyond
// the five places Format prints.
func FeatBit(in Input) []FeatBitResult {
	alpha := in.alpha()
	var control featbitGroup
	for _, g := range in.Groups {
		if g.Variation == in.Baseline {
			control = newFeatbitGroup(g, in.Numeric)
			break
		}
	}
	var valid, invalid []FeatBitResult
	for _, g := range in.Groups {
		r := featbitRow(control, newFeatbitGroup(g, in.Numeric), g.Variation == in.Baseline, alpha)
		r.Variation, r.N, r.Sum, r.Mean = g.Variation, g.N, g.Sum, g.Mean()
		if r.IsInvalid {
			invalid = append(invalid, r)
		} else {
			valid = append(valid, r)
		}
	}
	// _cal_winner_for_each_variation_result: a stable sort by delta; with
	// Lower the most negative wins if negative, else (also with Lower) the
	// most positive wins if positive.
	sort.SliceStable(valid, func(i, j int) bool { return *valid[i].EffectSize < *valid[j].EffectSize })
	if k := len(valid); k > 0 {
		if in.Criterion == Lower && *valid[0].EffectSize < 0 {
			valid[0].IsWinner = true
		} else if *valid[k-1].EffectSize > 0 {
			valid[k-1].IsWinner = true
		}
	}
	return append(valid, invalid...)
}

// featbitRow is OnlineTTest.get_result: the checks in FeatBit's order.
func featbitRow(c, t featbitGroup, isBaseline bool, alpha float64) FeatBitResult {
	r := FeatBitResult{IsBaseline: isBaseline, IsInvalid: true}
	switch {
	case c.n < featbitMinSize || t.n < featbitMinSize:
		r.Reason = ReasonTooSmall
		return r
	case c.variance == 0:
		r.Reason = ReasonControlEmpty
		return r
	case t.variance == 0:
		r.Reason = ReasonTreatmentEmpty
		return r
	case isBaseline:
		r.EffectSize, r.CI, r.PValue = ptr(0.0), &[2]float64{0, 0}, ptr(1.0)
		r.Reason = ReasonBaseline
		return r
	case c.mean == 0:
		r.Reason = ReasonControlMeanZero
		return r
	}
	delta := (t.mean - c.mean) / c.mean
	vnt, vnc := t.variance/t.n, c.variance/c.n
	variance := vnt/(c.mean*c.mean) + vnc*(t.mean*t.mean)/(c.mean*c.mean*c.mean*c.mean)
	df := (vnt + vnc) * (vnt + vnc) / (vnt*vnt/(t.n-1) + vnc*vnc/(c.n-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	tstat := delta / math.Sqrt(variance)
	p := 2 * (1 - dist.CDF(math.Abs(tstat)))
	half := dist.Quantile(1-alpha/2) * math.Sqrt(variance)
	r.EffectSize, r.CI, r.PValue = ptr(delta), &[2]float64{delta - half, delta + half}, ptr(p)
	if p >= alpha {
		r.Reason = "p_value >= alpha (" + pyRepr(p) + " >= " + pyRepr(alpha) + ")"
		return r
	}
	// The power check: Cohen's d with the pooled sample standard deviation.
	pooled := math.Sqrt(((t.n-1)*t.variance + (c.n-1)*c.variance) / (t.n + c.n - 2))
	required := math.Ceil(ttIndSolvePower(math.Abs(t.mean-c.mean)/pooled, alpha, featbitPower, t.n/c.n))
	if t.n < required { // false for NaN, as in numpy
		r.Reason = "sample size is too small (" + strconv.FormatFloat(t.n, 'f', -1, 64) + " < " + pyRepr(required) + ")"
		return r
	}
	r.IsInvalid = false
	return r
}

// Format renders a number as FeatBit does: numpy format_float_positional(v, precision=5, trim='-').
//
// numpy prints the shortest digits that identify the float when they need at
// most 5 places after the point; otherwise it rounds the float's exact binary
// value to 5 places, halves to even. trim='-' then drops trailing zeros and a
// bare point. The sign of a negative value that rounds to zero stays ("-0").
func Format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 5 {
		s = strconv.FormatFloat(v, 'f', 5, 64)
	}
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// pyRepr renders a float as Python's str/repr does (and numpy's float64): the
// shortest round-trip digits, positional when the decimal exponent is in
// [-4, 16) with ".0" on whole numbers, else scientific with a two-digit
// exponent at least ("1e-05").
func pyRepr(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	_, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
