package web

import (
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/experiments"
)

func f(v float64) *float64 { return &v }

func TestVerdictWords(t *testing.T) {
	conv := metricWords{baseline: "False", minUsers: 30}
	base := experiments.VariationAnalysis{VariationID: "f", Users: 1000, IsBaseline: true}
	cases := []struct {
		name string
		v    experiments.VariationAnalysis
		m    metricWords
		want string
		kind string
	}{
		{"a clear win", experiments.VariationAnalysis{Users: 1000, Lift: f(0.5), SequentialInterval: &[2]float64{0.28, 0.73}, ChanceToBeatBaseline: f(0.9991)}, conv,
			"True converts 50% better than False (+28% to +73%), 99.9% chance to beat it.", "win"},
		{"a clear loss", experiments.VariationAnalysis{Users: 1000, Lift: f(-0.2), SequentialInterval: &[2]float64{-0.31, -0.094}, ChanceToBeatBaseline: f(0.00001)}, conv,
			"True converts 20% worse than False (−31% to −9.4%), under 0.1% chance to beat it.", "loss"},
		{"not yet clear", experiments.VariationAnalysis{Users: 1000, Lift: f(0.034), SequentialInterval: &[2]float64{-0.05, 0.11}, ChanceToBeatBaseline: f(0.74)}, conv,
			"No clear difference yet: True converts 3.4% better than False (−5% to +11%), 74% chance to beat it.", "open"},
		{"lower is better", experiments.VariationAnalysis{Users: 1000, Lift: f(-0.25), SequentialInterval: &[2]float64{-0.4, -0.1}, ChanceToBeatBaseline: f(0.995)},
			metricWords{baseline: "False", minUsers: 30, lower: true}, "True converts 25% less than False (−40% to −10%), 99.5% chance to beat it.", "win"},
		{"numeric", experiments.VariationAnalysis{Users: 1000, Lift: f(0.12), SequentialInterval: &[2]float64{0.03, 0.21}, ChanceToBeatBaseline: f(0.98)},
			metricWords{baseline: "False", minUsers: 30, numeric: true}, "True averages 12% higher than False (+3% to +21%), 98% chance to beat it.", "win"},
		{"too few", experiments.VariationAnalysis{Users: 12}, conv, "True against False: too few users to compare yet (12 and 1000; each needs 30).", "open"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := verdict("True", c.v, base, c.m)
			if got.Text != c.want || got.Kind != c.kind {
				t.Errorf("got %q (%s), want %q (%s)", got.Text, got.Kind, c.want, c.kind)
			}
		})
	}
}

func TestIntervalChartDrawsTheBandAroundTheLine(t *testing.T) {
	start := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	looks := []intervalLook{
		{at: start, users: 10},
		{at: start.Add(time.Hour), users: 100, mean: 0.15, lift: f(0.5), interval: &[2]float64{-0.1, 1.1}},
		{at: start.Add(2 * time.Hour), users: 400, mean: 0.15, lift: f(0.5), interval: &[2]float64{0.2, 0.8}},
	}
	c := drawIntervalChart("c", "True", 0, looks, metricWords{baseline: "False", minUsers: 30})
	if c.NotEnoughYet != "" || len(c.Points) != 2 || len(c.Rows) != 2 {
		t.Fatalf("got %d points, %d rows, %q; want the two looks with an interval", len(c.Points), len(c.Rows), c.NotEnoughYet)
	}
	// The axis spans −20% to +120% (rounded to its step), so zero sits
	// between the first interval's ends and the second lies above it.
	if !(c.Points[0].Y < c.ZeroY && c.ZeroY < chartBottom && c.ZeroY > chartTop) {
		t.Errorf("got zero at %d and the first point at %d; want zero inside the plot, below the point", c.ZeroY, c.Points[0].Y)
	}
	if got := len(strings.Fields(c.Band)); got != 4 {
		t.Errorf("got a band of %d points, want 4 (two looks, upper and lower)", got)
	}
	if c.Points[0].X != chartLeft || c.Points[1].X != chartRight {
		t.Errorf("got points at x %d and %d, want the plot's edges %d and %d", c.Points[0].X, c.Points[1].X, chartLeft, chartRight)
	}
	if want := "Now: +50% (+20% to +80%), from 2 looks since Dec 7, 11:00 UTC."; c.LatestInterval != want {
		t.Errorf("got %q, want %q", c.LatestInterval, want)
	}
	empty := drawIntervalChart("c", "True", 0, looks[:1], metricWords{baseline: "False", minUsers: 30})
	if empty.NotEnoughYet == "" {
		t.Error("got a chart from a look without an interval, want the note that it needs users")
	}
}
