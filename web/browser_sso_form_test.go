package web_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// In Chromium, the single sign-on form keeps a secret typed before a
// refused save, and "Test connection" clears the old problems before it
// shows its own answer, in words.
func TestBrowserSSOFormTest(t *testing.T) {
	t.Parallel()
	ch := headless(t, 60*time.Second)
	a := newSSOApp(t, &logRecorder{}) // private networks allowed: the closed port is on loopback
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := "http://" + l.Addr().String()
	l.Close()

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("workspace", chromedp.Navigate(a.srv.URL+"/workspace"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-form]`)))
	ch.fill(`#sso-clientId`, "bunting")
	ch.fill(`#sso-clientSecret`, "typed-secret")
	ch.fill(`#sso-authorizationEndpoint`, "https://id.example.com/auth")
	ch.fill(`#sso-tokenEndpoint`, "https://id.example.com/token")
	ch.fill(`#sso-scope`, "email") // no openid: refused
	ch.do("save", chromedp.Click(chromedp.CSS(`[data-testid=sso-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-form] [data-testid=error-scope]`)))
	if got := ch.value(`#sso-clientSecret`); got != "typed-secret" {
		t.Errorf("the typed secret is %q after a refused save", got)
	}
	ch.fill(`#sso-issuer`, closed)
	ch.do("test", chromedp.Click(chromedp.CSS(`[data-testid=sso-test-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-test-failed]`)))
	if n := ch.eval(`String(document.querySelectorAll("[data-testid=sso-form] .field-error").length)`); n != "0" {
		t.Errorf("%s old problems still shown after Test", n)
	}
	got := ch.eval(`document.querySelector("[data-testid=sso-test-failed]").textContent`)
	if want := "Discovery failed: could not reach " + closed + "/.well-known/openid-configuration: connection refused"; got != want {
		t.Errorf("test answer %q, want %q", got, want)
	}
	if strings.Contains(got, "dial tcp") {
		t.Errorf("a Go error reached the page: %q", got)
	}
}
