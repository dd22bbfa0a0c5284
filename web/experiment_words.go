package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/sql/stats"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/views"
)

// How an experiment's figures read on its page. The numbers are the
// store's (sql/stats computes them); these only put them into words.

// metricWords is what a page needs to know of an experiment's metric to
// word its results.
type metricWords struct {
	numeric  bool
	lower    bool // customEventSuccessCriteria Lower: less is better
	unit     string
	baseline string
	minUsers int64
}

// verdict says in one sentence what one variation's row shows against the
// baseline: the lift and its always-valid interval (which may be read at
// any time, so the sentence stays true however often the page is opened),
// and the chance to beat the baseline. It is a win or a loss only when
// the interval leaves out zero.
func verdict(name string, v, base experiments.VariationAnalysis, m metricWords) views.Verdict {
	if v.Lift == nil || v.SequentialInterval == nil {
		if v.Users < m.minUsers || base.Users < m.minUsers {
			return views.Verdict{Kind: "open", Text: fmt.Sprintf("%s against %s: too few users to compare yet (%d and %d; each needs %d).",
				name, m.baseline, v.Users, base.Users, m.minUsers)}
		}
		return views.Verdict{Kind: "open", Text: fmt.Sprintf("%s against %s: no difference can be measured yet, as neither varies.", name, m.baseline)}
	}
	lift, iv := *v.Lift, *v.SequentialInterval
	verb, more, less := "converts", "more", "less"
	if m.numeric {
		verb, more, less = "averages", "higher", "lower"
	} else if !m.lower {
		more, less = "better", "worse"
	}
	direction := more
	if lift < 0 {
		direction = less
	}
	text := fmt.Sprintf("%s %s %s %s than %s (%s to %s)", name, verb, percent(math.Abs(lift)), direction, m.baseline,
		signedPercent(iv[0]), signedPercent(iv[1]))
	if lift == 0 {
		text = fmt.Sprintf("%s %s the same as %s (%s to %s)", name, verb, m.baseline, signedPercent(iv[0]), signedPercent(iv[1]))
	}
	if v.ChanceToBeatBaseline != nil {
		text += ", " + chance(*v.ChanceToBeatBaseline) + " chance to beat it"
	}
	kind := "open"
	clear := iv[0] > 0 || iv[1] < 0
	if clear {
		good := (iv[0] > 0) != m.lower
		kind = "loss"
		if good {
			kind = "win"
		}
		return views.Verdict{Kind: kind, Text: text + "."}
	}
	return views.Verdict{Kind: kind, Text: "No clear difference yet: " + text + "."}
}

// percent writes a share as a percentage: one decimal under 10%, whole
// above, so small lifts do not read as 0%.
func percent(x float64) string {
	p := x * 100
	if math.Abs(p) < 10 {
		return trimZero(strconv.FormatFloat(p, 'f', 1, 64)) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

// signedPercent is percent with its sign, "+28%" or "−5%".
func signedPercent(x float64) string {
	s := percent(math.Abs(x))
	switch {
	case s == "0%":
		return s
	case x < 0:
		return "−" + s
	}
	return "+" + s
}

// chance writes a probability to a tenth of a percent, never rounding to
// a certainty the data cannot give.
func chance(p float64) string {
	r := math.Round(p*1000) / 10
	switch {
	case r >= 100:
		return "over 99.9%"
	case r <= 0:
		return "under 0.1%"
	}
	return trimZero(strconv.FormatFloat(r, 'f', 1, 64)) + "%"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// rate writes a variation's mean: a conversion rate as a percentage, an
// average with the metric's unit.
func rate(mean float64, m metricWords) string {
	if !m.numeric {
		s := strings.TrimRight(strconv.FormatFloat(mean*100, 'f', 2, 64), "0")
		return strings.TrimSuffix(s, ".") + "%"
	}
	s := stats.Format(mean)
	if m.unit != "" {
		s += " " + m.unit
	}
	return s
}

// interval writes an interval on the lift, "+28% to +73%".
func interval(iv *[2]float64) string {
	if iv == nil {
		return "—"
	}
	return signedPercent(iv[0]) + " to " + signedPercent(iv[1])
}

// srmWarning explains a sample ratio mismatch: the users per variation,
// how unlikely that split is under the flag's own, and what it means.
func srmWarning(an experiments.Analysis, x experiments.Experiment) string {
	if !an.SRM || an.SRMPValue == nil {
		return ""
	}
	var got []string
	for _, v := range an.Variations {
		got = append(got, fmt.Sprintf("%s %d", xVariation(v.VariationID, x), v.Users))
	}
	return fmt.Sprintf("Sample ratio mismatch: the variations have %s users, a split the flag's rollout would give by chance "+
		"with %s. Users are not reaching the experiment as the flag divides them (a filter on who reports, a redirect, "+
		"a cache), so these results cannot be trusted until the cause is found.", strings.Join(got, ", "), pText(*an.SRMPValue))
}

// pText writes a p-value readably: "p = 0.0003", "p < 0.0001".
func pText(p float64) string {
	if p < 0.0001 {
		return "p < 0.0001"
	}
	return "p = " + stats.Format(p)
}
