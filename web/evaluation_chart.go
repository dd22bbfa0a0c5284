package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/views"
)

// Tooltip geometry, in SVG units: a line's height, a character's width
// (an estimate, as the server cannot measure text) and the box's padding.
const (
	tipLine, tipChar, tipPad = 15, 7.0, 8
	// markerWhatLen is how much of a change's description a marker's
	// tooltip shows; the list under the chart has it whole.
	markerWhatLen = 60
)

// chartChange is one of the flag's recorded changes within a chart's span.
type chartChange struct {
	at             time.Time
	what, who, why string
}

// chartChanges reads the flag's changes recorded within the chart's span,
// from its history, oldest first: one page, as a span holds few.
func (p *pages) chartChanges(c echo.Context, w workEnv, f flagstore.Flag, ch sdkdata.EvaluationChart) ([]chartChange, error) {
	if len(ch.Steps) == 0 {
		return nil, nil
	}
	from := ch.Steps[0]
	to := from.Add(ch.Length())
	logs, err := p.store.Flags().ListAuditLogs(c.Request().Context(), actor(c), w.id, flagstore.AuditFilter{RefType: refFlag,
		RefID: f.ID.String(), From: &from, To: &to, Page: core.Page{Size: core.MaxPageSize}})
	if err != nil {
		return nil, err
	}
	noNames := func(string) (string, bool) { return "", false }
	out := make([]chartChange, 0, len(logs.Items))
	for i := len(logs.Items) - 1; i >= 0; i-- {
		e := logs.Items[i]
		what := operationWords(e.Operation)
		if lines := describe.Change(e.RefType, e.DataChange.Previous, e.DataChange.Current, noNames); len(lines) > 0 {
			what = lines[0]
			if len(lines) > 1 {
				what += fmt.Sprintf(" (and %d more)", len(lines)-1)
			}
		}
		out = append(out, chartChange{at: e.CreatedAt, what: what, who: e.CreatorName, why: e.Comment})
	}
	return out, nil
}

// drawChart lays a chart out as an SVG's lines, labels, hover and focus
// targets and change markers, and a table.
func drawChart(ch sdkdata.EvaluationChart, words chartWords, changes []chartChange) views.EvaluationChart {
	zone := "UTC"
	if !words.local {
		zone = "UTC days"
	}
	out := views.EvaluationChart{Title: "Evaluations per variation, " + words.title, Zone: zone, Local: words.local,
		Width: chartWidth, Height: chartHeight, Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom,
		Total: ch.Total, PreviousLabel: capitalize(words.previous), PreviousTotal: ch.PreviousTotal,
		Comparison: comparison(ch.Total, ch.PreviousTotal, words.previous)}
	n := len(ch.Steps)
	// All variations together, to set against the span before.
	totals := make([]int64, n)
	for _, v := range ch.Variations {
		for j, c := range v.Counts {
			totals[j] += c
		}
	}
	var most int64
	for _, c := range totals {
		most = max(most, c)
	}
	for _, c := range ch.Previous {
		most = max(most, c)
	}
	top := niceCeiling(most)
	x := func(i int) int {
		if n < 2 {
			return chartLeft
		}
		return chartLeft + (chartRight-chartLeft)*i/(n-1)
	}
	y := func(v int64) int { return chartBottom - int(int64(chartBottom-chartTop)*v/top) }
	for _, v := range []int64{0, top / 2, top} {
		if v == top/2 && top%2 != 0 {
			continue
		}
		out.YLabels = append(out.YLabels, views.ChartLabel{X: chartLeft, Y: y(v), Text: strconv.FormatInt(v, 10)})
	}
	stepLabel, rowLabel, tipLabel, format := chartStepTimeHour, chartRowMinute, chartTipTime, "time"
	if ch.Step >= 24*time.Hour {
		stepLabel, rowLabel, tipLabel, format = chartStepDay, chartRowDay, chartTipDay, ""
	}
	stamp := func(at time.Time, layout, format string) views.ChartTime {
		t := views.ChartTime{Text: at.Format(layout)}
		if words.local {
			t.At, t.Format = at.UTC().Format(time.RFC3339), format
		}
		return t
	}
	for i := 0; i < n; i += max(1, (n+chartXLabels-1)/chartXLabels) {
		out.XLabels = append(out.XLabels, views.ChartLabel{X: x(i), Y: chartBottom, Text: ch.Steps[i].Format(stepLabel),
			Time: stamp(ch.Steps[i], stepLabel, format)})
	}
	var summary []string
	for i, v := range ch.Variations {
		out.Lines = append(out.Lines, views.ChartLine{Name: v.Name, Class: "series-" + strconv.Itoa(i%chartSeriesClasses),
			Points: points(v.Counts, x, y), Total: v.Total})
		out.Columns = append(out.Columns, v.Name)
		out.Totals = append(out.Totals, v.Total)
		summary = append(summary, fmt.Sprintf("%s %d", v.Name, v.Total))
	}
	if ch.PreviousTotal > 0 {
		out.PreviousPoints = points(ch.Previous, x, y)
		if len(ch.Variations) > 1 {
			out.TotalPoints = points(totals, x, y)
		}
	}
	out.Summary = fmt.Sprintf("%d evaluations", ch.Total)
	if len(summary) > 0 {
		out.Summary += ": " + strings.Join(summary, ", ")
	}
	out.Summary += "; " + out.Comparison + "."
	half := (chartRight - chartLeft) / max(1, 2*(n-1))
	for j, at := range ch.Steps {
		row := views.ChartRow{When: stamp(at, rowLabel, "row"), Counts: make([]int64, len(ch.Variations))}
		lines := []string{}
		for i, v := range ch.Variations {
			row.Counts[i] = v.Counts[j]
			row.Total += v.Counts[j]
			lines = append(lines, fmt.Sprintf("%s: %d", v.Name, v.Counts[j]))
		}
		lines = append(lines, fmt.Sprintf("Total: %d", row.Total), fmt.Sprintf("%s: %d", capitalize(words.previous), ch.Previous[j]))
		left, right := max(chartLeft, x(j)-half), min(chartRight, x(j)+half)
		out.Buckets = append(out.Buckets, views.ChartBucket{ID: "bucket-" + strconv.Itoa(j), X: left, Width: max(1, right-left),
			Focusable: row.Total > 0 || ch.Previous[j] > 0, Tip: tip(x(j), stamp(at, tipLabel, "datetime"), lines)})
		if row.Total > 0 {
			out.Rows = append(out.Rows, row)
		}
	}
	out.Markers = markers(ch, changes, stamp)
	return out
}

// points writes counts as an SVG polyline's "x,y x,y …".
func points(counts []int64, x func(int) int, y func(int64) int) string {
	var b strings.Builder
	for j, c := range counts {
		if j > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d,%d", x(j), y(c))
	}
	return b.String()
}

// markers places the flag's changes on the time axis, where in its step
// each was made.
func markers(ch sdkdata.EvaluationChart, changes []chartChange, stamp func(time.Time, string, string) views.ChartTime) []views.ChartMarker {
	var out []views.ChartMarker
	if len(ch.Steps) == 0 {
		return nil
	}
	first, length := ch.Steps[0], ch.Length()
	for i, c := range changes {
		// The last step's points sit at the plot's right edge, so the
		// axis runs from the first step's start to the last one's.
		offset := float64(c.at.Sub(first)) / float64(length-ch.Step)
		x := chartLeft + int(float64(chartRight-chartLeft)*min(1, max(0, offset)))
		lines := []string{shorten(c.what, markerWhatLen), "By " + c.who}
		if c.why != "" {
			lines = append(lines, shorten("“"+c.why+"”", markerWhatLen))
		}
		out = append(out, views.ChartMarker{ID: "change-" + strconv.Itoa(i), X: x, What: c.what, Who: c.who, Why: c.why,
			When: stamp(c.at, chartTipTime, "datetime"), Tip: tip(x, stamp(c.at, chartTipTime, "datetime"), lines)})
	}
	return out
}

// tip lays out a tooltip beside x: its time, then its lines; it opens to
// the left in the plot's right half so it stays inside the chart.
func tip(x int, at views.ChartTime, lines []string) views.ChartTip {
	longest := len([]rune(at.Text))
	for _, l := range lines {
		longest = max(longest, len([]rune(l)))
	}
	width := int(float64(longest)*tipChar) + 2*tipPad
	t := views.ChartTip{Time: at, Lines: lines, Width: width, Height: (len(lines)+1)*tipLine + tipPad, Y: chartTop}
	if x > (chartLeft+chartRight)/2 {
		t.X = max(0, x-width-6)
	} else {
		t.X = min(chartWidth-width, x+6)
	}
	return t
}

// comparison says how a span's evaluations compare with the span before.
func comparison(now, before int64, previous string) string {
	switch {
	case before == 0 && now == 0:
		return "none in the " + previous + " either"
	case before == 0:
		return "none in the " + previous
	case now == before:
		return "the same as the " + previous
	}
	pct := float64(now-before) * 100 / float64(before)
	sign := "+"
	if pct < 0 {
		sign = "−"
		pct = -pct
	}
	return fmt.Sprintf("%s%s%% vs the %s (%d)", sign, strconv.FormatFloat(roundTo(pct), 'f', -1, 64), previous, before)
}

// roundTo rounds a percentage to a whole number, or to a tenth below 10.
func roundTo(pct float64) float64 {
	if pct < 10 {
		return float64(int(pct*10+0.5)) / 10
	}
	return float64(int(pct + 0.5))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shorten cuts text to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
