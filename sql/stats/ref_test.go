package stats

import (
	"math"
	"testing"
)

// Reference routines written from textbook definitions and integrated
// numerically, sharing no code with the package, so the package's values are
// checked against an independent computation.

// simpson integrates f over [a, b] with n (even) panels.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}

// refTCDF is Student's t CDF: ½ + ∫₀ᵗ Γ((ν+1)/2)/(√(νπ)Γ(ν/2)) (1+x²/ν)^−(ν+1)/2 dx.
func refTCDF(t, nu float64) float64 {
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	logc := a - b - 0.5*math.Log(nu*math.Pi)
	pdf := func(x float64) float64 { return math.Exp(logc - (nu+1)/2*math.Log1p(x*x/nu)) }
	half := simpson(pdf, 0, math.Abs(t), 4000)
	if t < 0 {
		return 0.5 - half
	}
	return 0.5 + half
}

// refTQuantile inverts refTCDF by bisection.
func refTQuantile(p, nu float64) float64 {
	lo, hi := -60.0, 60.0
	for range 64 {
		mid := (lo + hi) / 2
		if refTCDF(mid, nu) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// refNormCDF is Φ from the error function.
func refNormCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// refNctCDF is the noncentral t CDF from its definition T = (Z+δ)/S with
// S = √(V/ν), V ~ χ²ν: P(T ≤ t) = ∫ Φ(t·s − δ) g(s) ds, where S has density
// g(s) = 2(ν/2)^{ν/2}/Γ(ν/2) · s^{ν−1} e^{−νs²/2}.
func refNctCDF(t, nu, delta float64) float64 {
	lg, _ := math.Lgamma(nu / 2)
	logc := math.Log(2) + nu/2*math.Log(nu/2) - lg
	g := func(s float64) float64 {
		if s <= 0 {
			return 0
		}
		return math.Exp(logc + (nu-1)*math.Log(s) - nu*s*s/2)
	}
	// S concentrates around 1 with spread about 1/√(2ν).
	sd := 1 / math.Sqrt(2*nu)
	a, b := math.Max(0, 1-40*sd), 1+40*sd
	if nu < 30 {
		a, b = 0, 12
	}
	return simpson(func(s float64) float64 { return refNormCDF(t*s-delta) * g(s) }, a, b, 8000)
}

// refTTestIndPower is statsmodels' two-sample t power from its definition:
// df = n1+n2−2, noncentrality d·√(n1·n2/(n1+n2)), both tails.
func refTTestIndPower(d, n1, alpha, ratio float64) float64 {
	n2 := n1 * ratio
	df := n1 + n2 - 2
	nc := d * math.Sqrt(n1*n2/(n1+n2))
	crit := refTQuantile(1-alpha/2, df)
	return 1 - refNctCDF(crit, df, nc) + refNctCDF(-crit, df, nc)
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: got %.12g, want %.12g (tol %g)", what, got, want, tol)
	}
}

func TestReferenceRoutinesAgainstPublishedValues(t *testing.T) {
	// Published Student t quantiles (any t table), and the closed forms for
	// ν = 1 (Cauchy: tan(π(p−½))) and ν = 2 (t = (2p−1)/√(2p(1−p))).
	near(t, "t(0.975, 10)", refTQuantile(0.975, 10), 2.228138851986274, 1e-9)
	near(t, "t(0.975, 30)", refTQuantile(0.975, 30), 2.042272456301238, 1e-9)
	near(t, "t(0.95, 1)", refTQuantile(0.95, 1), math.Tan(math.Pi*0.45), 1e-7)
	p := 0.9
	near(t, "t(0.9, 2)", refTQuantile(p, 2), (2*p-1)/math.Sqrt(2*p*(1-p)), 1e-9)
	// With δ = 0 the noncentral t is Student's t.
	near(t, "nct δ=0", refNctCDF(1.3, 7, 0), refTCDF(1.3, 7), 1e-9)
}
