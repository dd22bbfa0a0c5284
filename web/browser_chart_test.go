package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdpinput "github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserChartDetails: on the Insights tab, in a browser set to
// Asia/Kolkata (UTC+5:30), each step of the chart tells its exact counts
// per variation when the mouse is over it and when the keyboard reaches
// it; the flag's own change is a marker on the time axis saying what
// changed; times show in the viewer's zone; and the day before is drawn
// dashed and compared in words.
func TestBrowserChartDetails(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	_, err := a.st.Flags().ToggleFlag(t.Context(), a.ownerActor(), env.ID, "checkout", true, flagstore.Change{Comment: "launch day"})
	must(t, err)
	on, off := f.Variations[0], f.Variations[1]
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	served := func(variation, n int, at time.Time) {
		list := make([]runner.Served, n)
		for i := range list {
			list[i] = runner.Served{Flag: &f, Variation: variation}
		}
		tally.Served(list, at)
	}
	now := time.Now().UTC()
	served(0, 5, now)
	served(1, 2, now)
	served(0, 4, now.Add(-25*time.Hour)) // the day before, an hour earlier in its day
	must(t, tally.Flush(t.Context()))
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	must(t, err)

	ch.do("desktop in Kolkata", viewport(1280), chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"})
		return err
	}))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the insights", chromedp.Navigate(a.srv.URL+"/flags/checkout/insights"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=evaluations-chart] svg`)))

	if got := ch.eval(`document.querySelector("[data-testid=evaluations-comparison]").textContent.trim()`); got != "7 evaluations, +75% vs the previous day (4)." {
		t.Errorf("the comparison says %q", got)
	}
	if got := ch.eval(`String(!!document.querySelector("[data-testid=evaluations-previous]"))`); got != "true" {
		t.Errorf("no dashed line of the previous day")
	}
	// Chromium resolves the zone under its older name.
	zone := ch.eval(`document.querySelector("[data-testid=evaluations-zone] [data-local-zone]").textContent`)
	if zone != "Asia/Kolkata" && zone != "Asia/Calcutta" {
		t.Errorf("the zone label says %q, want Asia/Kolkata", zone)
	}

	// The keyboard stops at the steps with evaluations, now or the day
	// before, and each shows its tooltip with exact counts.
	k := &keyboard{ch: ch}
	ch.do("focus the period links", chromedp.Focus(chromedp.CSS(`[data-testid=span-month]`)))
	k.tabTo(`[data-testid=evaluations-bucket]`)
	// tipOf is the tooltip of the element the script el finds: its text
	// (which names the element, by aria-labelledby) and whether it shows.
	tipOf := func(el string) (text string, visible bool) {
		text = ch.eval(`(` + el + `).querySelector(".tip").textContent.replace(/\s+/g, " ").trim()`)
		return text, ch.eval(`getComputedStyle((`+el+`).querySelector(".tip")).visibility`) == "visible"
	}
	const focused, lastStep = `document.activeElement`, `[...document.querySelectorAll("[data-testid=evaluations-bucket]")].pop()`
	hour := now.Truncate(time.Hour)
	stamp := func(at time.Time) string { return at.In(kolkata).Format("15:04") }
	text, visible := tipOf(focused)
	if !visible || !strings.Contains(text, stamp(hour.Add(-time.Hour))) || !strings.Contains(text, "Total: 0") || !strings.Contains(text, "Previous day: 4") {
		t.Errorf("the first focused step (visible %v) says %q; want %s local, Total: 0 and Previous day: 4", visible, text, stamp(hour.Add(-time.Hour)))
	}
	k.press("\t")
	text, visible = tipOf(focused)
	if want := fmt.Sprintf("%s: 5 %s: 2 Total: 7", on.Name, off.Name); !visible || !strings.Contains(text, want) || !strings.Contains(text, stamp(hour)) {
		t.Errorf("the last step focused (visible %v) says %q; want %q at %s", visible, text, want, stamp(hour))
	}
	// The arrows reach the empty steps too, with script.
	k.press(kb.ArrowLeft)
	k.press(kb.ArrowLeft)
	text, visible = tipOf(focused)
	if !visible || !strings.Contains(text, "Total: 0") || !strings.Contains(text, "Previous day: 0") || !strings.Contains(text, stamp(hour.Add(-2*time.Hour))) {
		t.Errorf("two steps left of the last (visible %v) says %q; want an empty step at %s", visible, text, stamp(hour.Add(-2*time.Hour)))
	}
	k.press(kb.End)
	if text, _ = tipOf(focused); !strings.Contains(text, "Total: 7") {
		t.Errorf("End reached %q, want the last step", text)
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=evaluations-bucket][tabindex='0']").length)`); got != "2" {
		t.Errorf("%s steps in the Tab order, want the 2 with evaluations", got)
	}

	// The flag's changes are markers on the axis, reachable by keyboard,
	// and listed under the chart.
	k.tabTo(`[data-testid=evaluations-marker]`)
	text, visible = tipOf(focused)
	if !visible || !strings.Contains(text, "By ") {
		t.Errorf("a focused marker (visible %v) says %q", visible, text)
	}
	changes := ch.eval(`[...document.querySelectorAll("[data-testid=evaluations-change]")].map(li => li.textContent.replace(/\s+/g, " ").trim()).join(" | ")`)
	if !strings.Contains(changes, "launch day") || strings.Count(changes, "|") != 1 {
		t.Errorf("the changes listed: %q; want the creation and the toggle with its comment", changes)
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=evaluations-marker]").length)`); got != "2" {
		t.Errorf("%s markers, want 2", got)
	}

	// The mouse over a step shows its tooltip too.
	ch.eval(`document.activeElement.blur(), ""`)
	var x, y float64
	fmt.Sscan(ch.eval(`(function(){ var b = [...document.querySelectorAll("[data-testid=evaluations-bucket] .hit")].pop().getBoundingClientRect();
		return (b.x + b.width/2) + " " + (b.y + b.height/2); })()`), &x, &y)
	ch.do("hover", chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, x, y))
	text, visible = tipOf(lastStep)
	hovered := ch.eval(`String(document.querySelector("[data-testid=evaluations-bucket]:hover") === [...document.querySelectorAll("[data-testid=evaluations-bucket]")].pop())`)
	if hovered != "true" || !visible || !strings.Contains(text, "Total: 7") {
		t.Errorf("the hovered step (hovered %s, visible %v) says %q", hovered, visible, text)
	}

	// The table's times are local too.
	ch.do("show the numbers", chromedp.Click(chromedp.CSS(`.chart-table summary`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=evaluations-table]`)))
	if got := ch.eval(`document.querySelector("[data-testid=evaluations-table] thead th").textContent.replace(/\s+/g, "")`); got != "Time("+zone+")" {
		t.Errorf("the table's time column %q", got)
	}
	rows := ch.eval(`[...document.querySelectorAll("[data-testid=evaluations-row] th")].map(th => th.textContent.trim()).join(" | ")`)
	// Kolkata is half an hour off UTC's hours, so no row may read ":00".
	if !strings.Contains(rows, stamp(hour)) || strings.Contains(rows, ":00") {
		t.Errorf("the table's rows %q; want %s (local) for %s UTC", rows, stamp(hour), hour.Format("15:04"))
	}
}
