package web_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserFineRollout: the default rule's rollout takes percentages to a
// hundredth. While typing, the total adds hundredths exactly and a third
// decimal is pointed out; saved, a third decimal is refused on its field by
// the variation's name, and 12.34/87.66 is saved as [0, 0.1234] and shown
// back in the summary as typed.
func TestBrowserFineRollout(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	on, off := f.Variations[0], f.Variations[1]
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("edit the default rule", chromedp.Navigate(a.srv.URL+"/flags/pay?edit=targeting&part=default"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=serve-default] [data-testid=serve-choice]`)))
	ch.choose(`[data-testid=serve-default] [data-testid=serve-choice]`, "rollout")
	ch.do("rollout shown", chromedp.WaitVisible(chromedp.CSS(`[data-testid=serve-default] [data-testid=rollout-percent]`)))
	pct := func(id string) string { return `[data-testid=serve-default] input[name="default.pct.` + id + `"]` }
	total := func() string {
		return ch.eval(`document.querySelector("[data-testid=serve-default] [data-rollout-total]").textContent`)
	}
	ch.fill(pct(on.ID), "12.345")
	ch.fill(pct(off.ID), "87.655")
	if got := total(); got != "Use percentages with at most two decimals, such as 12.34." {
		t.Errorf("three decimals while typing: %q", got)
	}
	ch.do("save three decimals", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=serve-default] [data-testid=serve-error]`)))
	if got, want := ch.eval(`document.querySelector("[data-testid=serve-default] [data-testid=serve-error]").textContent`), on.Name+": use at most two decimals, such as 12.34."; got != want {
		t.Errorf("three decimals saved: %q, want %q", got, want)
	}
	if got := ch.eval(`document.querySelector('` + pct(on.ID) + `').getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("the field with three decimals is not marked invalid (%q)", got)
	}
	if got := a.flag(env, "pay").Fallthrough.Variations; len(got) != 1 {
		t.Errorf("three decimals changed the flag: %+v", got)
	}

	ch.fill(pct(on.ID), "12.34")
	ch.fill(pct(off.ID), "87.66")
	if got := total(); got != "Total 100%" {
		t.Errorf("12.34 + 87.66 while typing: %q", got)
	}
	ch.do("save hundredths", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	saved := a.flag(env, "pay").Fallthrough.Variations
	if len(saved) != 2 || !slices.Equal(saved[0].Rollout, []float64{0, 0.1234}) || !slices.Equal(saved[1].Rollout, []float64{0.1234, 1}) {
		t.Fatalf("saved %+v", saved)
	}
	ch.do("the summary", chromedp.WaitVisible(chromedp.CSS(`[data-testid=summary-default]`)))
	if got, want := ch.eval(`document.querySelector("[data-testid=summary-default]").textContent.replace(/\s+/g, " ")`), "serve 12.34% "+on.Name+", 87.66% "+off.Name; !strings.Contains(got, want) {
		t.Errorf("the summary says %q, want it to say %q", got, want)
	}
}
