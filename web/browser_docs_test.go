package web_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserInsightsPicture draws the picture of the flag page's Insights
// tab that README.md shows, from the real page: a day of evaluations of a
// flag rolled out from 10% to 60% True, counted as the SDK endpoints count
// them. It checks the chart's totals; with BUNTING_DOCS_IMAGES naming a
// directory (web/docs) it also keeps the tab there as flag-insights.png.
func TestBrowserInsightsPicture(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "New checkout", Key: "new-checkout", IsEnabled: true})

	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	now := time.Now()
	total := 0
	for h := 23; h >= 0; h-- {
		// Traffic follows the day (more in the afternoon); the rollout
		// grows by a step every few hours.
		traffic := 120 + 90*((23-h)%12)/11 + 40*((23-h)/12)
		share := 10 + 10*((23-h)/4)
		on := traffic * share / 100
		served := make([]runner.Served, 0, traffic)
		for i := range traffic {
			v := 1
			if i < on {
				v = 0
			}
			served = append(served, runner.Served{Flag: &f, Variation: v})
		}
		tally.Served(served, now.Add(-time.Duration(h)*time.Hour))
		total += traffic
	}
	must(t, tally.Flush(t.Context()))

	ch.do("desktop", viewport(1000))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the flag's insights", chromedp.Navigate(a.srv.URL+"/flags/new-checkout/insights"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=evaluations-chart] svg`)))
	if got, want := ch.eval(`document.querySelector("#evaluations-chart-desc").textContent`), strconv.Itoa(total)+" evaluations"; len(got) < len(want) || got[:len(want)] != want {
		t.Fatalf("the chart says %q, want %d evaluations", got, total)
	}
	dir := os.Getenv("BUNTING_DOCS_IMAGES")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ch.ctx, chromedp.Screenshot(chromedp.CSS(`[data-testid=flag-evaluations]`)))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "flag-insights.png"), png, 0o644))
}
