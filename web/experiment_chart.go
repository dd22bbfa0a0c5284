package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/views"
)

// intervalLook is one variation at one moment of an iteration: its users,
// its rate or average, and, once both it and the baseline have enough
// users, its lift over the baseline with the always-valid interval.
type intervalLook struct {
	at       time.Time
	users    int64
	mean     float64
	lift     *float64
	interval *[2]float64
}

// drawIntervalChart draws one variation's lift over time: a band for the
// always-valid interval, a line for the estimate, a dashed line at zero.
// The interval may be read at any look, so watching it narrow is safe:
// where the band leaves zero behind, the difference is real at the
// experiment's level. It uses the evaluation chart's geometry and
// tooltips, so both charts read alike.
func drawIntervalChart(id, name string, series int, looks []intervalLook, m metricWords) views.IntervalChart {
	out := views.IntervalChart{ID: id, Variation: name, BaselineName: m.baseline,
		Title: fmt.Sprintf("%s against %s: the change and its always-valid interval", name, m.baseline),
		Width: chartWidth, Height: chartHeight, Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom,
		Class: "series-" + strconv.Itoa(series%chartSeriesClasses)}
	var shown []intervalLook
	for _, l := range looks {
		if l.lift != nil && l.interval != nil {
			shown = append(shown, l)
		}
	}
	if len(shown) == 0 {
		out.NotEnoughYet = fmt.Sprintf("No interval yet: it is drawn once %s and %s each have %d users.", name, m.baseline, m.minUsers)
		return out
	}
	lo, hi := 0.0, 0.0
	for _, l := range shown {
		lo, hi = math.Min(lo, l.interval[0]), math.Max(hi, l.interval[1])
	}
	step := niceStep((hi - lo) / 4)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if hi-lo < step {
		hi = lo + step
	}
	y := func(v float64) int {
		return chartBottom - int(math.Round(float64(chartBottom-chartTop)*(v-lo)/(hi-lo)))
	}
	first, last := shown[0].at, shown[len(shown)-1].at
	x := func(at time.Time) int {
		if !last.After(first) {
			return (chartLeft + chartRight) / 2
		}
		return chartLeft + int(math.Round(float64(chartRight-chartLeft)*float64(at.Sub(first))/float64(last.Sub(first))))
	}
	for v := lo; v <= hi+step/2; v += step {
		out.YLabels = append(out.YLabels, views.ChartLabel{X: chartLeft, Y: y(v), Text: signedPercent(v)})
	}
	out.ZeroY = y(0)
	layout := chartStepTimeHour
	if last.Sub(first) >= 48*time.Hour {
		layout = chartStepDay
	}
	stamp := func(at time.Time, layout, format string) views.ChartTime {
		return views.ChartTime{Text: at.UTC().Format(layout), At: at.UTC().Format(time.RFC3339), Format: format}
	}
	every := max(1, (len(shown)+chartXLabels-1)/chartXLabels)
	var upper, lower, line []string
	for i, l := range shown {
		px := x(l.at)
		if i%every == 0 {
			out.XLabels = append(out.XLabels, views.ChartLabel{X: px, Y: chartBottom, Time: stamp(l.at, layout, "time")})
		}
		upper = append(upper, fmt.Sprintf("%d,%d", px, y(l.interval[1])))
		lower = append([]string{fmt.Sprintf("%d,%d", px, y(l.interval[0]))}, lower...)
		line = append(line, fmt.Sprintf("%d,%d", px, y(*l.lift)))
		lines := []string{fmt.Sprintf("Users: %d", l.users), "Rate: " + rate(l.mean, m),
			"Change: " + signedPercent(*l.lift), "Interval: " + interval(l.interval)}
		if m.numeric {
			lines[1] = "Average: " + rate(l.mean, m)
		}
		out.Points = append(out.Points, views.IntervalPoint{X: px, Y: y(*l.lift), Tip: tip(px, stamp(l.at, chartTipTime, "datetime"), lines)})
		out.Rows = append(out.Rows, views.IntervalRow{When: stamp(l.at, chartRowMinute, "row"), Users: strconv.FormatInt(l.users, 10),
			Rate: rate(l.mean, m), Lift: signedPercent(*l.lift), Interval: interval(l.interval)})
	}
	if len(shown) == 1 {
		// One look: a band needs width, so the interval is drawn as a bar.
		px := x(shown[0].at)
		upper = []string{fmt.Sprintf("%d,%d", px-4, y(shown[0].interval[1])), fmt.Sprintf("%d,%d", px+4, y(shown[0].interval[1]))}
		lower = []string{fmt.Sprintf("%d,%d", px+4, y(shown[0].interval[0])), fmt.Sprintf("%d,%d", px-4, y(shown[0].interval[0]))}
	}
	out.Band = strings.Join(append(upper, lower...), " ")
	out.Line = strings.Join(line, " ")
	latest := shown[len(shown)-1]
	out.LatestInterval = fmt.Sprintf("Now: %s (%s), from %d looks since %s.", signedPercent(*latest.lift), interval(latest.interval),
		len(shown), first.UTC().Format(chartTipTime))
	out.Summary = fmt.Sprintf("The change of %s against %s went from %s (%s) to %s (%s).", name, m.baseline,
		signedPercent(*shown[0].lift), interval(shown[0].interval), signedPercent(*latest.lift), interval(latest.interval))
	return out
}

// niceStep is the smallest of 1, 2, 2.5, 5 × 10ⁿ at least s: round steps
// for a percentage axis.
func niceStep(s float64) float64 {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return 0.01
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}
