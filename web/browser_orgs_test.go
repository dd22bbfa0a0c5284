package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// TestBrowserOrganizationsAndGuide drives, in headless Chromium: creating
// an organization from the top bar, finding it in the switcher and switching
// to it and back, the first-run guide (project, flag, snippets filled with
// the environment's secret and URL, the live check turning to Received at a
// real SDK request), renaming, deleting with the consequences named, the
// last organization refused, and a Developer refused both.
func TestBrowserOrganizationsAndGuide(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	first := organizations(t, a)[0]
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	b := headless(t, 150*time.Second)
	base := a.srv.URL
	b.do("viewport", chromedp.EmulateViewport(1280, 900))
	b.signIn(base, ownerEmail, ownerPassword)

	// Create an organization from the top bar; the key follows the name.
	b.do("open the new organization form",
		chromedp.Click(chromedp.CSS(`[data-testid=switch-new-org]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=org-create-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#org-create-name`), "Acme Labs"),
	)
	if got := b.value(`#org-create-key`); got != "acme-labs" {
		t.Errorf("suggested key %q", got)
	}
	b.do("create it",
		chromedp.Click(chromedp.CSS(`[data-testid=org-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=guide-project-form]`)),
	)
	b.waitPath(`^/get-started$`)
	if got := b.eval(`Array.from(document.querySelectorAll('#switch-org option')).map(o => o.textContent + (o.selected ? '*' : '')).join('|')`); got != first.Name+"|Acme Labs*" {
		t.Errorf("switcher %q", got)
	}

	// Switch to the first organization and back: the new one's guide greets.
	b.choose(`#switch-org`, first.ID.String())
	b.do("switched", chromedp.WaitVisible(chromedp.CSS(`#switch-org`)))
	b.waitPath(`^/(flags|get-started)$`)
	if got := b.eval(`document.querySelector('#switch-org option:checked').textContent`); got != first.Name {
		t.Errorf("after switching: %q", got)
	}
	acme := organizationByKey(t, a, "acme-labs")
	b.choose(`#switch-org`, acme.ID.String())
	b.do("the guide greets", chromedp.WaitVisible(chromedp.CSS(`[data-testid=guide-project-form]`)))

	// Step 1 and 2 through the guide.
	b.do("create the first project",
		chromedp.SendKeys(chromedp.CSS(`#guide-project-projectName`), "Web shop"),
		chromedp.Click(chromedp.CSS(`[data-testid=guide-project-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=guide-project-done]`)),
		chromedp.SendKeys(chromedp.CSS(`#guide-flag-name`), "New checkout"),
		chromedp.Click(chromedp.CSS(`[data-testid=guide-flag-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=guide-flag-done]`)),
	)
	act, err := a.st.IAM().UserActor(t.Context(), a.owner, a.wsID.String(), acme.ID.String())
	must(t, err)
	uc, err := a.st.IAM().UserContext(t.Context(), a.owner)
	must(t, err)
	wp, err := a.st.Workplace().FrameAt(t.Context(), iam.PageSession{Actor: act, Context: uc})
	must(t, err)
	if wp.Env == nil || wp.Project.Name != "Web shop" {
		t.Fatalf("working environment %+v", wp.Env)
	}
	var server, client string
	for _, s := range wp.Env.Secrets {
		if s.Type == core.SecretServer {
			server = s.Value
		} else {
			client = s.Value
		}
	}
	node := b.eval(`document.querySelector('[data-testid=snippet-node] [data-testid=snippet-code]').textContent`)
	for _, want := range []string{".sdkKey('" + server + "')", ".streamingUri('http://bunting.test')", ".eventsUri('http://bunting.test')", "boolVariation('new-checkout'"} {
		if !strings.Contains(node, want) {
			t.Errorf("Node snippet lacks %s:\n%s", want, node)
		}
	}
	// The SDK picker shows one snippet at a time: choosing Browser swaps in
	// the client SDK's.
	b.do("choose the browser SDK", chromedp.Click(chromedp.CSS(`[data-testid=guide-sdk-js]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=snippet-js]`)))
	if got := b.eval(`String(document.querySelectorAll('[data-testid^=snippet-]:not([data-testid=snippet-code])').length)`); got != "1" {
		t.Errorf("%s snippets shown, want 1", got)
	}
	if got := b.eval(`document.querySelector('[data-testid=guide-sdk-js]').getAttribute('aria-current')`); got != "page" {
		t.Errorf("the chosen SDK is marked %q", got)
	}
	if js := b.eval(`document.querySelector('[data-testid=snippet-js] [data-testid=snippet-code]').textContent`); !strings.Contains(js, ".sdkKey('"+client+"')") {
		t.Errorf("JS snippet:\n%s", js)
	}

	// The live check waits until an SDK's first request, then says Received.
	if got := b.eval(`document.querySelector('[data-testid=guide-check-state]').textContent`); got != "Waiting for the first evaluation…" {
		t.Errorf("check %q", got)
	}
	a.sdkRequest(server)
	b.do("received", chromedp.WaitVisible(chromedp.CSS(`#guide-check.alert-success`)))
	if got := b.eval(`document.querySelector('[data-testid=guide-check-state]').textContent`); got != "Received" {
		t.Errorf("check %q", got)
	}

	// The flag list leads back to the guide.
	b.do("flags page", chromedp.Navigate(base+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=connect-app]`)))

	// Rename: the top bar follows.
	b.do("rename",
		chromedp.Navigate(base+"/organization"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=org-form]`)),
	)
	b.fill(`#org-name`, "Acme Research")
	b.do("save", chromedp.Click(chromedp.CSS(`[data-testid=org-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	if got := b.eval(`document.querySelector('#switch-org option:checked').textContent`); got != "Acme Research" {
		t.Errorf("switcher after rename %q", got)
	}

	// Delete: the consequences are named; the key must be typed.
	b.do("open the deletion",
		chromedp.Click(chromedp.CSS(`[data-testid=org-delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=delete-consequences]`)),
	)
	got := b.eval(`document.querySelector('[data-testid=delete-consequences]').textContent`)
	for _, want := range []string{"1 project", "2 environments", "1 feature flag", "0 segments", "1 member"} {
		if !strings.Contains(got, want) {
			t.Errorf("consequences lack %q: %s", want, got)
		}
	}
	b.do("delete",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=delete-typed]`), "acme-labs"),
		chromedp.Click(chromedp.CSS(`[data-testid=delete-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)),
	)
	if got := b.eval(`document.querySelector('[data-testid=flash-success]').textContent`); got != "Organization “Acme Research” deleted." {
		t.Errorf("flash %q", got)
	}
	if got := b.eval(`document.querySelector('[data-testid=org-name]').textContent`); got != first.Name {
		t.Errorf("now in %q", got)
	}

	// The last organization cannot be deleted, and the page says why.
	b.do("last one",
		chromedp.Navigate(base+"/organization/delete"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=delete-blocked]`)),
	)

	// A Developer is offered neither, and the server refuses both.
	b.do("sign out", chromedp.Click(chromedp.CSS(`[data-testid=logout]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	b.signIn(base, "dev@example.com", memberPassword)
	if n := b.eval(`String(document.querySelectorAll('[data-testid=switch-new-org]').length)`); n != "0" {
		t.Error("a Developer sees the new organization link")
	}
	b.do("new organization page", chromedp.Navigate(base+"/organizations/new"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=org-create-denied]`)))
	statuses := b.eval(`(async () => {
		const token = document.querySelector('meta[name=csrf-token]').content;
		const post = (path, body) => fetch(path, {method: 'POST', headers: {'X-CSRF-Token': token,
			'Content-Type': 'application/x-www-form-urlencoded'}, body}).then(r => r.status);
		return [await post('/organizations', 'name=Mine&key=mine'), await post('/organization/delete', 'confirm=` + first.Key + `')].join(',');
	})()`)
	if statuses != "403,403" {
		t.Errorf("a Developer's create and delete answered %s, want 403,403", statuses)
	}
	if n := len(organizations(t, a)); n != 1 {
		t.Errorf("%d organizations", n)
	}
}
