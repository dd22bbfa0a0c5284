package stats

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Analysis is Bunting's sound analysis.
type Analysis struct {
	SRMPValue  float64             // chi-square goodness of fit of N against Weights
	SRM        bool                // SRMPValue < SRMThreshold
	Variations []VariationAnalysis // in Input order
	// SequentialAlpha is the level the sequential intervals are built at:
	// Alpha divided by the number of non-baseline variations (Bonferroni).
	SequentialAlpha float64
}

// VariationAnalysis is one variation's row of Bunting's analysis.
type VariationAnalysis struct {
	Variation            string
	N                    int64
	Mean                 float64
	IsBaseline           bool
	Lift                 *float64    // relative lift vs baseline (nil for baseline / too few users)
	Interval             *[2]float64 // fixed-horizon CI on relative lift
	SequentialInterval   *[2]float64 // always-valid interval on relative lift at level 1−Alpha/m over m non-baseline variations (Bonferroni, Holm's first step; Analysis.SequentialAlpha)
	PValue               *float64    // fixed-horizon
	AdjustedPValue       *float64    // Holm across the non-baseline variations
	SequentialPValue     *float64    // always-valid p-value
	ChanceToBeatBaseline *float64    // P(variation better than baseline), respecting Criterion
	// AdjustedSequentialPValue is Holm's adjustment of the always-valid
	// p-values across the non-baseline variations.
	AdjustedSequentialPValue *float64
}

// Settings of Bunting's analysis.
const (
	// SRMThreshold flags a sample ratio mismatch, as GrowthBook and Eppo do:
	// strict because the check is repeated at every look.
	SRMThreshold = 0.001
	// MinUsers is the fewest users a variation and the baseline each need
	// before a lift is reported; the normal approximations behind every
	// interval need some data, and FeatBit uses the same floor.
	MinUsers = 30
	// DefaultPlannedUsers tunes the sequential interval when Input.PlannedUsers
	// is 0: GrowthBook's default.
	DefaultPlannedUsers = 5000
)

// Analyze computes Bunting's analysis of in: SRM, fixed-horizon and
// always-valid inference on the relative lift of each variation over the
// baseline, Holm-adjusted across variations, and the chance to beat the
// baseline. See the package documentation for the method.
func Analyze(in Input) Analysis {
	alpha := in.alpha()
	m := 0
	var base *Group
	for i, g := range in.Groups {
		if g.Variation == in.Baseline {
			if base == nil {
				base = &in.Groups[i]
			}
			continue
		}
		m++
	}
	seqAlpha := alpha / float64(max(m, 1))
	planned := float64(in.PlannedUsers)
	if planned <= 0 {
		planned = DefaultPlannedUsers
	}
	rho := mixingRho(seqAlpha, planned)

	a := Analysis{SRMPValue: srmPValue(in.Groups, in.Weights), SequentialAlpha: seqAlpha}
	a.SRM = a.SRMPValue < SRMThreshold
	for _, g := range in.Groups {
		v := VariationAnalysis{Variation: g.Variation, N: g.N, Mean: g.Mean(), IsBaseline: g.Variation == in.Baseline}
		if !v.IsBaseline && base != nil {
			fillLift(&v, *base, g, in, alpha, seqAlpha, rho)
		}
		a.Variations = append(a.Variations, v)
	}
	holm(a.Variations, m, func(v *VariationAnalysis) *float64 { return v.PValue },
		func(v *VariationAnalysis, p float64) { v.AdjustedPValue = &p })
	holm(a.Variations, m, func(v *VariationAnalysis) *float64 { return v.SequentialPValue },
		func(v *VariationAnalysis, p float64) { v.AdjustedSequentialPValue = &p })
	return a
}

// moments returns a group's mean and unbiased variance. A conversion's x is
// 0 or 1, so x² = x and the sum of squares is the sum, whatever was passed.
func moments(g Group, numeric bool) (mean, variance float64) {
	if !numeric {
		g.SumSquares = g.Sum
	}
	return g.Mean(), g.SampleVariance()
}

// fillLift sets every inferential field of v, the row of treatment t against
// control c, or leaves them nil when the lift cannot be estimated.
func fillLift(v *VariationAnalysis, c, t Group, in Input, alpha, seqAlpha, rho float64) {
	if c.N < MinUsers || t.N < MinUsers {
		return
	}
	mc, vc := moments(c, in.Numeric)
	mt, vt := moments(t, in.Numeric)
	nc, nt := float64(c.N), float64(t.N)
	if mc == 0 || (vc == 0 && vt == 0) {
		return
	}
	// Delta method for the ratio of two independent means (GrowthBook,
	// FeatBit): Var((μt−μc)/μc) ≈ σt²/(nt μc²) + σc² μt²/(nc μc⁴).
	lift := (mt - mc) / mc
	se2 := vt/(nt*mc*mc) + vc*mt*mt/(nc*mc*mc*mc*mc)
	se := math.Sqrt(se2)
	z := lift / se

	// Fixed horizon: Welch's t with Welch–Satterthwaite degrees of freedom.
	at, ac := vt/nt, vc/nc
	df := (at + ac) * (at + ac) / (at*at/(nt-1) + ac*ac/(nc-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	p := 2 * dist.CDF(-math.Abs(z))
	half := tQuantile(1-alpha/2, df) * se

	// Always valid: the normal-mixture asymptotic confidence sequence.
	n := nt + nc
	seqHalf := se * math.Sqrt(n) * csRadius(n, rho, seqAlpha)

	std := distuv.UnitNormal
	beat := std.CDF(z)
	if in.Criterion == Lower {
		beat = std.CDF(-z)
	}
	v.Lift = &lift
	v.Interval = &[2]float64{lift - half, lift + half}
	v.PValue = &p
	v.SequentialInterval = &[2]float64{lift - seqHalf, lift + seqHalf}
	v.SequentialPValue = ptr(csPValue(n, rho, z))
	v.ChanceToBeatBaseline = &beat
}

// mixingRho is the mixing parameter that makes the two-sided normal-mixture
// boundary narrowest at n = planned observations (Waudby-Smith et al. 2023,
// as GrowthBook computes it): ρ² = (−2 ln α + ln(1 − 2 ln α)) / planned.
func mixingRho(alpha, planned float64) float64 {
	l := -2 * math.Log(alpha)
	return math.Sqrt((l + math.Log(l+1)) / planned)
}

// csRadius is the half-width, in units of the per-observation standard
// deviation, of the asymptotic confidence sequence after n observations:
// √( 2(nρ²+1) ln(√(nρ²+1)/α) / (nρ)² ).
func csRadius(n, rho, alpha float64) float64 {
	r := n * rho * rho
	nr := n * rho
	return math.Sqrt(2 * (r + 1) * math.Log(math.Sqrt(r+1)/alpha) / (nr * nr))
}

// csPValue is the always-valid p-value dual to csRadius: the smallest α
// whose confidence sequence excludes 0 given the z statistic after n
// observations, √(nρ²+1)·exp(−nρ² z² / (2(nρ²+1))), capped at 1.
func csPValue(n, rho, z float64) float64 {
	r := n * rho * rho
	return math.Min(1, math.Sqrt(r+1)*math.Exp(-r*z*z/(2*(r+1))))
}

// holm sets Holm's step-down adjusted p-values over the m non-baseline
// variations: sorted ascending, the k-th (from 0) becomes
// max over j ≤ k of min(1, (m−j)·p₍ⱼ₎). Rows without a p-value count among the
// m hypotheses (their p is taken as 1) but get no adjusted value.
func holm(vs []VariationAnalysis, m int, get func(*VariationAnalysis) *float64, set func(*VariationAnalysis, float64)) {
	var idx []int
	for i := range vs {
		if get(&vs[i]) != nil {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return *get(&vs[idx[a]]) < *get(&vs[idx[b]]) })
	running := 0.0
	for k, i := range idx {
		adj := math.Min(1, float64(m-k)**get(&vs[i]))
		running = math.Max(running, adj)
		set(&vs[i], running)
	}
}

// srmPValue is Pearson's chi-square goodness-of-fit p-value of the users per
// variation against their expected shares (equal when weights is nil; a
// variation missing from a non-nil map expects none). Users where none are
// expected give 0; no users, or fewer than two variations expecting traffic,
// give 1.
func srmPValue(groups []Group, weights map[string]float64) float64 {
	w := make([]float64, len(groups))
	var total, wsum float64
	for i, g := range groups {
		w[i] = 1
		if weights != nil {
			w[i] = math.Max(weights[g.Variation], 0)
		}
		total += float64(g.N)
		wsum += w[i]
	}
	if total == 0 || wsum == 0 {
		return 1
	}
	var chi2 float64
	k := 0
	for i, g := range groups {
		if w[i] == 0 {
			if g.N > 0 {
				return 0
			}
			continue
		}
		k++
		e := total * w[i] / wsum
		d := float64(g.N) - e
		chi2 += d * d / e
	}
	if k < 2 {
		return 1
	}
	return distuv.ChiSquared{K: float64(k - 1)}.Survival(chi2)
}
