package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store"
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
	bin := chromium(t)
	a := newApp(t)

	allocCtx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// Collect what the console reports: CSP violations and script errors fail the test.
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused to") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

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
	projects, err := a.st.ListProjects(t.Context(), a.ownerActor())
	must(t, err)
	if want := projects[0].Environments[0].Secrets[0].Value; value(`[data-testid=secret-value]`) != want {
		t.Errorf("revealed %q, want the stored secret %q", value(`[data-testid=secret-value]`), want)
	}

	// Screenshots of a projects page with some content, at desktop and phone widths.
	for _, p := range []store.ProjectInput{{Name: "Mobile app", Key: "mobile-app"}, {Name: "Payments API", Key: "payments-api"}} {
		_, err := a.st.CreateProject(t.Context(), a.ownerActor(), p)
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

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser console: %s", p)
	}
}
