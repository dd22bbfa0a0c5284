package web_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// TestBrowserInsightsPicture draws the picture of the flag page's Insights
// tab that README.md shows, from the real page: a day of evaluations of a
// flag rolled out from 10% to 60% True in five changes (its history entries
// moved back to when the rollout grew), the day before a little quieter,
// counted as the SDK endpoints count them, one step focused to show its
// tooltip. It checks the chart's totals; with BUNTING_DOCS_IMAGES naming a
// directory (web/docs) it also keeps the tab there as flag-insights.png.
func TestBrowserInsightsPicture(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx := t.Context()
	f := a.makeFlag(env, flagstore.FlagInput{Name: "New checkout", Key: "new-checkout", IsEnabled: true})
	// backdate moves the flag's latest recorded change to ago, as if made then.
	backdate := func(ago time.Duration) {
		_, err := a.pool.Exec(ctx, `UPDATE audit_logs SET created_at = now() - $2::interval
			WHERE id = (SELECT id FROM audit_logs WHERE ref_id = $1 ORDER BY created_at DESC LIMIT 1)`, f.ID.String(), fmt.Sprintf("%d seconds", int(ago.Seconds())))
		must(t, err)
	}
	backdate(72 * time.Hour)
	// The rollout grows by ten points every four hours, each step a change.
	for h := 19; h >= 3; h -= 4 {
		share := 10 + 10*((23-h)/4)
		tg := a.flag(env, "new-checkout").Targeting()
		bp := share * 100
		tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: targeting.RolloutRange(0, bp), ExptRollout: 1},
			{ID: f.Variations[1].ID, Rollout: targeting.RolloutRange(bp, targeting.WholeRollout-bp), ExptRollout: 1}}
		_, err := a.st.Flags().SetFlagTargeting(ctx, a.ownerActor(), env.ID, "new-checkout", flagstore.TargetingInput{Targeting: &tg,
			Change: flagstore.Change{Comment: fmt.Sprintf("rollout to %d%%", share)}})
		must(t, err)
		backdate(time.Duration(h) * time.Hour)
	}

	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	now := time.Now()
	total := 0
	serve := func(traffic, on int, at time.Time) {
		served := make([]runner.Served, 0, traffic)
		for i := range traffic {
			v := 1
			if i < on {
				v = 0
			}
			served = append(served, runner.Served{Flag: &f, Variation: v})
		}
		tally.Served(served, at)
	}
	for h := 23; h >= 0; h-- {
		// Traffic follows the day (more in the afternoon); the rollout
		// grows by a step every few hours. The day before had a little less.
		traffic := 120 + 90*((23-h)%12)/11 + 40*((23-h)/12)
		share := 10 + 10*((23-h)/4)
		serve(traffic, traffic*share/100, now.Add(-time.Duration(h)*time.Hour))
		serve(traffic*85/100, traffic*85/1000, now.Add(-time.Duration(h+24)*time.Hour))
		total += traffic
	}
	must(t, tally.Flush(ctx))

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
	// A step focused from the keyboard shows its tooltip in the picture.
	ch.do("focus a step", chromedp.Focus(chromedp.CSS(`[data-testid=evaluations-bucket]:nth-of-type(17)`)))
	png, err := chromedp.Run(ch.ctx, chromedp.Screenshot(chromedp.CSS(`[data-testid=flag-evaluations]`)))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "flag-insights.png"), png, 0o644))
}
