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
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// daveNeedsApproval is flagApp whose environment's changes need the
// owner's approval, with dave@example.com a Developer there.
func daveNeedsApproval(t *testing.T) (*app, core.Environment) {
	t.Helper()
	a, _, env := flagApp(t)
	a.needApproval(env, a.owner)
	a.addMember("dave@example.com", core.DeveloperPolicyID)
	return a, env
}

// TestCreatingAFlagWhereApprovalIsNeeded: in Prod, whose changes need the
// owner's approval, the create form asks a Developer for a change request's
// reason and reviewers. Without them the flag is refused on the page, with
// words, nothing stored; with them the Developer lands on the change
// request, which says the flag waits for approval and what it will serve,
// and the flag waits archived until the owner approves and applies it.
func TestCreatingAFlagWhereApprovalIsNeeded(t *testing.T) {
	t.Parallel()
	a, env := daveNeedsApproval(t)
	ctx, owner := t.Context(), a.ownerActor()
	b := a.signedIn("dave@example.com", memberPassword)

	form := b.get("/flags").status(http.StatusOK).must("flag-create-form")
	if find(form, "request-fields") == nil || find(form, "request-reviewers") == nil {
		t.Fatal("the create form does not ask for a change request where changes need approval")
	}
	vals := formValues(form)
	vals.Set("name", "Pay")
	vals.Set("key", "pay")
	vals.Del("reviewers") // the sole possible reviewer comes chosen already
	b.post("/flags", vals).status(http.StatusUnprocessableEntity)
	if got := b.last.text("form-error"); !strings.Contains(got, "a new flag is one even switched off") {
		t.Errorf("a flag created without a change request is refused saying %q", got)
	}
	if used, err := a.st.Flags().FlagKeyUsed(ctx, owner, env.ID, "pay"); err != nil || used {
		t.Fatalf("the refused flag was stored: %v, %v", used, err)
	}

	vals = formValues(b.last.must("flag-create-form"))
	vals.Set("name", "Pay")
	vals.Set("key", "pay")
	vals.Set("reason", "new checkout")
	vals.Set("reviewers", owner.UserID.String())
	p := b.post("/flags", vals).status(http.StatusOK)
	if !strings.HasPrefix(p.url.Path, "/change-requests/") {
		t.Fatalf("created with a change request, the page went to %s, not the change request", p.url)
	}
	if got := p.text("flash-success"); !strings.Contains(got, "“Pay” created, waiting for approval") {
		t.Errorf("the change request's page says %q", got)
	}
	if got := p.text("cr-lines"); !strings.Contains(got, "Created the flag Pay (pay)") || !strings.Contains(got, "Off variation: False (false)") {
		t.Errorf("the change request does not say what the flag will serve: %q", got)
	}
	if got := p.text("cr-reviewers"); got == "" {
		t.Error("the change request names no reviewer")
	}
	if f := a.flag(env, "pay"); !f.IsArchived {
		t.Fatalf("the flag is served before approval: %+v", f)
	}

	id, err := uuid.Parse(strings.TrimPrefix(p.url.Path, "/change-requests/"))
	must(t, err)
	_, err = a.st.Governance().ApproveFlagChangeRequest(ctx, owner, env.ID, id, governance.ReviewInput{})
	must(t, err)
	_, err = a.st.Governance().ApplyFlagChangeRequest(ctx, owner, env.ID, id)
	must(t, err)
	if f := a.flag(env, "pay"); f.IsArchived || f.IsEnabled {
		t.Fatalf("approved and applied, the flag is %+v; want it in, off", f)
	}
}

// TestBrowserNewFlagWaitsForApproval: in Chromium, a Developer creates a
// flag in Prod, whose changes need the owner's approval: the form asks for
// a reason and reviewers, and the page that follows is the change request,
// saying the flag waits for approval and what it will serve.
func TestBrowserNewFlagWaitsForApproval(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, env := daveNeedsApproval(t)
	owner := a.ownerActor()

	ch.do("sign in",
		viewport(1280),
		chromedp.Navigate(a.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-email`), "dave@example.com"),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), memberPassword),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.Navigate(a.srv.URL+"/flags"),
		chromedp.WaitVisible(chromedp.CSS(`#flag-create > summary`)),
	)
	ch.do("open the form", chromedp.Click(chromedp.CSS(`#flag-create > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#flag-create-name`)),
		chromedp.SendKeys(chromedp.CSS(`#flag-create-name`), "Pay"),
		chromedp.WaitVisible(chromedp.CSS(`#flag-create [data-testid=request-fields]`)))
	ch.do("the reason", chromedp.SendKeys(chromedp.CSS(`#flag-create-reason`), "New checkout"))
	// The owner, the one person who may review, comes chosen already.
	if got := ch.eval(`String(document.querySelector("#flag-create-reviewer-` + owner.UserID.String() + `").checked)`); got != "true" {
		t.Errorf("the sole reviewer is chosen: %s, want true", got)
	}
	ch.do("send", chromedp.Click(chromedp.CSS(`[data-testid=flag-create-submit]`)))
	ch.waitPath("^/change-requests/")
	ch.do("the change request", chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-lines]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flash-success]").textContent`); !strings.Contains(got, "waiting for approval") {
		t.Errorf("the page says %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=cr-lines]").textContent`); !strings.Contains(got, "Off variation: False (false)") {
		t.Errorf("the change request says %q", got)
	}
	if f := a.flag(env, "pay"); !f.IsArchived {
		t.Fatalf("the flag is served before approval: %+v", f)
	}
}

// TestCopyingFlagsWhereTheTargetNeedsApproval: copying a flag from Prod to
// Dev, whose changes need bob's approval, the confirm form asks for a
// change request's reason and reviewers among Dev's approvers. Without them
// the copy is refused with words, nothing copied; with them the flag comes
// into Dev archived, and the page says it waits for approval.
func TestCopyingFlagsWhereTheTargetNeedsApproval(t *testing.T) {
	t.Parallel()
	a, prod, dev := compareApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	bob := a.addMember("bob@example.com", core.OwnerPolicyID)
	a.needApproval(dev, bob)
	b := a.signedIn(ownerEmail, ownerPassword)
	copyTo := attr(b.get("/flags/banner").status(http.StatusOK).must("copy-link"), "href")
	form := b.get(copyTo + "&target=" + dev.ID.String()).status(http.StatusOK).must("copy-confirm-form")
	if find(form, "request-fields") == nil || find(form, "request-reviewers") == nil {
		t.Fatal("the copy's form does not ask for a change request where the target needs approval")
	}
	banner := a.flag(prod, "banner").ID.String()
	pg := b.post("/flags/copy", url.Values{"target": {dev.ID.String()}, "flag": {banner}}).status(http.StatusUnprocessableEntity)
	if got := pg.text("form-error"); !strings.Contains(got, "a new flag is one even switched off") {
		t.Errorf("the copy without a change request is refused saying %q", got)
	}
	if used, err := a.st.Flags().FlagKeyUsed(ctx, owner, dev.ID, "banner"); err != nil || used {
		t.Fatalf("the refused copy stored banner: %v, %v", used, err)
	}
	pg = b.post("/flags/copy", url.Values{"target": {dev.ID.String()}, "flag": {banner}, "reason": {"bring banner"},
		"reviewers": {bob.String()}}).status(http.StatusOK)
	if got := pg.text("flash-success"); !strings.Contains(got, "1 flag copied, waiting for approval there") {
		t.Errorf("after the copy the page says %q", got)
	}
	if f := a.flag(dev, "banner"); !f.IsArchived {
		t.Fatalf("the copy is served in Dev before approval: %+v", f)
	}
}

// TestDecliningOrWithdrawingANewFlag: in Prod, whose changes need the
// owner's approval, the change request of a flag a Developer created says
// that declining removes the new flag, and the owner cannot delete the
// flag around it. The owner declines it on its page:
// the flag list says the flag was removed, its key is free, and the audit
// log says why. Created again, its author withdraws it: the same.
func TestDecliningOrWithdrawingANewFlag(t *testing.T) {
	t.Parallel()
	a, env := daveNeedsApproval(t)
	ctx, owner := t.Context(), a.ownerActor()
	dave := a.signedIn("dave@example.com", memberPassword)
	create := func() *page {
		t.Helper()
		vals := formValues(dave.get("/flags").status(http.StatusOK).must("flag-create-form"))
		vals.Set("name", "Pay")
		vals.Set("key", "pay")
		vals.Set("reason", "new checkout")
		vals.Set("reviewers", owner.UserID.String())
		p := dave.post("/flags", vals).status(http.StatusOK)
		if !strings.HasPrefix(p.url.Path, "/change-requests/") {
			t.Fatalf("created with a change request, the page went to %s", p.url)
		}
		if got := p.text("cr-new-flag"); !strings.Contains(got, "Declining or withdrawing it removes the new flag") {
			t.Errorf("the new flag's change request says %q", got)
		}
		return p
	}
	gone := func(how string) {
		t.Helper()
		if used, err := a.st.Flags().FlagKeyUsed(ctx, owner, env.ID, "pay"); err != nil || used {
			t.Fatalf("%s, the flag's key is still taken: %v, %v", how, used, err)
		}
	}

	// Declined by the owner on the request's page; deleting the pending
	// flag on its own page is refused, saying its request decides.
	href := create().url.Path
	b := a.signedIn(ownerEmail, ownerPassword)
	confirm := b.get("/flags/pay/delete").status(http.StatusOK)
	b.post(confirm.formAction("confirm-form"), formValues(confirm.must("confirm-form"))).status(http.StatusUnprocessableEntity)
	if got := b.last.text("form-error"); !strings.Contains(got, "waits for the change request that brings it in") {
		t.Errorf("deleting the pending flag is refused saying %q", got)
	}
	form := b.get(href).status(http.StatusOK).must("cr-review-form")
	if got := b.last.text("cr-new-flag"); !strings.Contains(got, "Declining or withdrawing it removes the new flag") {
		t.Errorf("the reviewer is not told that declining removes the flag: %q", got)
	}
	vals := formValues(form)
	vals.Set("comment", "not this quarter")
	p := b.post(href+"/decline", vals).status(http.StatusOK)
	if p.url.Path != "/flags" {
		t.Fatalf("declined, the page went to %s, not the flag list", p.url)
	}
	if got := p.text("flash-success"); !strings.Contains(got, "declined: the new flag “pay” was removed") {
		t.Errorf("after the decline the page says %q", got)
	}
	gone("declined")
	b.get(href).status(http.StatusNotFound)
	if got := b.get("/audit-log?type=FeatureFlag").status(http.StatusOK).text("history"); !strings.Contains(got, "New flag pay was declined and removed") {
		t.Errorf("the audit log does not say the flag was declined and removed: %q", got)
	}

	// Created again under the same key, then withdrawn by its author.
	p = create()
	vals = formValues(p.must("change-request"))
	p = dave.post(p.url.Path+"/withdraw", vals).status(http.StatusOK)
	if got := p.text("flash-success"); p.url.Path != "/flags" || !strings.Contains(got, "withdrawn: the new flag “pay” was removed") {
		t.Errorf("withdrawn, the page is %s saying %q", p.url, got)
	}
	gone("withdrawn")
	if got := b.get("/audit-log?type=FeatureFlag").status(http.StatusOK).text("history"); !strings.Contains(got, "New flag pay was withdrawn and removed") {
		t.Errorf("the audit log does not say the flag was withdrawn and removed: %q", got)
	}
}

// TestBrowserDecliningANewFlag: in Chromium, bob, who approves changes in
// Prod, opens the change request of a flag the owner created there: it
// says declining removes the new flag. He declines it with a comment and
// lands on the flag list, which says the flag was removed; its key is free.
func TestBrowserDecliningANewFlag(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	bob := a.addMember("bob@example.com", core.OwnerPolicyID)
	a.needApproval(env, bob)
	created, err := a.st.Flags().CreateFlagRequesting(ctx, owner, env.ID, flagstore.FlagInput{Name: "Pay", Key: "pay",
		NewFlagRequest: flagstore.NewFlagRequest{Reason: "new checkout", Reviewers: []uuid.UUID{bob}}})
	must(t, err)

	ch.signIn(a.srv.URL, "bob@example.com", memberPassword)
	ch.do("the change request", chromedp.Navigate(a.srv.URL+"/change-requests/"+created.PendingApproval.ChangeRequestID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-new-flag]`)))
	if got := ch.eval(`document.querySelector("[data-testid=cr-new-flag]").textContent`); !strings.Contains(got, "Declining or withdrawing it removes the new flag") {
		t.Errorf("the change request says %q", got)
	}
	ch.do("decline", chromedp.SendKeys(chromedp.CSS(`#cr-comment`), "not this quarter"),
		chromedp.Click(chromedp.CSS(`[data-testid=cr-decline]`)))
	ch.waitPath("^/flags$")
	ch.do("the flag list", chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flash-success]").textContent`); !strings.Contains(got, "the new flag “pay” was removed") {
		t.Errorf("after the decline the flag list says %q", got)
	}
	if used, err := a.st.Flags().FlagKeyUsed(ctx, owner, env.ID, "pay"); err != nil || used {
		t.Fatalf("declined, the flag's key is still taken: %v, %v", used, err)
	}
}
