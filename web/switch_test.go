package web_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Switching environment on a flag's or a segment's page opens the same key
// in the other environment when it is there, else that environment's list
// with a notice naming what is missing.
func TestEnvironmentSwitchKeepsYourPlace(t *testing.T) {
	t.Parallel()
	a, pr, prod := flagApp(t)
	dev := pr.Environments[1]
	a.makeFlag(prod, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(dev, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(prod, flagstore.FlagInput{Name: "Only in Prod", Key: "prod-only"})
	prodBeta := a.makeSegment(prod, "Beta", "beta")
	devBeta := a.makeSegment(dev, "Beta", "beta")
	lonely := a.makeSegment(prod, "Lonely", "lonely")
	b := a.signedIn(ownerEmail, ownerPassword)
	to := func(env core.Environment, next string) *page {
		return b.post("/context", url.Values{"envId": {env.ID.String()}, "next": {next}}).status(http.StatusOK)
	}

	to(dev, "/flags/checkout/history").at("/flags/checkout/history")
	if got := b.last.text("flag-heading"); got != "Checkout" {
		t.Errorf("heading %q", got)
	}
	to(prod, "/flags/checkout")
	to(dev, "/flags/prod-only?edit=targeting").at("/flags")
	if got := b.last.text("flash-success"); got != "There is no flag “prod-only” in Web / Dev; here are its flags." {
		t.Errorf("notice %q", got)
	}
	to(prod, "/segments/"+prodBeta.ID.String()+"/flags")
	to(dev, "/segments/"+prodBeta.ID.String()+"/flags").at("/segments/" + devBeta.ID.String() + "/flags")
	to(prod, "/segments/"+devBeta.ID.String()).at("/segments/" + prodBeta.ID.String())
	to(dev, "/segments/"+lonely.ID.String()).at("/segments")
	if got := b.last.text("flash-success"); got != "There is no segment “lonely” in Web / Dev; here are its segments." {
		t.Errorf("segment notice %q", got)
	}
	// Other pages stay where they are.
	to(prod, "/audit-log").at("/audit-log")
}

// In the browser, the switch in the top bar follows the flag.
func TestBrowserEnvironmentSwitch(t *testing.T) {
	t.Parallel()
	ch := headless(t, 60*time.Second)
	a, pr, prod := flagApp(t)
	dev := pr.Environments[1]
	a.makeFlag(prod, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(dev, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("flag page", chromedp.Navigate(a.srv.URL+"/flags/checkout"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-heading]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-state]").textContent`); got != "Off" {
		t.Fatalf("Prod's flag is %q", got)
	}
	ch.choose(`#switch-env`, dev.ID.String())
	ch.waitPath("^/flags/checkout$")
	ch.do("Dev's flag", chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-heading]`)))
	for range 50 {
		if ch.eval(`document.querySelector("#switch-env").selectedOptions[0].textContent`) == "Web / Dev" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := ch.eval(`document.querySelector("[data-testid=flag-state]").textContent`); got != "On" {
		t.Errorf("after the switch the page shows the flag %q, want Dev's (On)", got)
	}
}
