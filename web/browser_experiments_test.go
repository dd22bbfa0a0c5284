package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserExperiment drives an experiment in Chromium as a person
// would: create a metric on the Metrics page, an experiment on a flag's
// Experimentation tab, Start it (htmx), then, once SDKs have reported
// twelve hours of users (6,000 a variation, converting at 10% and 15%),
// read the results: the verdict in words, with the always-valid interval
// computed in the test, FeatBit's winner, and the interval over time. With
// BUNTING_DOCS_IMAGES naming a directory (web/docs) it keeps the results as
// experiment-results.png, the picture README.md shows.
func TestBrowserExperiment(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, _, env := flagApp(t)
	ctx := t.Context()
	f := a.makeFlag(env, flagstore.FlagInput{Name: "New checkout", Key: "new-checkout", IsEnabled: true})

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the metrics", chromedp.Navigate(a.srv.URL+"/experiment-metrics"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=metric-create] summary`)),
		chromedp.Click(chromedp.CSS(`[data-testid=metric-create] summary`)), chromedp.WaitVisible(chromedp.CSS(`#metric-name`)))
	ch.fill(`#metric-name`, "Checkout")
	ch.fill(`#metric-eventName`, "checkout")
	ch.do("create the metric", chromedp.Click(chromedp.CSS(`[data-testid=metric-submit]`)))
	ch.waitPath(`^/experiment-metrics/[0-9a-f-]{36}$`)

	ch.do("open the flag's experimentation tab", chromedp.Navigate(a.srv.URL+"/flags/new-checkout/experiments"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=experiment-create-form]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-experiments-empty]").textContent`); got != "No experiments on this flag yet." {
		t.Errorf("the empty tab says %q", got)
	}
	ch.do("create the experiment", chromedp.Click(chromedp.CSS(`[data-testid=experiment-create-submit]`)))
	ch.waitPath(`^/experiments/[0-9a-f-]{36}$`)
	id := uuid.MustParse(strings.TrimPrefix(ch.eval(`location.pathname`), "/experiments/"))
	ch.do("start it", chromedp.WaitVisible(chromedp.CSS(`[data-testid=experiment-start]`)), chromedp.Click(chromedp.CSS(`[data-testid=experiment-start]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=experiment-stop]`)))
	ch.settled()
	if got := ch.eval(`document.querySelector("[data-testid=experiment-state]").textContent.trim()`); got != "Recording" {
		t.Fatalf("after Start the page says %q, want Recording", got)
	}

	// Twelve hours of users: the iteration is moved back to when they came.
	start := time.Now().Add(-12 * time.Hour)
	_, err := a.pool.Exec(ctx, `UPDATE experiment_iterations SET start_time = $2 WHERE experiment_id = $1`, id, start)
	must(t, err)
	trueID, falseID := f.Variations[0].ID, f.Variations[1].ID
	if f.Variations[0].Name != "True" {
		trueID, falseID = falseID, trueID
	}
	for h := range 12 {
		at := start.Add(time.Duration(h)*time.Hour + 30*time.Minute)
		var ev experiments.Events
		for i := range 500 {
			for _, v := range []struct {
				id, prefix string
				converted  int
			}{{falseID, "f", 50}, {trueID, "t", 75}} {
				key := fmt.Sprintf("%s-%d-%d", v.prefix, h, i)
				ev.Exposures = append(ev.Exposures, experiments.Exposure{FlagKey: "new-checkout", UserKey: key, VariationID: v.id, At: at})
				if i < v.converted {
					ev.Conversions = append(ev.Conversions, experiments.Conversion{EventName: "checkout", EventType: experiments.EventCustom,
						UserKey: key, Value: 1, At: at.Add(time.Minute)})
				}
			}
		}
		must(t, a.st.Experiments().RecordEvents(ctx, env.ID, ev))
		// The store keeps the sums as they stand at most once a minute (a
		// snapshot), here all in one minute: the sums after each hour are
		// kept as that hour's snapshot, as the store would have kept them.
		_, err := a.pool.Exec(ctx, `INSERT INTO experiment_snapshots (iteration_id, at, totals)
			SELECT i.id, $2, jsonb_agg(jsonb_build_object('v', t.variation_id, 'n', t.users, 'c', t.converted, 's', t.total, 'q', t.total_squares))
			FROM experiment_iterations i JOIN experiment_variation_totals t ON t.iteration_id = i.id
			WHERE i.experiment_id = $1 GROUP BY i.id ON CONFLICT (iteration_id, at) DO NOTHING`, id, at.Add(30*time.Minute))
		must(t, err)
	}
	_, err = a.pool.Exec(ctx, `DELETE FROM experiment_snapshots WHERE at > now() - interval '5 minutes'`)
	must(t, err)

	ch.do("read the results", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=experiment-verdict]`)))
	lift, lo, hi := sequentialInterval(6000, 600, 6000, 900, 0.05)
	want := fmt.Sprintf("True converts %.0f%% better than False (+%.0f%% to +%.0f%%), over 99.9%% chance to beat it.", lift*100, lo*100, hi*100)
	if got := ch.eval(`document.querySelector("[data-testid=experiment-verdict]").textContent`); got != want {
		t.Errorf("got verdict %q, want %q", got, want)
	}
	if got := ch.eval(`document.querySelector("[data-variation=True] [data-testid=result-featbit]").textContent.trim()`); got != "Winner" {
		t.Errorf("FeatBit's verdict on True is %q, want Winner", got)
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=interval-chart] [data-testid=interval-point]").length)`); got != "12" {
		t.Errorf("the interval chart has %s looks, want 12 (one an hour, the last now)", got)
	}
	// A look focused from the keyboard shows its figures.
	ch.do("focus a look", chromedp.Focus(chromedp.CSS(`[data-testid=interval-point]:nth-of-type(6)`)))
	if got := ch.eval(`getComputedStyle(document.querySelector("[data-testid=interval-point]:focus .tip")).visibility`); got != "visible" {
		t.Errorf("a focused look's tooltip is %s", got)
	}
	if got := ch.eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); got != "false" {
		t.Error("the results page scrolls sideways at 1280 px")
	}
	dir := os.Getenv("BUNTING_DOCS_IMAGES")
	if dir == "" {
		return
	}
	// Tall enough for no scroll bar, which would cut the picture's edge.
	ch.do("fit the page", chromedp.EmulateViewport(1280, 1700))
	ch.do("focus a look", chromedp.Focus(chromedp.CSS(`[data-testid=interval-point]:nth-of-type(6)`)))
	png, err := chromedp.Run(ch.ctx, chromedp.Screenshot(chromedp.CSS(`#experiment-main`)))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "experiment-results.png"), png, 0o644))
}
