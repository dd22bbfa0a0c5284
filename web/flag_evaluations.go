package web

import (
	"fmt"
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
	chart, err := p.store.SDK().FlagEvaluationChart(c.Request().Context(), actor(c), w.id, f.Key, span, time.Now())
	if err != nil {
		return views.EvaluationsTab{}, err
	}
	var t views.EvaluationsTab
	for _, s := range evaluationSpans {
		t.Spans = append(t.Spans, views.Tab{Label: s.label, Href: href + "/insights?span=" + s.span, TestID: "span-" + s.span, Active: s.span == span})
	}
	changes, err := p.chartChanges(c, w, f, chart)
	if err != nil {
		return views.EvaluationsTab{}, err
	}
	t.Chart = drawChart(chart, spanWords[span], changes)
	t.Chart.HistoryHref = href + "/history"
	return t, nil
}

// spanWords name each span's chart, its steps and the span before it.
var spanWords = map[string]chartWords{
	sdkdata.SpanHour:  {title: "last hour, by minute", previous: "previous hour", local: true},
	sdkdata.SpanDay:   {title: "last day, by hour", previous: "previous day", local: true},
	sdkdata.SpanMonth: {title: "last 30 days, by day", previous: "previous 30 days"},
}

// chartWords is how a chart names its span. local is whether its steps
// are shown in the viewer's time zone: hours and minutes are, while days
// stay the UTC days they were counted in, which a zone would shift.
type chartWords struct {
	title, previous string
	local           bool
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
	chartTipDay                 = "Jan 2, 2006"
	chartTipTime                = "Jan 2, 15:04 UTC"
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

// flagTrends are the sparklines of a list's flags evaluated in the last day.
func (p *pages) flagTrends(c echo.Context, w workEnv, ids []uuid.UUID) (map[uuid.UUID]*views.Sparkline, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	trends, err := p.store.SDK().FlagEvaluationTrends(c.Request().Context(), actor(c), w.id, ids, time.Now())
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
