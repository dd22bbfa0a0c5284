package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// axeSerious runs axe-core on the page as it is now (a dialog or a menu
// open) and returns its serious and critical findings.
func (ch *chrome) axeSerious() []string {
	ch.t.Helper()
	script, err := json.Marshal(axeScript)
	must(ch.t, err)
	ch.eval(`(function(){ if (!window.axe) { (0, eval)(` + string(script) + `) }; return "ready" })()`)
	result := ch.eval(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.id + " (" + v.help + ") at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))))`)
	var found []string
	must(ch.t, json.Unmarshal([]byte(result), &found))
	return found
}

// shotNow keeps a screenshot of the viewport as it is (a dialog or a menu
// open) in $BUNTING_SCREENSHOTS, when set.
func (ch *chrome) shotNow(name string) {
	ch.t.Helper()
	dir := os.Getenv("BUNTING_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ch.ctx, chromedp.CaptureScreenshot())
	must(ch.t, err)
	must(ch.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// waitTrue polls a script until it answers "true".
func (ch *chrome) waitTrue(step, js string) {
	ch.t.Helper()
	for range 100 {
		if ch.eval(`String(Boolean(`+js+`))`) == "true" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ch.t.Fatalf("%s: %s never held", step, js)
}

// The navigation in Chromium: headed groups with the right links under
// each and the current page marked; Ctrl+K opens the search dialog with
// focus in its input, typing finds a flag, the arrows move through the
// results, Escape closes and gives focus back, Enter opens the flag; the
// Search button opens it too and finds pages. On a phone the content
// starts at the top, Menu opens the navigation, and every flag tab is on
// screen. axe finds nothing serious with the dialog or the menu open.
func TestBrowserNavigation(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Dark mode", Key: "dark-mode"})
	a.makeSegment(env, "Beta testers", "beta")

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("flags", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-list]`)))

	groups := ch.eval(`[...document.querySelectorAll("#sidebar h2")].map(h => h.textContent + ": " +
		[...document.querySelectorAll("#sidebar ul[aria-labelledby='" + h.id + "'] a")].map(a => a.textContent).join(", ")).join(" | ")`)
	if want := "Daily work: Feature flags, Segments, End users, Audit log | " +
		"Administration: Projects, Access tokens, Members, Groups, Policies, Organization, Webhooks, Relay proxies, Workspace | " +
		"Account and help: Profile, API reference"; groups != want {
		t.Errorf("the navigation's groups:\n%s\nwant\n%s", groups, want)
	}
	if got := ch.eval(`[...document.querySelectorAll("#sidebar [aria-current=page]")].map(a => a.textContent).join()`); got != "Feature flags" {
		t.Errorf("the current page is marked on %q, want Feature flags", got)
	}

	// Ctrl+K from a link of the navigation.
	ch.do("open with Ctrl+K", chromedp.Focus(chromedp.CSS(`[data-testid=nav-segments]`)),
		chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.WaitVisible(chromedp.CSS(`#search-dialog-q`)))
	if got := ch.eval(`document.activeElement.id`); got != "search-dialog-q" {
		t.Errorf("focus is on %q after Ctrl+K, want the search input", got)
	}
	ch.do("type a flag's name", chromedp.SendKeys(chromedp.CSS(`#search-dialog-q`), "Check"),
		chromedp.WaitVisible(chromedp.CSS(`#search-results [data-q=Check] [data-testid=search-hit-flag]`)))
	if got := ch.eval(`[...document.querySelectorAll("#search-results [data-testid=search-hit-flag]")].map(a => a.getAttribute("href")).join()`); got != "/flags/checkout" {
		t.Errorf("the dialog lists %q for Check, want /flags/checkout", got)
	}
	if got := ch.eval(`document.getElementById("search-status").textContent`); got != "1 result." {
		t.Errorf("the status says %q", got)
	}
	ch.shotNow("search-dialog-1280")
	if problems := ch.axeSerious(); len(problems) > 0 {
		t.Errorf("axe with the search dialog open: %v", problems)
	}
	ch.do("arrow down", chromedp.KeyEvent(kb.ArrowDown))
	if got := ch.eval(`document.activeElement.getAttribute("href")`); got != "/flags/checkout" {
		t.Errorf("ArrowDown moved focus to %q, want the first result", got)
	}
	ch.do("arrow up", chromedp.KeyEvent(kb.ArrowUp))
	if got := ch.eval(`document.activeElement.id`); got != "search-dialog-q" {
		t.Errorf("ArrowUp moved focus to %q, want the input", got)
	}
	ch.do("escape", chromedp.KeyEvent(kb.Escape))
	ch.waitTrue("closed", `!document.getElementById("search-dialog").open`)
	if got := ch.eval(`document.activeElement.dataset.testid || ""`); got != "nav-segments" {
		t.Errorf("focus went back to %q, want the link it came from", got)
	}

	// The Search button finds pages by name.
	ch.do("search button", chromedp.Click(chromedp.CSS(`[data-testid=search-open]`)), chromedp.WaitVisible(chromedp.CSS(`#search-dialog-q`)))
	ch.do("type a page", chromedp.SendKeys(chromedp.CSS(`#search-dialog-q`), "webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`#search-results [data-q=webhooks] [data-testid=search-hit-page]`)))
	if got := ch.eval(`document.querySelector("#search-results [data-testid=search-hit-page]").getAttribute("href")`); got != "/webhooks" {
		t.Errorf("webhooks leads to %q", got)
	}
	ch.do("close", chromedp.Click(chromedp.CSS(`[data-testid=search-close]`)))
	ch.waitTrue("closed", `!document.getElementById("search-dialog").open`)
	if got := ch.eval(`document.activeElement.dataset.testid || ""`); got != "search-open" {
		t.Errorf("focus went back to %q, want the Search button", got)
	}

	// Enter opens the first result.
	ch.do("open again", chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(chromedp.CSS(`#search-dialog-q`)))
	if got := ch.value(`#search-dialog-q`); got != "webhooks" {
		t.Logf("the input kept %q", got) // either is fine; it is selected
	}
	ch.do("type the key", chromedp.Clear(chromedp.CSS(`#search-dialog-q`)), chromedp.SendKeys(chromedp.CSS(`#search-dialog-q`), "checkout"),
		chromedp.WaitVisible(chromedp.CSS(`#search-results [data-q=checkout] [data-testid=search-hit-flag]`)),
		chromedp.KeyEvent(kb.Enter))
	ch.waitPath(`^/flags/checkout$`)
	ch.do("the flag's page", chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))

	// A phone: the content first, the navigation behind Menu, every tab on screen.
	ch.do("phone", viewport(390), chromedp.Navigate(a.srv.URL+"/flags/checkout"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))
	if top := ch.eval(`String(Math.round(document.querySelector("main h1").getBoundingClientRect().top))`); ch.eval(`String(`+top+` < 200)`) != "true" {
		t.Errorf("the page's heading starts %s px down on a phone, want under 200", top)
	} else {
		t.Logf("at 390 px the page's heading starts %s px down", top)
	}
	ch.shotNow("flag-phone-390")
	if got := ch.eval(`String(document.getElementById("sidebar").offsetParent === null)`); got != "true" {
		t.Errorf("the navigation shows on a phone before Menu is pressed")
	}
	tabs := `[...document.querySelectorAll(".tabs a")]`
	if got := ch.eval(`String(` + tabs + `.length === 7 && ` + tabs + `.every(a => { const r = a.getBoundingClientRect(); return r.left >= 0 && r.right <= document.documentElement.clientWidth })
		&& document.querySelector(".tabs").scrollWidth <= document.querySelector(".tabs").clientWidth)`); got != "true" {
		t.Errorf("a flag tab is off screen at 390 px: %s", ch.eval(tabs+`.map(a => a.textContent + " " + Math.round(a.getBoundingClientRect().right)).join(", ")`))
	}
	if got := ch.eval(`document.querySelector("[data-testid=menu-toggle]").getAttribute("aria-expanded")`); got != "false" {
		t.Errorf("Menu says aria-expanded=%s before it is pressed", got)
	}
	ch.do("menu", chromedp.Click(chromedp.CSS(`[data-testid=menu-toggle]`)), chromedp.WaitVisible(chromedp.CSS(`#sidebar [data-testid=nav-segments]`)))
	if got := ch.eval(`document.querySelector("[data-testid=menu-toggle]").getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("Menu says aria-expanded=%s when open", got)
	}
	if overflow := ch.eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
		t.Errorf("the open menu scrolls sideways at 390 px")
	}
	ch.shotNow("menu-open-390")
	if problems := ch.axeSerious(); len(problems) > 0 {
		t.Errorf("axe with the phone menu open: %v", problems)
	}
	ch.do("close the menu", chromedp.Click(chromedp.CSS(`[data-testid=menu-toggle]`)))
	ch.waitTrue("menu closed", `document.getElementById("sidebar").offsetParent === null`)
	for _, width := range []int64{1280, 390} {
		ch.shootAt(a.srv.URL, "/search?q=check", "search", width, `[data-testid=search-page-results]`)
	}
}
