package stats

import "math"

// Group is one variation's running sums over its exposed users. For a
// conversion metric a user's value x is 1 if converted, else 0; for a numeric
// metric x is the user's summed numeric value. N users, Sum of x, SumSquares of x².
type Group struct {
	Variation  string
	N          int64
	Sum        float64
	SumSquares float64
}

// Criterion says which direction of a metric is better: FeatBit's
// customEventSuccessCriteria. The zero value behaves as Higher.
type Criterion int

// The criteria, numbered as FeatBit numbers them.
const (
	Higher Criterion = 1
	Lower  Criterion = 2
)

// Input is what both analyses read.
type Input struct {
	Groups    []Group // one per variation, baseline included (missing variation = N 0)
	Baseline  string
	Alpha     float64 // 0 means 0.05
	Numeric   bool    // FeatBit: numeric iff CustomEvent with track option Numeric; else binomial
	Criterion Criterion
	// Weights is the expected traffic share per variation for the SRM check;
	// nil means equal shares. A variation missing from a non-nil map expects
	// no traffic.
	Weights map[string]float64
	// PlannedUsers is the total number of users (all variations) the
	// experiment is expected to reach; it tunes the sequential interval to be
	// narrowest there. 0 means DefaultPlannedUsers.
	PlannedUsers int64
}

// DefaultAlpha is the significance level when Input.Alpha is 0, as in FeatBit.
const DefaultAlpha = 0.05

func (in Input) alpha() float64 {
	if in.Alpha > 0 && in.Alpha < 1 {
		return in.Alpha
	}
	return DefaultAlpha
}

// Mean is Sum/N, 0 for an empty group.
func (g Group) Mean() float64 {
	if g.N == 0 {
		return 0
	}
	return g.Sum / float64(g.N)
}

// SampleVariance is the unbiased variance of x, 0 below two users. It is
// what a database's var_samp returns over the per-user values.
func (g Group) SampleVariance() float64 {
	if g.N < 2 {
		return 0
	}
	n := float64(g.N)
	v := (g.SumSquares - g.Sum*g.Sum/n) / (n - 1)
	return math.Max(v, 0) // rounding can leave a tiny negative
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
