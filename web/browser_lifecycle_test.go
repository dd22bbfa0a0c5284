package web_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserFlagLifecycle: the flag list shows each flag's lifecycle stage
// (new, rolling out, launched, unused) and which are ready to remove; its
// stage filter and its "Ready to remove" view keep those flags, with
// script (htmx swaps the list, the address follows) and from the address
// alone; the flag's page says its stage and what it means. With BUNTING_DOCS_IMAGES naming a
// directory (web/docs) it keeps the ready view there as flag-lifecycle.png.
func TestBrowserFlagLifecycle(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx := t.Context()
	a.makeFlag(env, flagstore.FlagInput{Name: "New banner", Key: "new-banner"})
	split := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout v2", Key: "checkout-v2", IsEnabled: true})
	dark := a.makeFlag(env, flagstore.FlagInput{Name: "Dark mode", Key: "dark-mode", IsEnabled: true})
	legacy := a.makeFlag(env, flagstore.FlagInput{Name: "Legacy search", Key: "legacy-search", IsEnabled: true})
	a.makeFlag(env, flagstore.FlagInput{Name: "Winter promo", Key: "winter-promo"})
	tg := split.Targeting()
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: split.Variations[0].ID, Rollout: []float64{0, .1234}, ExptRollout: 1},
		{ID: split.Variations[1].ID, Rollout: []float64{.1234, 1}, ExptRollout: 1}}
	_, err := a.st.Flags().SetFlagTargeting(ctx, a.ownerActor(), env.ID, "checkout-v2", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	_, err = a.st.Flags().ArchiveFlag(ctx, a.ownerActor(), env.ID, "winter-promo", flagstore.Change{})
	must(t, err)
	// Dark mode has served one variation for ten days; legacy search was
	// made two months ago and last evaluated 45 days ago.
	_, err = a.pool.Exec(ctx, `UPDATE feature_flags SET created_at = now() - interval '40 days', updated_at = now() - interval '10 days' WHERE key = 'dark-mode';
		UPDATE flag_revisions SET created_at = now() - interval '10 days' WHERE flag_id = (SELECT id FROM feature_flags WHERE key = 'dark-mode');
		UPDATE feature_flags SET created_at = now() - interval '60 days', updated_at = now() - interval '60 days' WHERE key = 'legacy-search';
		UPDATE flag_revisions SET created_at = now() - interval '60 days' WHERE flag_id = (SELECT id FROM feature_flags WHERE key = 'legacy-search')`)
	must(t, err)
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	now := time.Now()
	tally.Served([]runner.Served{{Flag: &split, Variation: 0}, {Flag: &split, Variation: 1}, {Flag: &dark, Variation: 0}}, now)
	tally.Served([]runner.Served{{Flag: &legacy, Variation: 0}}, now.Add(-45*24*time.Hour))
	must(t, tally.Flush(ctx))

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	stages := func() string {
		return ch.eval(`[...document.querySelectorAll("[data-testid=flag-row]")].map(r => r.dataset.key + ":" +
			((r.querySelector("[data-testid=flag-stage]") || {}).dataset || {}).stage +
			(r.querySelector("[data-testid=flag-ready]") ? "+ready" : "")).sort().join(" ")`)
	}
	ch.do("the list", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-stage]`)))
	if got, want := stages(), "checkout-v2:rolling-out dark-mode:launched+ready legacy-search:unused+ready new-banner:new"; got != want {
		t.Errorf("the list's stages %q, want %q", got, want)
	}

	// The stage filter swaps the list and the address follows.
	ch.choose(`[data-testid=flag-stage-filter]`, "launched")
	ch.waitTrue("the address says the stage", `location.search.includes("stage=launched")`)
	ch.waitTrue("only launched flags", `document.querySelectorAll("[data-testid=flag-row]").length === 1`)
	if got := stages(); got != "dark-mode:launched+ready" {
		t.Errorf("launched: %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=flag-list-stage-note]").textContent`); !strings.HasPrefix(got, "Launched: has served one variation") {
		t.Errorf("the launched note %q", got)
	}

	// The ready view, from its tab: launched, unused, and archived flags
	// no SDK has evaluated since.
	ch.do("ready to remove", chromedp.Click(chromedp.CSS(`[data-testid=flags-ready]`)))
	ch.waitTrue("the address says ready", `location.search.includes("stage=ready")`)
	ch.waitTrue("the ready view", `document.querySelectorAll("[data-testid=flag-row]").length === 3`)
	if got, want := stages(), "dark-mode:launched+ready legacy-search:unused+ready winter-promo:undefined+ready"; got != want {
		t.Errorf("ready to remove: %q, want %q", got, want)
	}
	if got := ch.eval(`document.querySelector("[data-testid=flags-ready]").getAttribute("aria-current")`); got != "page" {
		t.Errorf("the ready tab's aria-current %q", got)
	}
	dir := os.Getenv("BUNTING_DOCS_IMAGES")
	if dir != "" {
		ch.do("wide", viewport(1280))
		png, err := chromedp.Run(ch.ctx, chromedp.Screenshot(chromedp.CSS(`main`)))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "flag-lifecycle.png"), png, 0o644))
	}

	// From the address alone, as without script.
	ch.do("unused", chromedp.Navigate(a.srv.URL+"/flags?stage=unused"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
	if got := stages(); got != "legacy-search:unused+ready" {
		t.Errorf("unused: %q", got)
	}

	// The flag's page says its stage and what it means.
	ch.do("dark mode's page", chromedp.Navigate(a.srv.URL+"/flags/dark-mode"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-stage]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-stage]").textContent`); got != "Launched: Has served one variation to everyone, unchanged, for 7 days or more." {
		t.Errorf("dark mode's page says %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=flag-stage]").title`); !strings.HasPrefix(got, "Has served one variation") {
		t.Errorf("dark mode's stage badge's title %q", got)
	}
	if got := ch.eval(`String(!!document.querySelector("[data-testid=flag-ready]"))`); got != "true" {
		t.Errorf("dark mode's page does not say it is ready to remove")
	}
}
