package web_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// chromium finds the browser: /usr/bin/chromium (Debian's package), or
// chromium on the PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is missing: CI must install it (apt-get install -y chromium); .ci/run does")
	}
	t.Skip("Chromium not found at /usr/bin/chromium: install it (apt-get install -y chromium) to run the browser test")
	return ""
}

// TestBrowser drives the admin application in headless Chromium: sign in,
// create a project, see it listed, open an environment and reveal a secret.
// It also fails on any Content-Security-Policy violation or script error, and
// takes screenshots of the projects page at desktop and phone widths (into
// $BUNTING_SCREENSHOTS when set).
func TestBrowser(t *testing.T) {
	t.Parallel()
	a := newApp(t)

	// Launch flags and the console watch (CSP violations and script errors
	// fail the test) are headless's.
	ctx := headless(t, 90*time.Second).ctx

	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	value := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("value of %s: %v", sel, err)
		}
		return v
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}

	// screenshot captures the whole page in a viewport as tall as the page,
	// so that what is laid out to the viewport's height looks as it does.
	screenshot := func() []byte {
		t.Helper()
		w, h := eval(`String(window.innerWidth)`), eval(`String(document.documentElement.scrollHeight)`)
		var width, height int64
		fmt.Sscan(w, &width)
		fmt.Sscan(h, &height)
		mobile, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`matchMedia("(max-width: 600px)").matches`))
		viewport := chromedp.EmulateViewport(width, height)
		if mobile {
			viewport = chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		do("fit the viewport", viewport)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		must(t, err)
		return png
	}

	do("sign in",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(a.srv.URL+"/projects"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-email`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), ownerPassword),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=project-create]`)),
	)

	// The key is suggested from the name as it is typed.
	do("type a project name", chromedp.SendKeys(chromedp.CSS(`#project-create-name`), "Web shop"))
	if got := value(`#project-create-key`); got != "web-shop" {
		t.Errorf("suggested key %q, want web-shop", got)
	}
	// htmx posts the form and swaps the list and the message in place.
	do("create the project",
		chromedp.Click(chromedp.CSS(`[data-testid=project-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=project-row][data-key="web-shop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)),
	)
	if got := value(`#project-create-name`); got != "" {
		t.Errorf("the form kept %q after creating", got)
	}
	if got := eval(`location.pathname`); got != "/projects" {
		t.Errorf("at %s after an htmx post, want /projects", got)
	}

	// A problem shows next to its field, in place.
	do("create it again",
		chromedp.SendKeys(chromedp.CSS(`#project-create-name`), "Web shop"),
		chromedp.Click(chromedp.CSS(`[data-testid=project-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#project-create [data-testid=error-key]`)),
	)

	do("open the Prod environment",
		chromedp.Click(chromedp.CSS(`[data-testid=project-row][data-key="web-shop"] [data-testid=env-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=secrets]`)),
	)
	if got := eval(`document.querySelector('[data-testid=env-heading]').textContent`); got != "Prod" {
		t.Errorf("opened %q, want Prod", got)
	}
	if got := eval(`document.querySelector('[data-testid=secret-value]').type`); got != "password" {
		t.Errorf("secret shown as %q before reveal, want password (masked)", got)
	}
	do("reveal the first secret",
		chromedp.Click(chromedp.CSS(`[data-testid=secret-row] [data-testid=secret-reveal]`)),
	)
	if got := eval(`document.querySelector('[data-testid=secret-value]').type`); got != "text" {
		t.Errorf("secret shown as %q after reveal, want text", got)
	}
	projects, err := a.st.Projects().ListProjects(t.Context(), a.ownerActor())
	must(t, err)
	if want := projects[0].Environments[0].Secrets[0].Value; value(`[data-testid=secret-value]`) != want {
		t.Errorf("revealed %q, want the stored secret %q", value(`[data-testid=secret-value]`), want)
	}

	// Screenshots of a projects page with some content, at desktop and phone widths.
	for _, p := range []core.ProjectInput{{Name: "Mobile app", Key: "mobile-app"}, {Name: "Payments API", Key: "payments-api"}} {
		_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), p)
		must(t, err)
	}
	dir := os.Getenv("BUNTING_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, width := range []int64{1280, 390} {
		viewport := chromedp.EmulateViewport(width, 900)
		if width < 600 { // a phone: portrait, overlay scrollbars
			viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		do("projects page", viewport, chromedp.Navigate(a.srv.URL+"/projects"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=project-list]`)))
		name := filepath.Join(dir, "projects-"+map[int64]string{1280: "1280", 390: "390"}[width]+".png")
		must(t, os.WriteFile(name, screenshot(), 0o644))
		t.Logf("screenshot %s", name)
		if overflow := eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
			t.Errorf("the page scrolls sideways at %d px", width)
		}
	}

	// Every other page fits a phone without scrolling sideways, and breaks no
	// policy; with BUNTING_SCREENSHOTS set, each is captured for a look.
	env := projects[0].Environments[0]
	for name, path := range map[string]string{
		"environment":   "/projects/" + projects[0].ID.String() + "/envs/" + env.ID.String(),
		"project":       "/projects/" + projects[0].ID.String(),
		"access-tokens": "/access-tokens",
		"workspace":     "/workspace",
		"profile":       "/profile",
		"not-found":     "/no-such-page",
	} {
		for _, width := range []int64{1280, 390} {
			viewport := chromedp.EmulateViewport(width, 900)
			if width < 600 {
				viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
			}
			do(name, viewport, chromedp.Navigate(a.srv.URL+path), chromedp.WaitVisible(chromedp.CSS(`main`)))
			if overflow := eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
				t.Errorf("%s scrolls sideways at %d px", path, width)
			}
			if os.Getenv("BUNTING_SCREENSHOTS") != "" {
				must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), screenshot(), 0o644))
			}
		}
	}

}

// choose selects an option of a select as a person would: the value changes
// and the change event fires (htmx and app.js listen to it).
func (ch *chrome) choose(sel, value string) {
	ch.t.Helper()
	ch.eval(fmt.Sprintf(`(function(){var s=document.querySelector(%q);s.value=%q;s.dispatchEvent(new Event("change",{bubbles:true}));return s.value})()`, sel, value))
}

// settled waits until htmx has finished its requests, swaps and settling.
// What htmx swaps in answers as htmx only once htmx has processed it, at the
// settle: a form submitted before then is sent as a plain form.
func (ch *chrome) settled() {
	ch.t.Helper()
	for range 400 {
		if ch.eval(`String(document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added") === null)`) == "true" {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	ch.t.Fatalf("htmx did not settle: %s", ch.eval(`String(Array.from(document.querySelectorAll(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")).map(e => e.id || e.tagName))`))
}

// waitPath waits until the browser has loaded a page whose path matches
// pattern: a query started on a page being replaced may never answer.
func (ch *chrome) waitPath(pattern string) {
	ch.t.Helper()
	re := regexp.MustCompile(pattern)
	for range 100 {
		v, err := chromedp.Run(ch.ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.pathname : ""`))
		if err == nil && re.MatchString(v) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ch.t.Fatalf("the browser did not reach a page matching %s; at %s", pattern, ch.eval(`location.pathname`))
}

// fill replaces a field's value by typing.
func (ch *chrome) fill(sel, value string) {
	ch.t.Helper()
	ch.do("fill "+sel, chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), value))
}

// viewport sets a desktop width, or a phone's (portrait, overlay scrollbars).
func viewport(width int64) chromedp.Action[chromedp.Void] {
	if width < 600 {
		return chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
	}
	return chromedp.EmulateViewport(width, 900)
}

// shootAt opens a page at a width, checks it does not scroll sideways, and,
// when $BUNTING_SCREENSHOTS names a directory, saves a screenshot of the
// whole page there.
func (ch *chrome) shootAt(base, path, name string, width int64, ready string) {
	ch.t.Helper()
	ch.do(name, viewport(width), chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(ready)))
	if overflow := ch.eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
		ch.t.Errorf("%s scrolls sideways at %d px", path, width)
	}
	dir := os.Getenv("BUNTING_SCREENSHOTS")
	if dir == "" {
		return // the screenshot is for a person to look at; without a place to keep it, it is not taken
	}
	var height int64
	fmt.Sscan(ch.eval(`String(document.documentElement.scrollHeight)`), &height)
	full := chromedp.EmulateViewport(width, height)
	if width < 600 {
		full = chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulatePortrait)
	}
	ch.do("fit the viewport", full)
	png, err := chromedp.Run(ch.ctx, chromedp.CaptureScreenshot())
	must(ch.t, err)
	file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
	must(ch.t, os.WriteFile(file, png, 0o644))
	ch.t.Logf("screenshot %s", file)
}

// TestBrowserFlags drives the flag pages in headless Chromium: sign in,
// create a flag (key suggested, type changed), add a rule serving a 30/70
// rollout and save it, require comments and toggle the flag with one, see
// the comment in the history; then create, archive, restore and delete a
// segment. It takes screenshots of the flag list and the flag page at 1280
// and 390 px.
func TestBrowserFlags(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a := newApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Web shop", Key: "web-shop"})
	must(t, err)
	pr := a.project("web-shop")
	env := pr.Environments[0]

	ch.do("sign in",
		viewport(1280),
		chromedp.Navigate(a.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-email`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), ownerPassword),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-list]`)),
	)
	if got := ch.eval(`location.pathname`); got != "/flags" {
		t.Errorf("signed in at %s, want /flags", got)
	}

	// Create a string flag: the key follows the name, the type brings its variations.
	ch.do("open the form", chromedp.Click(chromedp.CSS(`#flag-create > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#flag-create-name`)),
		chromedp.SendKeys(chromedp.CSS(`#flag-create-name`), "New checkout"))
	if got := ch.eval(`document.querySelector("#flag-create-key").value`); got != "new-checkout" {
		t.Errorf("suggested key %q", got)
	}
	ch.choose(`#flag-create-variationType`, "string")
	ch.do("string variations", chromedp.WaitVisible(chromedp.CSS(`#flag-create input[value="variation-a"]`)))
	ch.settled()
	if got := ch.eval(`document.querySelector("#flag-create-name").value`); got != "New checkout" {
		t.Errorf("name lost when the type changed: %q", got)
	}
	ch.do("create", chromedp.Click(chromedp.CSS(`[data-testid=flag-create-submit]`)))
	ch.waitPath("^/flags/new-checkout$")
	// The page opens with the targeting in sentences; Edit opens the editor in place.
	ch.do("flag page", chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))
	if got := ch.eval(`document.querySelector("[data-testid=summary-default] [data-testid=summary-sentence]").textContent`); !strings.HasPrefix(got, "Otherwise serve ") {
		t.Errorf("default rule sentence %q", got)
	}
	ch.do("edit", chromedp.Click(chromedp.CSS(`[data-testid=summary-add-rule]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule-add]`)))
	if got := ch.eval(`String(document.querySelector("#edit-targets").open)`); got != "false" {
		t.Errorf("editing the rules leaves the individual targets unfolded")
	}
	if got := ch.eval(`location.search`); got != "?edit=targeting&part=rules" {
		t.Errorf("the editor's address is %q, want ?edit=targeting&part=rules (so reload and back keep it)", got)
	}

	// Add a rule: country is nl, serve 30% Variation A and 70% Variation B.
	ch.do("add a rule", chromedp.Click(chromedp.CSS(`[data-testid=rule-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule] [data-testid=condition-property]`)))
	ch.fill(`[data-testid=rule] [data-testid=condition-property]`, "country")
	ch.fill(`[data-testid=rule] [data-testid=condition-value]`, "nl")
	ch.fill(`[data-testid=rule] [data-testid=rule-name]`, "Dutch users")
	if ch.eval(`String(document.querySelector("[data-testid=rule] [data-testid=rollout]").hidden)`) != "true" {
		t.Errorf("the rollout shows before it is chosen")
	}
	ch.choose(`[data-testid=rule] [data-testid=serve-choice]`, "rollout")
	ch.do("rollout shown", chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule] [data-testid=rollout-percent]`)))
	ch.fill(`[data-testid=rule] [data-testid=rollout] input[name$=".pct.`+a.flag(env, "new-checkout").Variations[0].ID+`"]`, "30")
	ch.fill(`[data-testid=rule] [data-testid=rollout] input[name$=".pct.`+a.flag(env, "new-checkout").Variations[1].ID+`"]`, "70")
	if got := ch.eval(`document.querySelector("[data-testid=rule] [data-rollout-total]").textContent`); got != "Total 100%" {
		t.Errorf("rollout total %q", got)
	}
	ch.do("save", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flash-success]").textContent`); got != "Targeting saved." {
		t.Errorf("message %q", got)
	}
	f := a.flag(env, "new-checkout")
	if len(f.Rules) != 1 || len(f.Rules[0].Variations) != 2 || f.Rules[0].Variations[0].Rollout[1] != 0.3 {
		t.Fatalf("saved rules %+v", f.Rules)
	}
	// Saved, the page says the rule in words again.
	ch.do("summary after saving", chromedp.WaitVisible(chromedp.CSS(`[data-testid=summary-rule]`)))
	want := "If country is nl, serve 30% " + f.Variations[0].Name + ", 70% " + f.Variations[1].Name + " by user key"
	if got := ch.eval(`document.querySelector("[data-testid=summary-rule] [data-testid=summary-sentence]").textContent`); got != want {
		t.Errorf("rule sentence %q, want %q", got, want)
	}

	// Require comments; turning the flag on asks for one.
	a.requireComments(pr, env)
	ch.do("reload", chromedp.Navigate(a.srv.URL+"/flags/new-checkout"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-toggle-form]`)))
	ch.do("turn on without a comment", chromedp.Click(chromedp.CSS(`[data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-toggle-form] [data-testid=error-comment]`)))
	ch.do("turn on with a comment",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=flag-toggle-form] [data-testid=comment]`), "Launch for the Netherlands"),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	if !a.flag(env, "new-checkout").IsEnabled {
		t.Errorf("the flag is not on")
	}
	ch.do("history", chromedp.Click(chromedp.CSS(`[data-testid=tab-history]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=history-comment]`)))
	if got := ch.eval(`document.querySelector("[data-testid=history-comment]").textContent`); got != "Launch for the Netherlands" {
		t.Errorf("newest history comment %q", got)
	}

	// Screenshots of the flag list and the flag page, with some content.
	for i, name := range []string{"Search bar", "Dark mode", "Pricing experiment", "Mobile onboarding"} {
		in := flagstore.FlagInput{Name: name, Key: fmt.Sprintf("flag-%d", i), IsEnabled: i%2 == 0, Description: "Shown to a share of users.",
			Change: flagstore.Change{Comment: "Created for the " + name + " launch"}}
		if i < 2 {
			in.Tags = []string{"web", "team-growth"}
		}
		a.makeFlag(env, in)
	}
	for _, width := range []int64{1280, 390} {
		ch.shootAt(a.srv.URL, "/flags", "flags", width, `[data-testid=flag-list]`)
		ch.shootAt(a.srv.URL, "/flags/new-checkout", "flag", width, `[data-testid=targeting-summary]`)
		ch.shootAt(a.srv.URL, "/flags/new-checkout?edit=targeting", "flag-editor", width, `[data-testid=targeting-form]`)
		ch.shootAt(a.srv.URL, "/flags/new-checkout/history", "flag-history", width, `[data-testid=history]`)
		if os.Getenv("BUNTING_SCREENSHOTS") != "" {
			ch.shootAt(a.srv.URL, "/flags/new-checkout/variations", "flag-variations", width, `[data-testid=variations-form]`)
			ch.shootAt(a.srv.URL, "/flags/new-checkout/settings", "flag-settings", width, `[data-testid=settings]`)
			ch.shootAt(a.srv.URL, "/audit-log", "audit-log", width, `[data-testid=history]`)
		}
	}
	ch.do("desktop", viewport(1280))

	// A segment: create, archive, restore, delete (comments are required now).
	ch.do("segments", chromedp.Navigate(a.srv.URL+"/segments"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-list]`)),
		chromedp.Click(chromedp.CSS(`#segment-create > summary`)),
		chromedp.SendKeys(chromedp.CSS(`#segment-create-name`), "Beta users"),
		chromedp.SendKeys(chromedp.CSS(`#segment-create [data-testid=comment]`), "For the beta"),
		chromedp.Click(chromedp.CSS(`[data-testid=segment-create-submit]`)))
	ch.waitPath("^/segments/[0-9a-f-]+$")
	ch.do("segment page", chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-heading]`)))
	if got := ch.eval(`document.querySelector("[data-testid=segment-heading]").textContent`); got != "Beta users" {
		t.Errorf("segment heading %q", got)
	}
	if os.Getenv("BUNTING_SCREENSHOTS") != "" {
		path := ch.eval(`location.pathname`)
		for _, width := range []int64{1280, 390} {
			ch.shootAt(a.srv.URL, path, "segment", width, `[data-testid=segment-targeting-form]`)
			ch.shootAt(a.srv.URL, "/segments", "segments", width, `[data-testid=segment-list]`)
		}
		ch.do("back", viewport(1280), chromedp.Navigate(a.srv.URL+path), chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-heading]`)))
	}
	for _, step := range []struct{ tab, action, done string }{
		{"settings", "archive", "Segment archived."},
		{"settings", "restore", "Segment restored."},
		{"settings", "delete", "Segment deleted."},
	} {
		ch.do(step.action,
			chromedp.Click(chromedp.CSS(`[data-testid=tab-`+step.tab+`]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=`+step.action+`]`)),
			chromedp.Click(chromedp.CSS(`[data-testid=`+step.action+`]`)))
		ch.waitPath("/" + step.action + "$")
		ch.do(step.action+": confirm",
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=confirm-form]`)),
			chromedp.SendKeys(chromedp.CSS(`[data-testid=confirm-form] [data-testid=comment]`), "Step: "+step.action),
			chromedp.Click(chromedp.CSS(`[data-testid=confirm-submit]`)))
		ch.waitPath(map[string]string{"archive": "/settings$", "restore": "/settings$", "delete": "^/segments$"}[step.action])
		ch.do(step.action+": done", chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
		if got := ch.eval(`document.querySelector("[data-testid=flash-success]").textContent`); got != step.done {
			t.Errorf("%s: message %q", step.action, got)
		}
	}
	if got := ch.eval(`location.pathname`); got != "/segments" {
		t.Errorf("after deleting at %s", got)
	}
	list, err := a.st.Segments().ListSegments(t.Context(), a.ownerActor(), env.ID, segments.SegmentFilter{Page: core.Page{Size: 10}})
	must(t, err)
	if list.TotalCount != 0 {
		t.Errorf("the segment was not deleted")
	}
}
