package web_test

import (
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// In Chromium, a refused save marks the very input that is wrong, says why
// beside it, and keeps what was typed: a regular expression, a number and
// a JSON value.
func TestBrowserFieldErrors(t *testing.T) {
	t.Parallel()
	ch := headless(t, 60*time.Second)
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Theme", Key: "theme", VariationType: "json",
		Variations: []flagstore.Variation{{ID: "a", Name: "A", Value: `{"color": "blue"}`}, {ID: "b", Name: "B", Value: `{"color": "red"}`}}})
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)

	ch.do("editor", chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=rule-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule] [data-testid=condition-property]`)))
	for _, c := range []struct{ op, value, why string }{
		{"MatchRegex", "(unclosed", "Not a regular expression: missing closing ): `(unclosed`."},
		{"LessThan", "12abc", "Not a number."},
	} {
		ch.fill(`[data-testid=rule] [data-testid=condition-property]`, "plan")
		ch.choose(`[data-testid=rule] [data-testid=condition-op]`, c.op)
		ch.fill(`[data-testid=rule] [data-testid=condition-value]`, c.value)
		ch.do("save "+c.op, chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)))
		said := `(document.querySelector('[data-testid="error-rules[0].conditions[0].value"]') || {}).textContent || ""`
		for i := 0; i < 50 && ch.eval(said) != c.why; i++ { // the answer replaces the editor
			time.Sleep(100 * time.Millisecond)
		}
		if got := ch.eval(said); got != c.why {
			t.Errorf("%s: the field says %q, want %q", c.op, got, c.why)
		}
		if got := ch.eval(`document.querySelector("[data-testid=rule] [data-testid=condition-value]").getAttribute("aria-invalid")`); got != "true" {
			t.Errorf("%s: the value is not marked invalid", c.op)
		}
		if got := ch.value(`[data-testid=rule] [data-testid=condition-value]`); got != c.value {
			t.Errorf("%s: the typed value became %q", c.op, got)
		}
	}

	// The editor holds unsaved changes: leaving asks, and the test agrees.
	dialogs := chromedp.Events(ch.ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ch.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
			return
		}
	}()
	ch.do("variations", chromedp.Navigate(a.srv.URL+"/flags/theme/variations"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=variations-form]`)))
	ch.fill(`[data-testid=variations-form] input[name="variation.1.value"]`, `{"color": "red",}`)
	ch.do("save variations", chromedp.Click(chromedp.CSS(`[data-testid=variations-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-variations[1].value"]`)))
	if got := ch.eval(`document.querySelector('[data-testid="error-variations[1].value"]').textContent`); got != "Not valid JSON: '}' looking for beginning of object key string at character 17." {
		t.Errorf("JSON problem %q", got)
	}
	if got := ch.value(`[data-testid=variations-form] input[name="variation.1.value"]`); got != `{"color": "red",}` {
		t.Errorf("the typed JSON became %q", got)
	}
}
