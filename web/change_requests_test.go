package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// approvalApp is a flag app whose Prod needs one approval, from Alice or
// Bob, both owners; it has the flag "pay".
func approvalApp(t *testing.T) (a *app, pr core.Project, env core.Environment, alice, bob uuid.UUID) {
	t.Helper()
	a, pr, env = flagApp(t)
	alice = a.addMember("alice@example.com", core.OwnerPolicyID)
	bob = a.addMember("bob@example.com", core.OwnerPolicyID)
	a.makeFlag(env, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	// Set on the environment page, without script, as its editor would.
	owner := a.signedIn(ownerEmail, ownerPassword)
	path := "/projects/" + pr.ID.String() + "/envs/" + env.ID.String()
	owner.get(path).status(http.StatusOK)
	owner.post(path, url.Values{"name": {"Prod"}, "changeRequestEnabled": {"true"}, "approvalsRequired": {"1"},
		"approverMemberIds": {alice.String(), bob.String()}}).status(http.StatusOK)
	got := a.project("web").Environments[0].Settings.ChangeRequest
	if got == nil || !got.IsEnabled || got.ApprovalsRequired != 1 || len(got.ApproverMemberIDs) != 2 {
		t.Fatalf("approval setting after saving the page: %+v", got)
	}
	return a, pr, env, alice, bob
}

// TestChangeRequestPages requests a change from the flag page, reviews it and
// applies it, all without script.
func TestChangeRequestPages(t *testing.T) {
	t.Parallel()
	a, _, env, _, bob := approvalApp(t)

	al := a.signedIn("alice@example.com", memberPassword)
	page := al.get("/flags/pay").status(http.StatusOK)
	fields := page.must("request-fields")
	if reviewers := text(find(fields, "request-reviewers")); !strings.Contains(reviewers, "bob@example.com") || strings.Contains(reviewers, "alice@example.com") {
		t.Fatalf("reviewers offered to Alice: %q", reviewers)
	}
	toggle := page.formAction("flag-toggle-form")
	al.post(toggle, url.Values{"on": {"true"}, "revision": {a.flag(env, "pay").Revision.String()}, "reviewers": {bob.String()}}).
		status(http.StatusBadRequest)
	if msg := al.last.text("error-reason"); msg == "" {
		t.Fatal("a request without a reason shows no problem at the reason")
	}
	al.post(toggle, url.Values{"on": {"true"}, "revision": {a.flag(env, "pay").Revision.String()}, "reason": {"Launch payments"},
		"reviewers": {bob.String()}}).status(http.StatusOK)
	if !strings.Contains(al.last.text("flash-success"), "Change request sent") {
		t.Fatalf("flash after requesting: %q", al.last.text("flash-success"))
	}
	if a.flag(env, "pay").IsEnabled {
		t.Fatal("requesting turned the flag on")
	}
	if got := al.last.text("pending-changes"); !strings.Contains(got, "Launch payments") || !strings.Contains(got, "Turned the flag on") {
		t.Fatalf("pending changes on the flag page: %q", got)
	}
	request := attr(al.last.must("pending-review"), "href")
	// The list shows the flag's state, not a toggle, where changes need approval.
	if al.get("/flags").has("flag-toggle-form") {
		t.Fatal("the flag list offers a direct toggle")
	}

	b := a.signedIn("bob@example.com", memberPassword)
	if got := b.get("/flags").text("nav-reviews"); got != "Reviews (1)" {
		t.Fatalf("Bob's reviews entry: %q", got)
	}
	b.get("/change-requests").status(http.StatusOK)
	if got := attr(b.last.must("review-link"), "href"); got != request {
		t.Fatalf("Bob's review list links %q, want %q", got, request)
	}
	b.get(request).status(http.StatusOK)
	if got := b.last.text("cr-lines"); got != "Turned the flag on" {
		t.Fatalf("the change in words: %q", got)
	}
	if b.last.has("cr-apply") {
		t.Fatal("apply offered before approval")
	}
	b.post(request+"/approve", url.Values{"comment": {"Go"}}).status(http.StatusOK).at(request)
	if b.last.text("cr-status") != "Approved" || !strings.Contains(b.last.text("cr-reviewers"), "Go") {
		t.Fatalf("after approving: %q, %q", b.last.text("cr-status"), b.last.text("cr-reviewers"))
	}

	// The author cannot review it, and applies it.
	al.get(request).status(http.StatusOK)
	if al.last.has("cr-approve") {
		t.Fatal("the author is offered to approve")
	}
	al.post(request+"/approve", nil).status(http.StatusUnprocessableEntity)
	if !strings.Contains(al.last.text("form-error"), "your own") {
		t.Fatalf("the author's approval: %q", al.last.text("form-error"))
	}
	al.post(request+"/apply", nil).status(http.StatusOK).at("/flags/pay")
	if f := a.flag(env, "pay"); !f.IsEnabled {
		t.Fatal("applying left the flag off")
	}
	if al.last.has("pending-review") {
		t.Fatal("the applied request is still pending")
	}
}

// TestBrowserChangeRequest: Alice requests a change with a reason in
// Chromium, Bob reads it in words and approves it, Alice applies it.
func TestBrowserChangeRequest(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env, _, _ := approvalApp(t)
	signOut := func() {
		ch.do("sign out", chromedp.Click(chromedp.CSS(`[data-testid=logout]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	}
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, "alice@example.com", memberPassword)
	ch.do("request to turn the flag on",
		chromedp.Navigate(a.srv.URL+"/flags/pay"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=request-reason]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=flag-toggle-form] [data-testid=request-reason]`), "Launch payments"),
		// Bob, the only other who may approve, is chosen already.
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-toggle-form] [data-testid=request-reviewers] input:checked`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=pending-review]`)),
	)
	if a.flag(env, "pay").IsEnabled {
		t.Fatal("requesting turned the flag on")
	}
	signOut()

	ch.signIn(a.srv.URL, "bob@example.com", memberPassword)
	ch.do("open the review", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.Click(chromedp.CSS(`[data-testid=nav-reviews]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=reviews-open]`)), chromedp.Click(chromedp.CSS(`[data-testid=reviews-open]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-lines]`)))
	if got := ch.eval(`document.querySelector("[data-testid=cr-lines]").textContent.trim()`); got != "Turned the flag on" {
		t.Fatalf("Bob reads the change as %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=cr-reason]").textContent`); got != "Launch payments" {
		t.Fatalf("Bob reads the reason as %q", got)
	}
	ch.do("approve", chromedp.SendKeys(chromedp.CSS(`[data-testid=cr-review-comment]`), "Ship it"),
		chromedp.Click(chromedp.CSS(`[data-testid=cr-approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-comment]`)))
	signOut()

	ch.signIn(a.srv.URL, "alice@example.com", memberPassword)
	ch.do("apply", chromedp.Navigate(a.srv.URL+"/flags/pay"), chromedp.Click(chromedp.CSS(`[data-testid=pending-review]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-apply]`)), chromedp.Click(chromedp.CSS(`[data-testid=cr-apply]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-toggle-form]`)))
	if !a.flag(env, "pay").IsEnabled {
		t.Fatal("applying left the flag off")
	}
}
