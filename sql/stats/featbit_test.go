package stats

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// featbitRef is FeatBit's OnlineTTest written out by hand from its Python
// (delta method on the relative lift, Welch–Satterthwaite df), on the
// independent reference t distribution.
type featbitRef struct{ delta, lo, hi, p float64 }

func refFeatBit(nc, mc, vc, nt, mt, vt, alpha float64) featbitRef {
	delta := (mt - mc) / mc
	variance := vt/nt/(mc*mc) + vc/nc*mt*mt/math.Pow(mc, 4)
	df := math.Pow(vt/nt+vc/nc, 2) / (math.Pow(vt/nt, 2)/(nt-1) + math.Pow(vc/nc, 2)/(nc-1))
	p := 2 * (1 - refTCDF(math.Abs(delta/math.Sqrt(variance)), df))
	r := refTQuantile(1-alpha/2, df) * math.Sqrt(variance)
	return featbitRef{delta, delta - r, delta + r, p}
}

// binomialRef is FeatBit's BinomialVariation: mean k/n and variance p(1−p).
func binomialRef(n, k float64) (mean, variance float64) { return k / n, k / n * (1 - k/n) }

func bin(v string, n int64, k float64) Group { return Group{Variation: v, N: n, Sum: k, SumSquares: k} }

func findRow(t *testing.T, rows []FeatBitResult, v string) FeatBitResult {
	t.Helper()
	for _, r := range rows {
		if r.Variation == v {
			return r
		}
	}
	t.Fatalf("no row for %q", v)
	return FeatBitResult{}
}

func checkNumbers(t *testing.T, r FeatBitResult, want featbitRef) {
	t.Helper()
	if r.EffectSize == nil || r.CI == nil || r.PValue == nil {
		t.Fatalf("%s: effect size, CI and p must be set: %+v", r.Variation, r)
	}
	near(t, "effect size", *r.EffectSize, want.delta, 1e-12)
	near(t, "CI low", r.CI[0], want.lo, 1e-8)
	near(t, "CI high", r.CI[1], want.hi, 1e-8)
	near(t, "p-value", *r.PValue, want.p, 1e-8)
}

func TestFeatBitReasons(t *testing.T) {
	tooSmallPattern := regexp.MustCompile(`^sample size is too small \((\d+) < (\d+)\.0\)$`)
	cases := []struct {
		name     string
		groups   []Group
		alpha    float64
		numeric  bool
		row      string
		reason   string // exact, unless check is set
		invalid  bool
		baseline bool
		check    func(t *testing.T, r FeatBitResult)
	}{
		{name: "control below 30", groups: []Group{bin("c", 29, 5), bin("t", 1000, 100)},
			row: "t", reason: ReasonTooSmall, invalid: true},
		{name: "baseline row too, when the control is small", groups: []Group{bin("c", 29, 5), bin("t", 1000, 100)},
			row: "c", reason: ReasonTooSmall, invalid: true, baseline: true},
		{name: "treatment below 30", groups: []Group{bin("c", 1000, 100), bin("t", 29, 5)},
			row: "t", reason: ReasonTooSmall, invalid: true},
		{name: "missing variation counts 0", groups: []Group{bin("c", 1000, 100), {Variation: "t"}},
			row: "t", reason: ReasonTooSmall, invalid: true},
		{name: "control without conversions", groups: []Group{bin("c", 1000, 0), bin("t", 1000, 100)},
			row: "t", reason: ReasonControlEmpty, invalid: true},
		{name: "empty control checked before the baseline", groups: []Group{bin("c", 1000, 0), bin("t", 1000, 100)},
			row: "c", reason: ReasonControlEmpty, invalid: true, baseline: true},
		{name: "treatment without conversions", groups: []Group{bin("c", 1000, 100), bin("t", 1000, 0)},
			row: "t", reason: ReasonTreatmentEmpty, invalid: true},
		{name: "treatment all converted has p(1-p) = 0", groups: []Group{bin("c", 1000, 100), bin("t", 40, 40)},
			row: "t", reason: ReasonTreatmentEmpty, invalid: true},
		{name: "numeric control averaging zero (FeatBit fails the request)",
			groups:  []Group{{Variation: "c", N: 100, Sum: 0, SumSquares: 100}, {Variation: "t", N: 100, Sum: 50, SumSquares: 150}},
			numeric: true, row: "t", reason: ReasonControlMeanZero, invalid: true},
		{name: "baseline", groups: []Group{bin("c", 1000, 100), bin("t", 1000, 120)},
			row: "c", reason: ReasonBaseline, invalid: true, baseline: true,
			check: func(t *testing.T, r FeatBitResult) {
				if r.EffectSize == nil || *r.EffectSize != 0 || r.CI == nil || *r.CI != [2]float64{0, 0} || r.PValue == nil || *r.PValue != 1 {
					t.Errorf("baseline numbers: got %v %v %v, want 0 [0 0] 1", r.EffectSize, r.CI, r.PValue)
				}
			}},
		{name: "not significant", groups: []Group{bin("c", 10000, 1000), bin("t", 10000, 1020)},
			row: "t", invalid: true,
			check: func(t *testing.T, r FeatBitResult) {
				mc, vc := binomialRef(10000, 1000)
				mt, vt := binomialRef(10000, 1020)
				want := refFeatBit(10000, mc, vc, 10000, mt, vt, 0.05)
				checkNumbers(t, r, want)
				p, ok := strings.CutPrefix(r.Reason, "p_value >= alpha (")
				p, ok2 := strings.CutSuffix(p, " >= 0.05)")
				v, err := strconv.ParseFloat(p, 64)
				if !ok || !ok2 || err != nil {
					t.Fatalf("reason %q, want p_value >= alpha (<p> >= 0.05)", r.Reason)
				}
				near(t, "p in the reason", v, want.p, 1e-8)
			}},
		{name: "not significant at a custom alpha", groups: []Group{bin("c", 10000, 1000), bin("t", 10000, 1100)},
			alpha: 0.01, row: "t", invalid: true,
			check: func(t *testing.T, r FeatBitResult) {
				mc, vc := binomialRef(10000, 1000)
				mt, vt := binomialRef(10000, 1100)
				want := refFeatBit(10000, mc, vc, 10000, mt, vt, 0.01)
				checkNumbers(t, r, want)
				if !strings.HasSuffix(r.Reason, " >= 0.01)") || want.p < 0.01 || want.p > 0.05 {
					t.Errorf("reason %q (reference p %v), want one ending ' >= 0.01)' with 0.01 ≤ p < 0.05", r.Reason, want.p)
				}
			}},
		{name: "significant but under-powered", groups: []Group{bin("c", 1000, 100), bin("t", 1000, 135)},
			row: "t", invalid: true,
			check: func(t *testing.T, r FeatBitResult) {
				mc, vc := binomialRef(1000, 100)
				mt, vt := binomialRef(1000, 135)
				want := refFeatBit(1000, mc, vc, 1000, mt, vt, 0.05)
				checkNumbers(t, r, want)
				if want.p >= 0.05 {
					t.Fatalf("fixture: reference p %v should be < 0.05", want.p)
				}
				m := tooSmallPattern.FindStringSubmatch(r.Reason)
				if m == nil || m[1] != "1000" {
					t.Fatalf("reason %q, want sample size is too small (1000 < <n>.0)", r.Reason)
				}
				// The required n is the smallest whole n whose power with
				// Cohen's d over the pooled sample SD reaches 0.8.
				pooled := math.Sqrt((999*vt + 999*vc) / 1998)
				d := math.Abs(mt-mc) / pooled
				n, _ := strconv.ParseFloat(m[2], 64)
				if refTTestIndPower(d, n, 0.05, 1) < 0.8 || refTTestIndPower(d, n-1, 0.05, 1) >= 0.8 {
					t.Errorf("required n %v is not the smallest reaching power 0.8 at d = %v", n, d)
				}
			}},
		{name: "significant", groups: []Group{bin("c", 10000, 1000), bin("t", 10000, 1150)},
			row: "t", reason: "",
			check: func(t *testing.T, r FeatBitResult) {
				mc, vc := binomialRef(10000, 1000)
				mt, vt := binomialRef(10000, 1150)
				checkNumbers(t, r, refFeatBit(10000, mc, vc, 10000, mt, vt, 0.05))
				if !r.IsWinner {
					t.Error("the only significant positive row must win")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := findRow(t, FeatBit(Input{Groups: c.groups, Baseline: "c", Alpha: c.alpha, Numeric: c.numeric}), c.row)
			if c.check == nil || c.reason != "" {
				if r.Reason != c.reason {
					t.Errorf("reason: got %q, want %q", r.Reason, c.reason)
				}
			}
			if r.IsInvalid != c.invalid || r.IsBaseline != c.baseline {
				t.Errorf("invalid, baseline: got %v %v, want %v %v", r.IsInvalid, r.IsBaseline, c.invalid, c.baseline)
			}
			if r.IsInvalid && r.IsWinner {
				t.Error("an invalid row cannot win")
			}
			if strings.HasPrefix(c.reason, "quantity") || strings.HasSuffix(c.reason, "empty") || c.reason == ReasonControlMeanZero {
				if r.EffectSize != nil || r.CI != nil || r.PValue != nil {
					t.Errorf("numbers must be unset: %v %v %v", r.EffectSize, r.CI, r.PValue)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestFeatBitNumericUsesSampleVariance(t *testing.T) {
	// Per-user summed values; FeatBit reads avg and var_samp over them.
	var c, tr Group
	c.Variation, tr.Variation = "c", "t"
	var cx, tx []float64
	for i := range 400 {
		cx = append(cx, 10+3*math.Sin(float64(i)))
		tx = append(tx, 11+4*math.Cos(float64(i)*0.7))
	}
	for _, x := range cx {
		c.N++
		c.Sum += x
		c.SumSquares += x * x
	}
	for _, x := range tx {
		tr.N++
		tr.Sum += x
		tr.SumSquares += x * x
	}
	meanVar := func(xs []float64) (float64, float64) { // two-pass, n−1
		var s float64
		for _, x := range xs {
			s += x
		}
		m := s / float64(len(xs))
		var ss float64
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return m, ss / float64(len(xs)-1)
	}
	mc, vc := meanVar(cx)
	mt, vt := meanVar(tx)
	rows := FeatBit(Input{Groups: []Group{c, tr}, Baseline: "c", Numeric: true})
	r := findRow(t, rows, "t")
	checkNumbers(t, r, refFeatBit(400, mc, vc, 400, mt, vt, 0.05))
	near(t, "mean", r.Mean, mt, 1e-12)
	if r.IsInvalid {
		t.Errorf("a 10%% lift on 400 users each must be significant: %q", r.Reason)
	}
}

func TestFeatBitWinnerAndOrder(t *testing.T) {
	all := []Group{
		bin("control", 10000, 1000),
		bin("flat", 10000, 1010),     // p ≥ alpha
		bin("down", 10000, 850),      // −15 %
		bin("tiny", 20, 3),           // too few users
		bin("up-big", 10000, 1200),   // +20 %
		bin("up-small", 10000, 1150), // +15 %
	}
	without := func(drop string) []Group {
		var out []Group
		for _, g := range all {
			if g.Variation != drop {
				out = append(out, g)
			}
		}
		return out
	}
	cases := []struct {
		name      string
		groups    []Group
		criterion Criterion
		order     []string
		winner    string
	}{
		{"higher: the largest positive lift wins", all, Higher,
			[]string{"down", "up-small", "up-big", "control", "flat", "tiny"}, "up-big"},
		{"criterion 0 behaves as higher", all, 0,
			[]string{"down", "up-small", "up-big", "control", "flat", "tiny"}, "up-big"},
		{"lower: the most negative lift wins", all, Lower,
			[]string{"down", "up-small", "up-big", "control", "flat", "tiny"}, "down"},
		{"lower with only positive lifts: FeatBit still crowns the largest", without("down"), Lower,
			[]string{"up-small", "up-big", "control", "flat", "tiny"}, "up-big"},
		{"higher with only a negative lift: no winner", []Group{all[0], all[2], all[1]}, Higher,
			[]string{"down", "control", "flat"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := FeatBit(Input{Groups: c.groups, Baseline: "control", Criterion: c.criterion})
			var order []string
			winner := ""
			for _, r := range rows {
				order = append(order, r.Variation)
				if r.IsWinner {
					if winner != "" {
						t.Errorf("two winners: %s and %s", winner, r.Variation)
					}
					winner = r.Variation
				}
			}
			if strings.Join(order, ",") != strings.Join(c.order, ",") {
				t.Errorf("order: got %v, want %v", order, c.order)
			}
			if winner != c.winner {
				t.Errorf("winner: got %q, want %q", winner, c.winner)
			}
		})
	}
}

// pointThree is 0.1+0.2 computed in float64 (Go constants are exact).
var pointThree = func(a, b float64) float64 { return a + b }(0.1, 0.2)

func TestFormat(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0.123456, "0.12346"},
		{1.0, "1"},
		{0.5, "0.5"},
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{-0.123456, "-0.12346"},
		{-2.5, "-2.5"},
		{0.12345, "0.12345"},     // fits: shortest digits kept
		{pointThree, "0.3"},      // 0.30000000000000004
		{12.3456789, "12.34568"}, // places after the point, not significant digits
		{123456.7, "123456.7"},   // no scientific notation
		{1e20, "100000000000000000000"},
		{0.000001, "0"},                 // rounds to zero, trimmed
		{-0.000001, "-0"},               // keeps its sign
		{0.000015, "0.00002"},           // binary value 1.5000000000000000384e-05 rounds up
		{0.015625, "0.01562"},           // exact binary tie: unbiased rounding to even
		{0.046875, "0.04688"},           // exact tie, even digit is up
		{0.1234549999999999, "0.12345"}, // rounds the value, not its shortest digits
		{10.234, "10.234"},              // numpy's own test value
		{math.NaN(), "nan"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
	}
	for _, c := range cases {
		if got := Format(c.v); got != c.want {
			t.Errorf("Format(%v): got %q, want %q", c.v, got, c.want)
		}
	}
}

func TestPyRepr(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0.05, "0.05"}, {124, "124.0"}, {1e-05, "1e-05"}, {0.0001, "0.0001"},
		{0.00012, "0.00012"}, {1.5e-7, "1.5e-07"}, {1e16, "1e+16"},
		{1234567890123456, "1234567890123456.0"}, {pointThree, "0.30000000000000004"},
		{0.3364616184428405, "0.3364616184428405"},
	}
	for _, c := range cases {
		if got := pyRepr(c.v); got != c.want {
			t.Errorf("pyRepr(%v): got %q, want %q", c.v, got, c.want)
		}
	}
}
