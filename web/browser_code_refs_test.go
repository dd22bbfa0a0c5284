package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBrowserCodeRefs: references uploaded as bunting coderefs sends them
// are listed on the flag's Code tab (file:line, the lines around it, the
// repository, branch and commit), whose heading counts them, and once
// the flag is archived its page and the archived list say it is still in
// code.
func TestBrowserCodeRefs(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	a.makeFlag(env, flagstore.FlagInput{Name: "Banner", Key: "banner"})
	_, err := a.st.Flags().UploadCodeRefs(t.Context(), a.ownerActor(), env.ID, flagstore.CodeRefsInput{Repository: "shop-web", Branch: "main",
		Commit: "0123456789abcdef0123", References: []flagstore.CodeRef{
			{FlagKey: "checkout", Path: "src/checkout.ts", Line: 12, Snippet: "// the new flow\nif (flags.bool(\"checkout\")) {\n  render()"},
			{FlagKey: "checkout", Path: "src/cart.ts", Line: 3, Snippet: "flags.bool('checkout')"},
		}})
	must(t, err)
	base := a.srv.URL
	ch.do("desktop", viewport(1280))
	ch.signIn(base, ownerEmail, ownerPassword)
	ch.do("open the code tab",
		chromedp.Navigate(base+"/flags/checkout"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tab-code]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=tab-code]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=code-ref]`)),
	)
	ch.waitPath(`^/flags/checkout/code$`)
	if got := ch.eval(`document.querySelector("[data-testid=flag-code-refs]").textContent`); got != "Used in code: 2 references" {
		t.Errorf("heading says %q, want the 2 references counted", got)
	}
	places := ch.eval(`[...document.querySelectorAll("[data-testid=code-ref-place]")].map(e => e.textContent).join(",")`)
	if places != "src/cart.ts:3,src/checkout.ts:12" {
		t.Errorf("places %q, want src/cart.ts:3,src/checkout.ts:12", places)
	}
	section := ch.eval(`document.querySelector("[data-testid=code-refs]").innerText`)
	for _, want := range []string{"shop-web", "main", "0123456789ab", "if (flags.bool(\"checkout\")) {\n  render()"} {
		if !strings.Contains(section, want) {
			t.Errorf("the code tab does not show %q:\n%s", want, section)
		}
	}
	ch.do("a flag without references", chromedp.Navigate(base+"/flags/banner/code"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=code-refs-empty]`)))

	_, err = a.st.Flags().ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.Change{})
	must(t, err)
	_, err = a.st.Flags().ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "banner", flagstore.Change{})
	must(t, err)
	ch.do("the archived flag's page", chromedp.Navigate(base+"/flags/checkout"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-archived-in-code]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-archived-in-code]").textContent`); !strings.HasPrefix(got, "Archived but still in code: 2 references.") {
		t.Errorf("archived flag's page says %q", got)
	}
	ch.do("the archived list", chromedp.Navigate(base+"/flags?archived=1"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-archived-in-code]`)))
	marked := ch.eval(`[...document.querySelectorAll("[data-testid=flag-archived-in-code]")].map(e => e.closest("tr").querySelector("a").textContent.trim() + ": " + e.textContent).join("|")`)
	if !strings.Contains(marked, "Archived but still in code: 2 references") || strings.Contains(marked, "Banner") || strings.Count(marked, "|") != 0 {
		t.Errorf("the archived list marks %q, want only Checkout with 2 references", marked)
	}
}
