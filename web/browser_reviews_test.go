package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// TestBrowserReviewsInbox: Alice asks Bob to review a change in Prod while
// Bob works in Dev, whose changes need no approval. Every page's top bar
// counts the request, the Reviews inbox lists it with its flag,
// environment, requester and age, and its Review button opens it in Prod.
// Once Bob approves it, the count is gone.
func TestBrowserReviewsInbox(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, pr, prod, alice, bob := approvalApp(t)
	dev := pr.Environments[1]
	ctx := t.Context()
	aliceActor, err := a.st.IAM().UserActor(ctx, alice, a.wsID.String(), a.orgID.String())
	must(t, err)
	on := true
	cr, err := a.st.Governance().CreateFlagChangeRequest(ctx, aliceActor, prod.ID, "pay", flagstore.FlagChangeRequestInput{IsEnabled: &on,
		Reason: "Launch payments", Reviewers: []uuid.UUID{bob}})
	must(t, err)
	bobActor, err := a.st.IAM().UserActor(ctx, bob, a.wsID.String(), a.orgID.String())
	must(t, err)
	_, err = a.st.IAM().SetUserContext(ctx, bobActor, core.UserContext{OrganizationID: a.orgID, ProjectID: pr.ID, EnvID: dev.ID})
	must(t, err)

	base := a.srv.URL
	ch.do("desktop", viewport(1280))
	ch.signIn(base, "bob@example.com", memberPassword)
	ch.do("Bob's flags in Dev", chromedp.Navigate(base+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=topbar-reviews]`)))
	if got := ch.eval(`document.querySelector("[data-testid=topbar-reviews-count]").textContent`); got != "1" {
		t.Fatalf("the top bar counts %q reviews, want 1", got)
	}
	if got := ch.eval(`document.querySelector("#switch-env option:checked").textContent`); got != "Web / Dev" {
		t.Fatalf("Bob works in %q, want Web / Dev", got)
	}
	ch.do("open the inbox", chromedp.Click(chromedp.CSS(`[data-testid=topbar-reviews]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=reviews-item]`)))
	ch.waitPath(`^/reviews$`)
	row := ch.eval(`[...document.querySelectorAll("[data-testid=reviews-item] td")].map(e => e.innerText.trim()).join(" | ")`)
	for _, want := range []string{"Pay", "Launch payments", "Web / Prod", "alice@example.com", "just now"} {
		if !strings.Contains(row, want) {
			t.Errorf("the inbox row %q does not show %q", row, want)
		}
	}
	if n := ch.eval(`String(document.querySelectorAll("[data-testid=reviews-item]").length)`); n != "1" {
		t.Fatalf("the inbox lists %s requests, want 1", n)
	}
	ch.do("review it", chromedp.Click(chromedp.CSS(`[data-testid=reviews-open]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-lines]`)))
	ch.waitPath(`^/change-requests/` + cr.ID.String() + `$`)
	if got := ch.eval(`document.querySelector("#switch-env option:checked").textContent`); got != "Web / Prod" {
		t.Errorf("reviewing works in %q, want Web / Prod", got)
	}
	ch.do("approve", chromedp.Click(chromedp.CSS(`[data-testid=cr-approve]`)))
	ch.waitTrue("the request approved", `(document.querySelector("[data-testid=cr-status]") || {}).textContent === "Approved"`)
	ch.do("the inbox again", chromedp.Navigate(base+"/reviews"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=reviews-empty]`)))
	if ch.eval(`String(document.querySelector("[data-testid=topbar-reviews]") === null)`) != "true" {
		t.Error("the top bar still counts a review after approving it")
	}
}

// TestReviewsInboxReadable: a link to a request by its id alone (as a
// Slack message has it) opens it in the working environment and offers to
// switch from another; the inbox, the count and the link leave out a
// request in an environment the reviewer may no longer read.
func TestReviewsInboxReadable(t *testing.T) {
	t.Parallel()
	a, pr, prod, alice, bob := approvalApp(t)
	ctx := t.Context()
	aliceActor, err := a.st.IAM().UserActor(ctx, alice, a.wsID.String(), a.orgID.String())
	must(t, err)
	on := true
	cr, err := a.st.Governance().CreateFlagChangeRequest(ctx, aliceActor, prod.ID, "pay", flagstore.FlagChangeRequestInput{IsEnabled: &on,
		Reason: "Launch payments", Reviewers: []uuid.UUID{bob}})
	must(t, err)
	b := a.signedIn("bob@example.com", memberPassword)
	if got := b.get("/reviews").status(http.StatusOK).text("topbar-reviews-count"); got != "1" {
		t.Fatalf("Bob's count: %q, want 1", got)
	}
	// A message's link names the request alone: in the working environment
	// it opens, elsewhere it offers to switch there.
	link := "/reviews/" + cr.ID.String()
	b.get(link).status(http.StatusOK).at("/change-requests/" + cr.ID.String())
	bobActor, err := a.st.IAM().UserActor(ctx, bob, a.wsID.String(), a.orgID.String())
	must(t, err)
	_, err = a.st.IAM().SetUserContext(ctx, bobActor, core.UserContext{OrganizationID: a.orgID, ProjectID: pr.ID, EnvID: pr.Environments[1].ID})
	must(t, err)
	if got := b.get(link).status(http.StatusOK).at(link).text("review-elsewhere-open"); got != "Open it in Web / Prod" {
		t.Fatalf("the link from Dev offers %q", got)
	}
	// Bob keeps only a policy that reads Dev.
	owner := a.ownerActor()
	devOnly, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Dev reader", Key: "dev-reader"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, devOnly.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/dev"}},
	})
	must(t, err)
	must(t, a.st.IAM().AddMemberPolicy(ctx, owner, bob, devOnly.ID))
	must(t, a.st.IAM().RemoveMemberPolicy(ctx, owner, bob, core.OwnerPolicyID))
	page := a.signedIn("bob@example.com", memberPassword).get("/reviews").status(http.StatusOK)
	if page.has("reviews-item") || page.has("topbar-reviews") {
		t.Fatal("a request in an environment Bob may not read is listed")
	}
	a.signedIn("bob@example.com", memberPassword).get(link).status(http.StatusNotFound)
}
