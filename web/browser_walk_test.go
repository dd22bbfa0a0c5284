package web_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// What a walk through the admin application as a new user found, each
// tried again here in Chromium as that user met it.

// evaluate has SDKs report evaluating a flag now, so the list shows when
// and draws its day's trend.
func (a *app) evaluate(f flagstore.Flag, times int) {
	a.t.Helper()
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	served := make([]runner.Served, times)
	for i := range served {
		served[i] = runner.Served{Flag: &f, Variation: i % 2}
	}
	tally.Served(served, time.Now())
	must(a.t, tally.Flush(a.t.Context()))
}

// TestBrowserListToggleWithComments turns a flag on from its row where
// comments are required, by keyboard: the row drawn again still says when
// the flag was last evaluated and keeps its trend; the pop-up closes with
// the keyboard back on the switch (so a second Enter opens it rather than
// turning the flag back); and the switch's name holds the text it shows
// (axe's label-content-name-mismatch), before and after.
func TestBrowserListToggleWithComments(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, pr, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.evaluate(f, 3)
	a.requireComments(pr, env)

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	row := `[data-testid=flag-row][data-key=checkout]`
	ch.do("flags", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=flag-trend]`)))
	evaluated := func() string {
		return ch.eval(`document.querySelector("` + row + ` [data-testid=flag-last-evaluated]").textContent`)
	}
	if got := evaluated(); got == "Evaluated never" {
		t.Fatalf("before the toggle the row says %q", got)
	}
	name := func() string {
		return ch.eval(`(function(s){ return s.getAttribute("aria-label") || s.textContent.replace(/\s+/g, " ").trim() })(document.querySelector("` + row + ` [data-testid=flag-toggle]"))`)
	}
	if got := name(); got != "Off, turn on" {
		t.Errorf("the switch is named %q, want %q (what it shows, then what it does)", got, "Off, turn on")
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe with comments required: %s", strings.Join(found, "; "))
	}

	k := &keyboard{ch: ch}
	toggle := `#flag-toggle-` + f.ID.String()
	ch.do("focus the switch", chromedp.Focus(chromedp.CSS(toggle)))
	k.press(kb.Enter)
	ch.do("the pop-up", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	k.tabTo(row + ` [data-testid=comment]`)
	k.typeText("Launch")
	k.press(kb.Enter)
	ch.do("turned on", chromedp.WaitVisible(chromedp.CSS(row+` summary.switch-on`)))
	ch.waitFocus("turned on", toggle)
	if !a.flag(env, "checkout").IsEnabled {
		t.Fatalf("the flag is not on")
	}
	if got := ch.eval(`String(document.querySelector("` + row + ` [data-testid=flag-toggle-pop]").open)`); got != "false" {
		t.Errorf("the pop-up is still open after the toggle")
	}
	if got := evaluated(); got == "Evaluated never" || !strings.HasPrefix(got, "Evaluated ") {
		t.Errorf("after the toggle the row says %q, want when it was last evaluated", got)
	}
	if got := ch.eval(`String(document.querySelectorAll("` + row + ` [data-testid=flag-trend]").length)`); got != "1" {
		t.Errorf("after the toggle the row has %s trends, want 1", got)
	}
	if got := name(); got != "On, turn off" {
		t.Errorf("after the toggle the switch is named %q, want %q", got, "On, turn off")
	}
	ch.waitAnnounced("turned on", "“Checkout” turned on.")
	// A second Enter opens the pop-up again; the flag stays on.
	k.press(kb.Enter)
	ch.do("the pop-up again", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	ch.settled()
	if !a.flag(env, "checkout").IsEnabled {
		t.Errorf("a second Enter turned the flag off")
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe after the toggle: %s", strings.Join(found, "; "))
	}
}
