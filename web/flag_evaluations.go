package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/views"
)

// tabInsights is a flag's evaluations over time.
const tabInsights = "insights"

// flagInsights shows a flag's Insights tab: ?span=hour, day (the default)
// or month.
func (p *pages) flagInsights(c echo.Context) error { return p.flagPage(c, tabInsights, flagState{}) }

// evaluationSpans are the Insights tab's periods, in their order.
var evaluationSpans = []struct{ span, label string }{
	{sdkdata.SpanHour, "Last hour"}, {sdkdata.SpanDay, "Last day"}, {sdkdata.SpanMonth, "Last 30 days"},
}

// evaluationsTab charts a flag's evaluations over the span the address asks for.
func (p *pages) evaluationsTab(c echo.Context, w workEnv, f flagstore.Flag, href string) (views.EvaluationsTab, error) {
	span := c.QueryParam("span")
	known := false
	for _, s := range evaluationSpans {
		known = known || s.span == span
	}
	if !known {
		span = sdkdata.SpanDay
	}
	chart, err := p.store.FlagEvaluationChart(c.Request().Context(), actor(c), w.id, f.Key, span, time.Now())
	if err != nil {
		return views.EvaluationsTab{}, err
	}
	var t views.EvaluationsTab
	for _, s := range evaluationSpans {
		t.Spans = append(t.Spans, views.Tab{Label: s.label, Href: href + "/insights?span=" + s.span, TestID: "span-" + s.span, Active: s.span == span})
	}
	label := map[string]string{sdkdata.SpanHour: "last hour, by minute", sdkdata.SpanDay: "last day, by hour", sdkdata.SpanMonth: "last 30 days, by day"}[span]
	t.Chart = drawChart(chart, "Evaluations per variation, "+label+" (UTC)")
	return t, nil
}

// Chart geometry, in SVG units.
const (
	chartWidth, chartHeight     = 640, 220
	chartLeft, chartRight       = 52, 628
	chartTop, chartBottom       = 12, 190
	sparkWidth, sparkHeight     = 72, 18
	chartXLabels                = 6
	chartSeriesClasses          = 6
	sparkPad                    = 2
	chartStepTimeHour           = "15:04"
	chartStepDay                = "Jan 2"
	chartRowMinute, chartRowDay = "2006-01-02 15:04", "2006-01-02"
)

// niceCeiling is the smallest of 1, 2, 5 × 10ⁿ at least n, so the axis's
// labels are round.
func niceCeiling(n int64) int64 {
	if n <= 1 {
		return 1
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// drawChart lays a chart out as an SVG's lines and labels, and a table.
func drawChart(ch sdkdata.EvaluationChart, title string) views.EvaluationChart {
	out := views.EvaluationChart{Title: title, Width: chartWidth, Height: chartHeight,
		Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom, Total: ch.Total}
	n := len(ch.Steps)
	var most int64
	for _, v := range ch.Variations {
		for _, c := range v.Counts {
			most = max(most, c)
		}
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
	stepLabel, rowLabel := chartStepTimeHour, chartRowMinute
	if ch.Step >= 24*time.Hour {
		stepLabel, rowLabel = chartStepDay, chartRowDay
	}
	for i := 0; i < n; i += max(1, (n+chartXLabels-1)/chartXLabels) {
		out.XLabels = append(out.XLabels, views.ChartLabel{X: x(i), Y: chartBottom, Text: ch.Steps[i].Format(stepLabel)})
	}
	var summary []string
	for i, v := range ch.Variations {
		var pts strings.Builder
		for j, c := range v.Counts {
			if j > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%d,%d", x(j), y(c))
		}
		out.Lines = append(out.Lines, views.ChartLine{Name: v.Name, Class: "series-" + strconv.Itoa(i%chartSeriesClasses),
			Points: pts.String(), Total: v.Total})
		out.Columns = append(out.Columns, v.Name)
		out.Totals = append(out.Totals, v.Total)
		summary = append(summary, fmt.Sprintf("%s %d", v.Name, v.Total))
	}
	out.Summary = fmt.Sprintf("%d evaluations", ch.Total)
	if len(summary) > 0 {
		out.Summary += ": " + strings.Join(summary, ", ")
	}
	for j, at := range ch.Steps {
		row := views.ChartRow{When: at.Format(rowLabel), Counts: make([]int64, len(ch.Variations))}
		for i, v := range ch.Variations {
			row.Counts[i] = v.Counts[j]
			row.Total += v.Counts[j]
		}
		if row.Total > 0 {
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// flagTrends are the sparklines of a list's flags evaluated in the last day.
func (p *pages) flagTrends(c echo.Context, w workEnv, ids []uuid.UUID) (map[uuid.UUID]*views.Sparkline, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	trends, err := p.store.FlagEvaluationTrends(c.Request().Context(), actor(c), w.id, ids, time.Now())
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*views.Sparkline, len(trends))
	for id, hours := range trends {
		out[id] = sparkline(hours)
	}
	return out, nil
}

// sparkline draws a day's hourly evaluations as a small line.
func sparkline(hours []int64) *views.Sparkline {
	var most, total int64
	for _, h := range hours {
		most, total = max(most, h), total+h
	}
	if total == 0 {
		return nil
	}
	var pts strings.Builder
	for i, h := range hours {
		if i > 0 {
			pts.WriteByte(' ')
		}
		x := sparkPad + (sparkWidth-2*sparkPad)*i/max(1, len(hours)-1)
		y := sparkHeight - sparkPad - int(int64(sparkHeight-2*sparkPad)*h/most)
		fmt.Fprintf(&pts, "%d,%d", x, y)
	}
	word := "evaluations"
	if total == 1 {
		word = "evaluation"
	}
	return &views.Sparkline{Points: pts.String(), Width: sparkWidth, Height: sparkHeight,
		Label: fmt.Sprintf("%d %s in the last %d hours", total, word, len(hours))}
}
