package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// nctCDF is the CDF of the noncentral t distribution with nu degrees of
// freedom and noncentrality delta at t.
//
// For t ≥ 0 it uses the Poisson mixture of incomplete beta functions
// (Lenth 1989, Algorithm AS 243):
//
//	F(t) = Φ(−δ) + ½ Σⱼ [ pⱼ I_x(j+½, ν/2) + qⱼ I_x(j+1, ν/2) ],  x = t²/(t²+ν),
//	pⱼ = e^{−λ} λʲ/j!,  qⱼ = δ e^{−λ} λʲ / (√2 Γ(j+3/2)),  λ = δ²/2,
//
// summed outward from the Poisson mode in both directions (as Boost does), so
// a large δ neither underflows e^{−λ} nor needs thousands of terms. For t < 0,
// F(t; ν, δ) = 1 − F(−t; ν, −δ).
func nctCDF(t, nu, delta float64) float64 {
	if math.IsNaN(t) || math.IsNaN(nu) || math.IsNaN(delta) || nu <= 0 {
		return math.NaN()
	}
	if t < 0 {
		return 1 - nctCDF(-t, nu, -delta)
	}
	phi := 0.5 * math.Erfc(delta/math.Sqrt2) // Φ(−δ)
	if t == 0 {
		return phi
	}
	if math.IsInf(t, 1) {
		return 1
	}
	x := t * t / (t*t + nu)
	lambda := delta * delta / 2
	term := func(j float64) float64 {
		lp := -lambda + j*math.Log(lambda)
		if lambda == 0 {
			if j > 0 {
				return 0
			}
			lp = 0
		}
		lg1, _ := math.Lgamma(j + 1)
		lg2, _ := math.Lgamma(j + 1.5)
		p := math.Exp(lp - lg1)
		q := delta / math.Sqrt2 * math.Exp(lp-lg2)
		return p*mathext.RegIncBeta(j+0.5, nu/2, x) + q*mathext.RegIncBeta(j+1, nu/2, x)
	}
	const eps = 1e-15
	mode := math.Floor(lambda)
	sum := term(mode)
	// Forward: the weights fall and I_x falls in j, so stop once both the
	// term and the Poisson tail beyond it are negligible.
	for j := mode + 1; j < mode+100000; j++ {
		v := term(j)
		sum += v
		if math.Abs(v) <= eps*math.Abs(sum) && j > lambda+math.Sqrt(lambda)+1 {
			break
		}
	}
	for j := mode - 1; j >= 0; j-- {
		v := term(j)
		sum += v
		if math.Abs(v) <= eps*math.Abs(sum) && j < lambda-math.Sqrt(lambda)-1 {
			break
		}
	}
	return math.Min(1, math.Max(0, phi+sum/2))
}

// ttestIndPower is statsmodels' TTestIndPower.power for a two-sided test:
// nobs2 = nobs1·ratio, df = nobs1+nobs2−2, nobs = 1/(1/nobs1+1/nobs2), and the
// power is the probability of either tail under the noncentral t with
// noncentrality d·√nobs:
//
//	power = 1 − F_nct(t_{1−α/2}; df, d√nobs) + F_nct(t_{α/2}; df, d√nobs).
func ttestIndPower(d, nobs1, alpha, ratio float64) float64 {
	nobs2 := nobs1 * ratio
	df := nobs1 - 1 + nobs2 - 1
	if !(df > 0) {
		return math.NaN()
	}
	nobs := 1 / (1/nobs1 + 1/nobs2)
	nc := d * math.Sqrt(nobs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	upper := 1 - nctCDF(t.Quantile(1-alpha/2), df, nc)
	lower := nctCDF(t.Quantile(alpha/2), df, nc)
	return upper + lower
}

// ttIndSolvePower is statsmodels' tt_ind_solve_power(effect_size=d,
// nobs1=None, alpha, power, ratio, alternative='two-sided'): the nobs1 at
// which the two-sided test reaches the power. Like statsmodels it brackets the
// root from [2, 50], expanding the upper end tenfold, then narrows the bracket
// (here by bisection to a far tighter tolerance than statsmodels' 1e-5, which
// can only matter when the root lies within 1e-5 of an integer). It returns
// NaN when no root is bracketed (d = 0, or the power already reached below 2).
func ttIndSolvePower(d, alpha, power, ratio float64) float64 {
	if !(d > 0) || !(ratio > 0) {
		return math.NaN()
	}
	f := func(n float64) float64 { return ttestIndPower(d, n, alpha, ratio) - power }
	lo, hi := 2.0, 50.0
	flo := f(lo)
	if math.IsNaN(flo) || flo > 0 {
		return math.NaN()
	}
	for i := 0; f(hi) < 0; i++ {
		if i >= 100 || math.IsInf(hi, 1) {
			return math.NaN()
		}
		lo, hi = hi, hi*10
	}
	for i := 0; i < 200 && hi-lo > 1e-9*math.Max(1, lo); i++ {
		mid := lo + (hi-lo)/2
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// tQuantile is Student's t quantile, fast for the large degrees of freedom
// of experiment data: the Cornish–Fisher expansion (Abramowitz & Stegun
// 26.7.5) polished by Newton steps on the CDF, which is one incomplete beta
// each where gonum's Quantile inverts the incomplete beta iteratively. Below
// 5 degrees of freedom, or if Newton stalls, it defers to gonum.
func tQuantile(p, nu float64) float64 {
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}
	if nu < 5 || p <= 1e-12 || p >= 1-1e-12 {
		return dist.Quantile(p)
	}
	z := distuv.UnitNormal.Quantile(p)
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	g4 := ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) * z / 92160
	x := z + (g1+(g2+(g3+g4/nu)/nu)/nu)/nu
	for range 8 {
		step := (dist.CDF(x) - p) / dist.Prob(x)
		x -= step
		if math.Abs(step) <= 1e-10*math.Max(1, math.Abs(x)) { // quadratic: x is now far closer; the CDF itself is good to ~1e-14
			return x
		}
	}
	return dist.Quantile(p)
}
