package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The top bar follows a renamed project and a new environment at once,
// without a reload.
func TestBrowserTopBarFollowsChanges(t *testing.T) {
	t.Parallel()
	ch := headless(t, 60*time.Second)
	a, web, _ := flagApp(t)
	options := func() string {
		return ch.eval(`[...document.querySelectorAll("#switch-env option")].map(o => o.textContent).join(" | ")`)
	}
	waitFor := func(step, want string) {
		t.Helper()
		for range 50 {
			if strings.Contains(options(), want) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("%s: the top bar offers %q, without %q", step, options(), want)
	}
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("project", chromedp.Navigate(a.srv.URL+"/projects/"+web.ID.String()), chromedp.WaitVisible(chromedp.CSS(`#project-rename`)))
	ch.eval(`window.notReloaded = true; "ok"`)
	ch.fill(`#project-rename input[name=name]`, "Web shop")
	ch.do("rename", chromedp.Click(chromedp.CSS(`[data-testid=project-rename-submit]`)))
	waitFor("after the rename", "Web shop / Prod")
	ch.fill(`[data-testid=env-create] input[name=name]`, "Staging")
	ch.do("add an environment", chromedp.Click(chromedp.CSS(`[data-testid=env-create-submit]`)))
	waitFor("after adding an environment", "Web shop / Staging")
	if ch.eval(`String(window.notReloaded === true)`) != "true" {
		t.Errorf("the page was reloaded")
	}
}
