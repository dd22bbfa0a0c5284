package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserTriggerURLShownOnce makes a trigger in Chromium (htmx swaps
// the flag's page): its URL appears once with a copy button and a curl
// command, calling it turns the flag off, and the page opened again shows
// the call but never the URL.
func TestBrowserTriggerURLShownOnce(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	base := a.srv.URL
	ch.do("desktop", viewport(1280))
	ch.signIn(base, ownerEmail, ownerPassword)
	ch.do("open the triggers tab",
		chromedp.Navigate(base+"/flags/checkout"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tab-triggers]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=tab-triggers]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=trigger-create]`)),
	)
	ch.fill(`#trigger-description`, "Checkout alert")
	ch.do("create", chromedp.Click(chromedp.CSS(`[data-testid=trigger-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=trigger-url]`)))
	u := ch.value(`[data-testid=trigger-url]`)
	if !strings.HasPrefix(u, "http://bunting.test/api/v1/triggers/run/") || len(strings.TrimPrefix(u, "http://bunting.test/api/v1/triggers/run/")) != 40 {
		t.Fatalf("shown URL %q", u)
	}
	if got := ch.value(`[data-testid=trigger-curl]`); got != "curl -X POST "+u {
		t.Errorf("command %q", got)
	}
	// With script on, the copy button is shown once the new content settles.
	ch.do("see the copy button", chromedp.WaitVisible(chromedp.CSS(`[data-testid=trigger-copy]`)))
	if got := ch.eval(`document.querySelector("[data-testid=trigger-row] [data-testid=trigger-name]").textContent`); got != "Checkout alert" {
		t.Errorf("listed %q", got)
	}
	ch.waitPath(`^/flags/checkout/triggers$`)

	if got := a.callTrigger(u); got != http.StatusOK {
		t.Fatalf("calling the URL: %d", got)
	}
	if a.flag(env, "checkout").IsEnabled {
		t.Fatal("the flag is still on")
	}
	ch.do("open again", chromedp.Navigate(base+"/flags/checkout/triggers"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=trigger-row]`)))
	if ch.eval(`String(document.querySelector("[data-testid=trigger-url]") === null && !document.body.innerHTML.includes(`+"`"+u+"`"+`))`) != "true" {
		t.Error("the URL is shown again")
	}
	if got := ch.eval(`document.querySelector("[data-testid=trigger-count]").textContent`); got != "1" {
		t.Errorf("calls %q, want 1", got)
	}
}
