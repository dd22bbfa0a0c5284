package web_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserEvaluationsChart: the evaluations SDK endpoints counted (the
// tally OFREP answers feed, written as the process writes it) are charted
// on the flag's Insights tab, its table holding exactly those numbers per
// variation for the last day and the last hour, and the flag list shows a
// trend beside "last evaluated".
func TestBrowserEvaluationsChart(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	a.makeFlag(env, flagstore.FlagInput{Name: "Dark mode", Key: "dark-mode"})
	on, off := f.Variations[0], f.Variations[1]
	index := map[string]int{on.ID: 0, off.ID: 1}

	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	served := func(v flagstore.Variation, n int, at time.Time) {
		list := make([]runner.Served, n)
		for i := range list {
			list[i] = runner.Served{Flag: &f, Variation: index[v.ID]}
		}
		tally.Served(list, at)
	}
	now := time.Now()
	served(on, 5, now)
	served(off, 2, now)
	served(on, 3, now.Add(-2*time.Hour)) // in the last day, not the last hour
	must(t, tally.Flush(t.Context()))

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the flag's insights", chromedp.Navigate(a.srv.URL+"/flags/checkout"),
		chromedp.Click(chromedp.CSS(`[data-testid=tab-insights]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=evaluations-chart] svg`)))
	total := func() string {
		return ch.eval(`[...document.querySelectorAll("[data-testid=evaluations-total] > *")].map(c => c.textContent.trim()).join(" ")`)
	}
	header := ch.eval(`[...document.querySelectorAll("[data-testid=evaluations-table] thead th")].map(c => c.textContent.trim()).join(" ")`)
	if want := "Time (UTC) " + on.Name + " " + off.Name + " Total"; header != want {
		t.Fatalf("the table's columns %q, want %q", header, want)
	}
	if got := total(); got != "Total 8 2 10" {
		t.Errorf("the last day's totals %q, want Total 8 2 10", got)
	}
	if rows := ch.eval(`String(document.querySelectorAll("[data-testid=evaluations-row]").length)`); rows != "2" {
		t.Errorf("%s rows for the last day, want 2 (two hours with evaluations)", rows)
	}
	ch.do("show the numbers", chromedp.Click(chromedp.CSS(`.chart-table summary`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=evaluations-table]`)))

	ch.do("the last hour", chromedp.Click(chromedp.CSS(`[data-testid=span-hour]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=span-hour][aria-current=page]`)))
	if got := total(); got != "Total 5 2 7" {
		t.Errorf("the last hour's totals %q, want Total 5 2 7", got)
	}
	if got := ch.eval(`document.querySelector("#evaluations-chart-desc").textContent`); got != "7 evaluations: "+on.Name+" 5, "+off.Name+" 2; none in the previous hour." {
		t.Errorf("the chart's description %q", got)
	}

	// Neither page scrolls sideways on a phone.
	for _, width := range []int64{1280, 390} {
		ch.shootAt(a.srv.URL, "/flags/checkout/insights", "flag-insights", width, `[data-testid=evaluations-chart] svg`)
		ch.shootAt(a.srv.URL, "/flags", "flag-list-trend", width, `[data-testid=flag-trend]`)
	}
	ch.do("desktop again", viewport(1280))

	ch.do("the list", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-trend]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-trend]").getAttribute("aria-label")`); got != "10 evaluations in the last 24 hours" {
		t.Errorf("the trend says %q", got)
	}
	if n := ch.eval(`String(document.querySelectorAll("[data-testid=flag-trend]").length)`); n != "1" {
		t.Errorf("%s trends, want 1 (dark-mode was never evaluated)", n)
	}
}
