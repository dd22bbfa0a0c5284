package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestAPIReferencePage serves /docs to anyone, with its vendored files under
// the same Content-Security-Policy as every page, and links it from the
// signed-in pages.
func TestAPIReferencePage(t *testing.T) {
	t.Parallel() // every test app has its own database
	a := newApp(t)
	p := a.browser().get("/docs").status(http.StatusOK)
	p.must("api-reference")
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q, want the pages' policy", csp)
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, "style=") {
		t.Error("the page has an inline script or style")
	}
	assets := regexp.MustCompile(`(?:src|href)="(/static/[^"]+)"`).FindAllStringSubmatch(p.body, -1)
	want := []string{"swagger-ui-bundle.", "swagger-ui.", "docs.", "docs.", "favicon."}
	for _, w := range want {
		found := false
		for _, m := range assets {
			found = found || strings.HasPrefix(m[1], "/static/"+w)
		}
		if !found {
			t.Errorf("the page does not load %s*", w)
		}
	}
	for _, m := range assets {
		if r := a.browser().get(m[1]); r.code != http.StatusOK || len(r.body) == 0 {
			t.Errorf("%s: got %d, want the file", m[1], r.code)
		}
	}
	if href := attr(p.must("openapi-json"), "href"); href != "/api/v1/openapi.json" {
		t.Errorf("document link %q", href)
	}

	projects := a.signedIn(ownerEmail, ownerPassword).get("/projects").status(http.StatusOK)
	if href := attr(projects.must("nav-api-reference"), "href"); href != "/docs" {
		t.Errorf("the navigation links the API reference at %q, want /docs", href)
	}
}

// TestBrowserAPIReference renders /docs in headless Chromium: Swagger UI
// shows the document's operations under the pages' Content-Security-Policy,
// with no policy violation or script error, at desktop and phone widths.
// Past 150 tags and operations Swagger UI renders only the rows near the
// viewport, so the test reaches operations the way a reader does: by a
// deep link, and by scrolling the whole list.
func TestBrowserAPIReference(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	// Launch flags and the console watch (CSP violations and script errors
	// fail the test) are headless's.
	// The reference has some 220 operations to render twice and scroll
	// through, all within this one deadline; beside the rest of make test
	// (the API's tests and the other browser tests) that has taken over
	// 180 s, against 30 s alone. Each step still waits on the page, so a
	// quiet machine finishes as soon as the page is ready.
	ctx := headless(t, 360*time.Second).ctx
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}

	dir := os.Getenv("BUNTING_SCREENSHOTS")
	for _, width := range []int64{1280, 390} {
		viewport := chromedp.EmulateViewport(width, 900)
		if width < 600 {
			viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		if err := chromedp.Do(ctx, viewport, chromedp.Navigate(a.srv.URL+"/docs"),
			chromedp.WaitVisible(chromedp.CSS(`.swagger-ui .info .title`)),
			chromedp.WaitVisible(chromedp.CSS(`#operations-Identity-login`)),
		); err != nil {
			t.Fatalf("render /docs at %d px: %v", width, err)
		}
		if title := eval(`document.querySelector('.swagger-ui .info .title').textContent`); !strings.Contains(title, "Bunting management API") {
			t.Errorf("title %q", title)
		}
		if n := eval(`String(document.querySelectorAll('.opblock').length)`); n == "0" {
			t.Error("no operations shown")
		}
		if dir != "" {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, "docs-"+map[int64]string{1280: "1280", 390: "390"}[width]+".png"), png, 0o644))
		}
		if overflow := eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
			t.Errorf("/docs scrolls sideways at %d px", width)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#operations-Identity-login .opblock-summary-control`)),
			chromedp.WaitVisible(chromedp.CSS(`#operations-Identity-login .responses-table`))); err != nil {
			t.Fatalf("open an operation: %v", err)
		}
	}

	// A deep link opens its operation however far down the list it is.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(a.srv.URL+"/docs#/Projects/createProject"),
		chromedp.WaitVisible(chromedp.CSS(`#operations-Projects-createProject .responses-table`))); err != nil {
		t.Fatalf("deep link to an operation: %v", err)
	}

	// Scrolling from top to bottom shows every operation of the document.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
		const doc = await (await fetch("/api/v1/openapi.json")).json();
		let want = 0;
		for (const path of Object.values(doc.paths)) {
			want += Object.keys(path).filter(m => ["get", "put", "post", "delete", "patch"].includes(m)).length;
		}
		const seen = new Set();
		window.scrollTo(0, 0);
		for (let y = 0; y <= document.documentElement.scrollHeight; y += 400) {
			window.scrollTo(0, y);
			await frame();
			document.querySelectorAll(".opblock[id^=operations-]").forEach(e => seen.add(e.id));
		}
		return seen.size + " of " + want;
	})()`, chromedp.EvalAwaitPromise))
	must(t, err)
	if n, want, _ := strings.Cut(shown, " of "); n != want || n == "0" {
		t.Errorf("scrolling the whole list shows %s operations", shown)
	}

}
