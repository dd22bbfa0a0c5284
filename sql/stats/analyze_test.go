package stats

import (
	"math"
	"sort"
	"testing"
)

func TestSRM(t *testing.T) {
	// Closed forms of the chi-square survival function: df 1 is
	// erfc(√(x/2)), df 2 is e^{−x/2}.
	df1 := func(x float64) float64 { return math.Erfc(math.Sqrt(x / 2)) }
	df2 := func(x float64) float64 { return math.Exp(-x / 2) }
	cases := []struct {
		name    string
		groups  []Group
		weights map[string]float64
		want    float64
		srm     bool
	}{
		{"equal split, small imbalance", []Group{{Variation: "a", N: 5000}, {Variation: "b", N: 5200}}, nil,
			df1(2 * 100 * 100 / 5100.0), false},
		{"equal split, mismatch", []Group{{Variation: "a", N: 5000}, {Variation: "b", N: 5400}}, nil,
			df1(2 * 200 * 200 / 5200.0), true},
		{"three variations", []Group{{Variation: "a", N: 1000}, {Variation: "b", N: 1100}, {Variation: "c", N: 900}}, nil,
			df2((0 + 100*100 + 100*100) / 1000.0), true},
		{"weighted 1:3", []Group{{Variation: "a", N: 260}, {Variation: "b", N: 740}}, map[string]float64{"a": 1, "b": 3},
			df1(10*10/250.0 + 10*10/750.0), false},
		{"weighted, exact", []Group{{Variation: "a", N: 200}, {Variation: "b", N: 800}}, map[string]float64{"a": 0.2, "b": 0.8},
			1, false},
		{"a variation expecting no traffic is left out", []Group{{Variation: "a", N: 5000}, {Variation: "b", N: 5200}, {Variation: "off"}},
			map[string]float64{"a": 1, "b": 1}, df1(2 * 100 * 100 / 5100.0), false},
		{"traffic where none is expected", []Group{{Variation: "a", N: 5000}, {Variation: "b", N: 5000}, {Variation: "off", N: 3}},
			map[string]float64{"a": 1, "b": 1}, 0, true},
		{"no users", []Group{{Variation: "a"}, {Variation: "b"}}, nil, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Analyze(Input{Groups: c.groups, Baseline: "a", Weights: c.weights})
			near(t, "SRM p", a.SRMPValue, c.want, 1e-10)
			if a.SRM != c.srm {
				t.Errorf("SRM: got %v, want %v", a.SRM, c.srm)
			}
		})
	}
}

// refLift is the relative lift of t over c by the delta method with unbiased
// variances, as the package documentation states it, on reference
// distributions.
type refLiftResult struct {
	lift, se, df, p float64
}

func refLift(nc, sc, ssc, nt, st, sst float64) refLiftResult {
	mc, mt := sc/nc, st/nt
	vc := (ssc - nc*mc*mc) / (nc - 1)
	vt := (sst - nt*mt*mt) / (nt - 1)
	lift := mt/mc - 1
	se := math.Sqrt(vt/nt/(mc*mc) + vc/nc*mt*mt/(mc*mc*mc*mc))
	df := math.Pow(vt/nt+vc/nc, 2) / (math.Pow(vt/nt, 2)/(nt-1) + math.Pow(vc/nc, 2)/(nc-1))
	return refLiftResult{lift, se, df, 2 * refTCDF(-math.Abs(lift/se), df)}
}

// refCSHalfWidth is the two-sided normal-mixture boundary of Howard et al.
// (2021) for a sum with intrinsic time V = nσ² and mixture variance ρ_H,
// √((V+ρ_H)·ln((V+ρ_H)/(ρ_H α²))), divided by n to bound the mean. GrowthBook
// and Waudby-Smith et al. write ρ_H = σ²/ρ² with ρ² = (−2lnα + ln(1−2lnα))/S.
func refCSHalfWidth(se, n, alpha, tuneAlpha, planned float64) float64 {
	sigma2 := se * se * n
	rho2 := (-2*math.Log(tuneAlpha) + math.Log(1-2*math.Log(tuneAlpha))) / planned
	rhoH := sigma2 / rho2
	v := n * sigma2
	return math.Sqrt((v+rhoH)*math.Log((v+rhoH)/(rhoH*alpha*alpha))) / n
}

func TestAnalyzeLift(t *testing.T) {
	for _, c := range []struct {
		name      string
		numeric   bool
		control   Group
		treatment Group
		criterion Criterion
		planned   int64
	}{
		{"conversion, higher", false, bin("c", 10000, 1000), bin("t", 9800, 1100), Higher, 0},
		{"conversion, lower", false, bin("c", 10000, 1000), bin("t", 9800, 1100), Lower, 50000},
		{"numeric", true, Group{Variation: "c", N: 500, Sum: 5000, SumSquares: 500*100 + 499*9},
			Group{Variation: "t", N: 450, Sum: 4680, SumSquares: 450*10.4*10.4 + 449*16}, Higher, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Analyze(Input{Groups: []Group{c.control, c.treatment}, Baseline: "c",
				Numeric: c.numeric, Criterion: c.criterion, PlannedUsers: c.planned})
			if len(a.Variations) != 2 || a.Variations[0].Variation != "c" || !a.Variations[0].IsBaseline {
				t.Fatalf("rows: got %+v, want c (baseline) then t", a.Variations)
			}
			if b := a.Variations[0]; b.Lift != nil || b.PValue != nil || b.SequentialInterval != nil {
				t.Errorf("baseline must have no lift: %+v", b)
			}
			v := a.Variations[1]
			if v.Lift == nil {
				t.Fatal("lift not set")
			}
			want := refLift(float64(c.control.N), c.control.Sum, c.control.SumSquares,
				float64(c.treatment.N), c.treatment.Sum, c.treatment.SumSquares)
			near(t, "lift", *v.Lift, want.lift, 1e-12)
			near(t, "p", *v.PValue, want.p, 1e-8)
			near(t, "adjusted p (one variation)", *v.AdjustedPValue, want.p, 1e-8)
			half := refTQuantile(0.975, want.df) * want.se
			near(t, "interval low", v.Interval[0], want.lift-half, 1e-8)
			near(t, "interval high", v.Interval[1], want.lift+half, 1e-8)

			planned := float64(c.planned)
			if planned == 0 {
				planned = 5000
			}
			n := float64(c.control.N + c.treatment.N)
			seq := refCSHalfWidth(want.se, n, 0.05, 0.05, planned)
			near(t, "sequential low", v.SequentialInterval[0], want.lift-seq, 1e-10)
			near(t, "sequential high", v.SequentialInterval[1], want.lift+seq, 1e-10)
			if seq <= half {
				t.Errorf("the always-valid interval (±%v) must be wider than the fixed one (±%v)", seq, half)
			}
			// The always-valid p-value is the level at which the boundary
			// just reaches zero.
			near(t, "boundary at α = sequential p", refCSHalfWidth(want.se, n, *v.SequentialPValue, 0.05, planned),
				math.Abs(want.lift), 1e-9)

			beat := refNormCDF(want.lift / want.se)
			if c.criterion == Lower {
				beat = 1 - beat
			}
			near(t, "chance to beat", *v.ChanceToBeatBaseline, beat, 1e-12)
		})
	}
}

func TestAnalyzeHolm(t *testing.T) {
	groups := []Group{
		bin("c", 10000, 1000),
		bin("small", 10000, 1020),
		bin("big", 10000, 1100),
		bin("few", 20, 2), // counts as a hypothesis, has no p-value
		bin("mid", 10000, 1060),
	}
	a := Analyze(Input{Groups: groups, Baseline: "c", PlannedUsers: 20000})
	const m = 4
	near(t, "sequential alpha", a.SequentialAlpha, 0.05/m, 1e-15)

	type hp struct {
		name string
		p    float64
	}
	var ps []hp
	for _, g := range groups[1:] {
		if g.N < 30 {
			continue
		}
		r := refLift(10000, 1000, 1000, float64(g.N), g.Sum, g.Sum)
		ps = append(ps, hp{g.Variation, r.p})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].p < ps[j].p })
	want := map[string]float64{}
	run := 0.0
	for k, x := range ps { // Holm: (m−k)·p₍ₖ₎, monotone, capped at 1
		run = math.Max(run, math.Min(1, float64(m-k)*x.p))
		want[x.name] = run
	}
	for _, v := range a.Variations {
		switch {
		case v.IsBaseline || v.Variation == "few":
			if v.AdjustedPValue != nil || v.SequentialInterval != nil {
				t.Errorf("%s: must have no adjusted p or interval", v.Variation)
			}
		default:
			near(t, v.Variation+" adjusted p", *v.AdjustedPValue, want[v.Variation], 1e-8)
			if *v.AdjustedPValue < *v.PValue {
				t.Errorf("%s: adjusted p %v below raw %v", v.Variation, *v.AdjustedPValue, *v.PValue)
			}
			g := groups[map[string]int{"small": 1, "big": 2, "mid": 4}[v.Variation]]
			r := refLift(10000, 1000, 1000, float64(g.N), g.Sum, g.Sum)
			seq := refCSHalfWidth(r.se, 10000+float64(g.N), 0.05/m, 0.05/m, 20000)
			near(t, v.Variation+" sequential half-width", (v.SequentialInterval[1]-v.SequentialInterval[0])/2, seq, 1e-9)
			// Excluding 0 at level α/m is the same event as the
			// always-valid p-value falling below α/m.
			excl := v.SequentialInterval[0] > 0 || v.SequentialInterval[1] < 0
			if excl != (*v.SequentialPValue < 0.05/m) {
				t.Errorf("%s: interval excludes 0 = %v but sequential p = %v", v.Variation, excl, *v.SequentialPValue)
			}
		}
	}
	// Holm on the always-valid p-values, by hand.
	var sp []hp
	for _, v := range a.Variations {
		if v.SequentialPValue != nil {
			sp = append(sp, hp{v.Variation, *v.SequentialPValue})
		}
	}
	sort.Slice(sp, func(i, j int) bool { return sp[i].p < sp[j].p })
	run = 0
	for k, x := range sp {
		run = math.Max(run, math.Min(1, float64(m-k)*x.p))
		for _, v := range a.Variations {
			if v.Variation == x.name {
				near(t, x.name+" adjusted sequential p", *v.AdjustedSequentialPValue, run, 1e-12)
			}
		}
	}
}

func TestAnalyzeWithoutLift(t *testing.T) {
	cases := []struct {
		name   string
		groups []Group
	}{
		{"treatment below 30 users", []Group{bin("c", 1000, 100), bin("t", 29, 5)}},
		{"control below 30 users", []Group{bin("c", 29, 5), bin("t", 1000, 100)}},
		{"control mean zero", []Group{bin("c", 1000, 0), bin("t", 1000, 100)}},
		{"no variance at all", []Group{bin("c", 1000, 1000), bin("t", 1000, 1000)}},
		{"baseline missing", []Group{bin("x", 1000, 100), bin("t", 1000, 100)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range Analyze(Input{Groups: c.groups, Baseline: "c"}).Variations {
				if v.Lift != nil || v.Interval != nil || v.SequentialInterval != nil || v.PValue != nil ||
					v.AdjustedPValue != nil || v.SequentialPValue != nil || v.ChanceToBeatBaseline != nil {
					t.Errorf("%s: got inference %+v, want none", v.Variation, v)
				}
			}
		})
	}
}
