package web_test

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// TestBrowserHistoryInWords makes one change of each kind to a flag and a
// segment, then reads them in Chromium as sentences on the flag's history,
// the segment's history and the audit log, with the JSON one click away.
func TestBrowserHistoryInWords(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	beta := a.makeSegment(env, "Beta testers", "beta")
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	on, off := f.Variations[0].ID, f.Variations[1].ID
	change := func(edit func(*flagstore.FlagTargeting)) {
		t.Helper()
		tg := a.flag(env, "checkout").Targeting()
		edit(&tg)
		_, err := a.st.Flags().SetFlagTargeting(ctx, owner, env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
		must(t, err)
	}
	_, err := a.st.Flags().ToggleFlag(ctx, owner, env.ID, "checkout", true, flagstore.Change{})
	must(t, err)
	change(func(tg *flagstore.FlagTargeting) {
		tg.TargetUsers = []flagstore.TargetUser{{VariationID: on, KeyIDs: []string{"vip-3"}}}
	})
	change(func(tg *flagstore.FlagTargeting) {
		tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "EU beta pro", Variations: []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 1}}},
			Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`},
				{ID: "c2", Property: targeting.SegmentIn, Value: `["` + beta.ID.String() + `"]`}}}}
	})
	change(func(tg *flagstore.FlagTargeting) {
		tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 0.3}}, {ID: off, Rollout: []float64{0.3, 1}}}
	})
	change(func(tg *flagstore.FlagTargeting) {
		tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 0.5}}, {ID: off, Rollout: []float64{0.5, 1}}}
	})
	_, err = a.st.Flags().RenameFlag(ctx, owner, env.ID, "checkout", flagstore.FlagNameInput{Name: "New checkout"})
	must(t, err)
	_, err = a.st.Segments().SetSegmentTargeting(ctx, owner, env.ID, beta.ID, segments.SegmentTargetingInput{Included: &[]string{"alice"}})
	must(t, err)

	lines := func(path string) []string {
		t.Helper()
		ch.do(path, chromedp.Navigate(a.srv.URL+path), chromedp.WaitVisible(chromedp.CSS(`[data-testid=history]`)))
		return strings.Split(ch.eval(`[...document.querySelectorAll("[data-testid=history-line]")].map(e => e.textContent).join("\n")`), "\n")
	}
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	want := []string{
		"Renamed Checkout → New checkout",
		"Default rule: 30%/70% → 50%/50%",
		"Default rule: serve True → serve 30% True, 70% False by user key",
		"Added rule EU beta pro: if country is one of NL, DE and user is in segment Beta testers, serve True",
		"Added vip-3 to True",
		"Turned the flag on",
		"Created the flag Checkout",
	}
	if got := lines("/flags/checkout/history"); !slices.Equal(got, want) {
		t.Errorf("flag history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := lines(segmentPath(beta) + "/history"); !slices.Equal(got, []string{"Added alice to included users", "Created the segment Beta testers"}) {
		t.Errorf("segment history %q", got)
	}
	if got := lines("/audit-log"); len(got) != len(want)+2 || got[0] != "Added alice to included users" || got[1] != want[0] {
		t.Errorf("audit log %q", got)
	}
	// The JSON is one click away.
	ch.do("open the JSON", chromedp.Click(chromedp.CSS(`[data-testid=history-summary]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=history-diff]`)))
	if got := ch.eval(`document.querySelector("[data-testid=history-diff]").textContent`); !strings.Contains(got, "alice") {
		t.Errorf("the JSON diff %q", got)
	}
}
