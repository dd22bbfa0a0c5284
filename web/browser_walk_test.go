package web_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// What a walk through the admin application as a new user found, each
// tried again here in Chromium as that user met it.

// evaluate has SDKs report evaluating a flag now, so the list shows when
// and draws its day's trend.
func (a *app) evaluate(f flagstore.Flag, times int) {
	a.t.Helper()
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	served := make([]runner.Served, times)
	for i := range served {
		served[i] = runner.Served{Flag: &f, Variation: i % 2}
	}
	tally.Served(served, time.Now())
	must(a.t, tally.Flush(a.t.Context()))
}

// TestBrowserListToggleWithComments turns a flag on from its row where
// comments are required, by keyboard: the row drawn again still says when
// the flag was last evaluated and keeps its trend; the pop-up closes with
// the keyboard back on the switch (so a second Enter opens it rather than
// turning the flag back); and the switch's name holds the text it shows
// (axe's label-content-name-mismatch), before and after.
func TestBrowserListToggleWithComments(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, pr, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.evaluate(f, 3)
	a.requireComments(pr, env)

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	row := `[data-testid=flag-row][data-key=checkout]`
	ch.do("flags", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=flag-trend]`)))
	evaluated := func() string {
		return ch.eval(`document.querySelector("` + row + ` [data-testid=flag-last-evaluated]").textContent`)
	}
	if got := evaluated(); got == "Evaluated never" {
		t.Fatalf("before the toggle the row says %q", got)
	}
	name := func() string {
		return ch.eval(`(function(s){ return s.getAttribute("aria-label") || s.textContent.replace(/\s+/g, " ").trim() })(document.querySelector("` + row + ` [data-testid=flag-toggle]"))`)
	}
	if got := name(); got != "Off, turn on" {
		t.Errorf("the switch is named %q, want %q (what it shows, then what it does)", got, "Off, turn on")
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe with comments required: %s", strings.Join(found, "; "))
	}

	k := &keyboard{ch: ch}
	toggle := `#flag-toggle-` + f.ID.String()
	ch.do("focus the switch", chromedp.Focus(chromedp.CSS(toggle)))
	k.press(kb.Enter)
	ch.do("the pop-up", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	k.tabTo(row + ` [data-testid=comment]`)
	k.typeText("Launch")
	k.press(kb.Enter)
	ch.do("turned on", chromedp.WaitVisible(chromedp.CSS(row+` summary.switch-on`)))
	ch.waitFocus("turned on", toggle)
	if !a.flag(env, "checkout").IsEnabled {
		t.Fatalf("the flag is not on")
	}
	if got := ch.eval(`String(document.querySelector("` + row + ` [data-testid=flag-toggle-pop]").open)`); got != "false" {
		t.Errorf("the pop-up is still open after the toggle")
	}
	if got := evaluated(); got == "Evaluated never" || !strings.HasPrefix(got, "Evaluated ") {
		t.Errorf("after the toggle the row says %q, want when it was last evaluated", got)
	}
	if got := ch.eval(`String(document.querySelectorAll("` + row + ` [data-testid=flag-trend]").length)`); got != "1" {
		t.Errorf("after the toggle the row has %s trends, want 1", got)
	}
	if got := name(); got != "On, turn off" {
		t.Errorf("after the toggle the switch is named %q, want %q", got, "On, turn off")
	}
	ch.waitAnnounced("turned on", "“Checkout” turned on.")
	// A second Enter opens the pop-up again; the flag stays on.
	k.press(kb.Enter)
	ch.do("the pop-up again", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	ch.settled()
	if !a.flag(env, "checkout").IsEnabled {
		t.Errorf("a second Enter turned the flag off")
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe after the toggle: %s", strings.Join(found, "; "))
	}
}

// TestBrowserWebhookNobodyCanReach creates a webhook as a new user would:
// a refused Create webhook starts the keyboard at the first field marked
// wrong; a URL on a private address (while private networks are closed to
// webhooks) is saved with a warning that says every delivery will fail;
// and its failed test shows as a problem, not in the success banner.
func TestBrowserWebhookNobodyCanReach(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, _ := flagApp(t)
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)

	ch.do("new webhook", chromedp.Navigate(a.srv.URL+"/webhooks/new"), chromedp.WaitVisible(chromedp.CSS(`#webhook-name`)))
	ch.fill(`#webhook-url`, "http://127.0.0.1:9/hook")
	ch.do("create without a name", chromedp.Click(chromedp.CSS(`[data-testid=webhook-submit]`)))
	ch.waitPath("^/webhooks$")
	ch.waitFocus("refused", `#webhook-name`)

	ch.fill(`#webhook-name`, "Chat")
	ch.do("scope and event", chromedp.Click(chromedp.CSS(`[data-testid=webhook-scopes] input[type=checkbox]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=webhook-flag-events] input[type=checkbox]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=webhook-submit]`)))
	ch.waitPath("^/webhooks/[0-9a-f-]+$")
	ch.do("the warning", chromedp.WaitVisible(chromedp.CSS(`[data-testid=webhook-undeliverable]`)))
	if got := ch.eval(`document.querySelector("[data-testid=webhook-undeliverable]").textContent`); !strings.Contains(got, "private network address") ||
		!strings.Contains(got, "BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS") || !strings.Contains(got, "Every delivery will fail") {
		t.Errorf("the warning says %q", got)
	}

	ch.do("send a test", chromedp.Click(chromedp.CSS(`[data-testid=webhook-test]`)))
	ch.do("the problem", chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-error]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flash-error]").textContent`); !strings.HasPrefix(got, "Test failed: ") {
		t.Errorf("the problem says %q", got)
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=flash-success]").length)`); got != "0" {
		t.Errorf("a failed test shows %s success messages", got)
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe on the webhook with its warning: %s", strings.Join(found, "; "))
	}
}

// TestBrowserFocusAfterAnswers checks where the keyboard is after each
// answer that used to leave it on the page's body: Sort and Status on the
// flag list stay on their select; Test a user stays on Test; Turn on and
// off on the flag page stay on the button; Schedule and a change request
// go to the pending changes; a preset's statements to the first one added;
// a refused Add member stays on Add member.
func TestBrowserFocusAfterAnswers(t *testing.T) {
	t.Parallel()
	ch := headless(t, 240*time.Second)
	a, _, env := flagApp(t)
	for _, k := range []string{"alpha", "beta", "gamma"} {
		a.makeFlag(env, flagstore.FlagInput{Name: strings.ToUpper(k[:1]) + k[1:], Key: k})
	}
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	k := &keyboard{ch: ch}

	for _, width := range []int64{1440, 390} {
		ch.do("flags", viewport(width), chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
		for _, sel := range []string{`#flag-filter-sort`, `#flag-filter-status`} {
			before := ch.eval(`location.search`)
			ch.do("focus "+sel, chromedp.Focus(chromedp.CSS(sel)))
			k.press(kb.ArrowDown)
			ch.waitTrue("the list answered "+sel, `location.search !== `+jsString(before))
			ch.settled()
			ch.waitFocus(fmt.Sprintf("after %s at %d px", sel, width), sel)
		}
	}
	ch.do("desktop", viewport(1440))

	ch.do("a flag", chromedp.Navigate(a.srv.URL+"/flags/alpha"), chromedp.WaitVisible(chromedp.CSS(`#flag-toggle-submit`)))
	ch.do("focus the toggle", chromedp.Focus(chromedp.CSS(`#flag-toggle-submit`)))
	k.press(kb.Enter)
	ch.waitTrue("turned on", `document.querySelector("#flag-toggle-submit").textContent.trim() === "Turn off"`)
	ch.waitFocus("turned on", `#flag-toggle-submit`)
	if !a.flag(env, "alpha").IsEnabled {
		t.Errorf("alpha is not on")
	}

	ch.do("open the tester", chromedp.Click(chromedp.CSS(`[data-testid=tester-open]`)), chromedp.WaitVisible(chromedp.CSS(`#tester-keyId`)))
	ch.fill(`#tester-keyId`, "u1")
	ch.do("focus Test", chromedp.Focus(chromedp.CSS(`#tester-submit`)))
	k.press(kb.Enter)
	ch.do("tested", chromedp.WaitVisible(chromedp.CSS(`[data-testid=tester-result]`)))
	ch.waitFocus("tested", `#tester-submit`)

	ch.do("schedule", chromedp.Navigate(a.srv.URL+"/flags/alpha?edit=targeting&part=targets"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=schedule-time]`)))
	ch.do("a target", chromedp.SendKeys(chromedp.CSS(`#target-`+a.flag(env, "alpha").Variations[0].ID), "vip-1"))
	ch.do("a time", chromedp.SetValue(chromedp.CSS(`[data-testid=schedule-time]`), time.Now().UTC().Add(48*time.Hour).Format("2006-01-02T15:04")))
	ch.do("focus Schedule", chromedp.Focus(chromedp.CSS(`[data-testid=targeting-schedule]`)))
	k.press(kb.Enter)
	// Refused (it needs a title): the keyboard stays on Schedule.
	ch.do("refused", chromedp.WaitVisible(chromedp.CSS(`#targeting-title-error`)))
	ch.waitFocus("schedule refused", `#targeting-schedule`)
	ch.fill(`[data-testid=schedule-title]`, "Launch")
	ch.do("focus Schedule", chromedp.Focus(chromedp.CSS(`[data-testid=targeting-schedule]`)))
	k.press(kb.Enter)
	ch.waitFocus("scheduled", `#pending-changes-heading`)

	// A preset's statements: the keyboard goes to the first one added.
	policy, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Readers", Key: "readers"})
	must(t, err)
	ch.do("statements", chromedp.Navigate(a.srv.URL+"/policies/"+policy.ID.String()+"?tab=statements"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=preset-add]`)))
	ch.do("focus the preset's button", chromedp.Focus(chromedp.CSS(`[data-testid=preset-add]`)))
	k.press(kb.Enter)
	ch.waitFocus("preset added", `#policy-0-type`)

	// A refused Add member stays on Add member.
	ch.do("members", chromedp.Navigate(a.srv.URL+"/members"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=member-add-submit]`)))
	ch.fill(`#member-add-email`, "not an address")
	ch.do("focus Add member", chromedp.Focus(chromedp.CSS(`[data-testid=member-add-submit]`)))
	k.press(kb.Enter)
	ch.do("refused", chromedp.WaitVisible(chromedp.CSS(`#member-add .field-error`)))
	ch.waitFocus("refused", `#member-add-submit`)

	// Where changes need approval, the toggle sends a change request: the
	// keyboard goes to the pending changes, where it waits.
	reviewer := a.addMember("reviewer@example.com", core.OwnerPolicyID)
	a.needApproval(env, a.owner, reviewer)
	ch.do("a flag needing approval", chromedp.Navigate(a.srv.URL+"/flags/beta"), chromedp.WaitVisible(chromedp.CSS(`#flag-toggle-reason`)))
	ch.do("a reason", chromedp.SendKeys(chromedp.CSS(`#flag-toggle-reason`), "Launch beta"))
	ch.do("focus Request", chromedp.Focus(chromedp.CSS(`#flag-toggle-submit`)))
	k.press(kb.Enter)
	ch.waitFocus("requested", `#pending-changes-heading`)
}

// jsString quotes s for a script.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBrowserReviewElsewhere: Alice asks for a change in Prod, where Bob is
// the only other who may approve; he is chosen already, and naming nobody
// is refused in good grammar ("1 reviewer"). Bob, working in Dev, follows
// the link to the request: the page says where it is and offers to work
// there; he approves it, and is then offered only to decline it, his
// decision read "approved, <when>".
func TestBrowserReviewElsewhere(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, pr, env, _, bob := approvalApp(t)
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, "alice@example.com", memberPassword)
	form := `[data-testid=flag-toggle-form] `
	ch.do("the flag", chromedp.Navigate(a.srv.URL+"/flags/pay"), chromedp.WaitVisible(chromedp.CSS(form+`[data-testid=request-reason]`)))
	if got := ch.eval(`String(document.querySelector("` + form + `[data-testid=request-reviewers] input").checked)`); got != "true" {
		t.Errorf("the only possible reviewer is not chosen")
	}
	ch.do("name nobody", chromedp.SendKeys(chromedp.CSS(form+`[data-testid=request-reason]`), "Launch payments"),
		chromedp.Click(chromedp.CSS(form+`[data-testid=request-reviewers] input`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(form+`[data-testid=request-reviewers] .field-error`)))
	if got := ch.eval(`document.querySelector("` + form + `[data-testid=request-reviewers] .field-error").textContent`); !strings.Contains(got, "1 reviewer") || strings.Contains(got, "1 reviewers") {
		t.Errorf("naming nobody says %q", got)
	}
	ch.do("name Bob", chromedp.Click(chromedp.CSS(form+`[data-testid=request-reviewers] input`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=pending-review]`)))
	link := ch.eval(`document.querySelector("[data-testid=pending-review]").getAttribute("href")`)
	ch.do("sign out", chromedp.Click(chromedp.CSS(`[data-testid=logout]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))

	// Bob works in Dev.
	bobActor, err := a.st.IAM().UserActor(t.Context(), bob, a.wsID.String(), a.orgID.String())
	must(t, err)
	dev := pr.Environments[1]
	_, err = a.st.IAM().SetUserContext(t.Context(), bobActor, core.UserContext{OrganizationID: a.orgID, ProjectID: pr.ID, EnvID: dev.ID})
	must(t, err)
	ch.signIn(a.srv.URL, "bob@example.com", memberPassword)
	ch.do("the request", chromedp.Navigate(a.srv.URL+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-approve]`)))
	if got := ch.eval(`document.querySelector("[data-testid=cr-elsewhere]").textContent`); !strings.Contains(got, "Web / "+env.Name) {
		t.Errorf("the page says %q, want where the request is", got)
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe on the request: %s", strings.Join(found, "; "))
	}
	ch.do("approve", chromedp.Click(chromedp.CSS(`[data-testid=cr-approve]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-decided]`)))
	if got := ch.eval(`document.querySelector("[data-testid=cr-status]").textContent`); got != "Approved" {
		t.Errorf("after approving the status is %q", got)
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=cr-approve]").length)`); got != "0" {
		t.Errorf("Approve is still offered after approving")
	}
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=cr-decline]").length)`); got != "1" {
		t.Errorf("Decline is not offered after approving")
	}
	line := ch.eval(`document.querySelector("[data-testid=cr-reviewer]").textContent.replace(/\s+/g, " ").trim()`)
	if !strings.HasPrefix(line, "bob@example.com: approved, 20") || strings.Contains(line, " ,") {
		t.Errorf("the reviewer's line reads %q, want %q", line, "bob@example.com: approved, <when>")
	}
	if got := ch.eval(`document.querySelector("[data-testid=cr-approvals]").textContent`); got != "1 of 1 approval needed" {
		t.Errorf("the approvals read %q", got)
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe after approving: %s", strings.Join(found, "; "))
	}
	// Work there: the switch opens the same request in its environment.
	// The request's heading is on the page before the switch too: wait for
	// the note that the request is elsewhere to go, which the switched page
	// no longer has.
	ch.do("work there", chromedp.Click(chromedp.CSS(`[data-testid=cr-switch-env]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=cr-elsewhere]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-heading]`)))
	ch.waitPath("^/change-requests/")
}

// TestBrowserWalkSmallThings: a rollout that does not add up says so once,
// by the percentages it marks; the first-run guide goes on to its next step
// after a flag is created, and its snippets scroll by keyboard on a phone;
// the comparison keeps its part names on a phone; a flag evaluated once
// says "1 time".
func TestBrowserWalkSmallThings(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, pr, env := flagApp(t)
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)

	// The guide: no flag yet; creating one goes on to step 3.
	ch.do("the guide", chromedp.Navigate(a.srv.URL+"/get-started"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=guide-flag-form]`)))
	ch.fill(`#guide-flag-name`, "Checkout")
	ch.do("create the flag", chromedp.Click(chromedp.CSS(`[data-testid=guide-flag-submit]`)))
	ch.waitPath(`^/get-started$`)
	ch.waitFocus("flag created", `#guide-step-connect`)
	for _, width := range []int64{390, 1440} {
		ch.do("snippets", viewport(width), chromedp.Navigate(a.srv.URL+"/get-started?sdk=js"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=snippet-code]`)))
		if got := ch.eval(`[...document.querySelectorAll(".snippet pre")].filter(p => p.scrollWidth > p.clientWidth && p.tabIndex !== 0).length + ""`); got != "0" {
			t.Errorf("at %d px %s snippets scroll sideways but take no keyboard", width, got)
		}
		if found := ch.axeSerious(); len(found) > 0 {
			t.Errorf("axe on the guide at %d px: %s", width, strings.Join(found, "; "))
		}
	}

	// A rollout of 30% and 60%: one message, the percentages marked.
	f := a.flag(env, "checkout")
	ch.do("rules", viewport(1440), chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting&part=rules"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule-add]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=rule-add]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule] [data-testid=condition-property]`)))
	ch.settled()
	ch.fill(`[data-testid=rule] [data-testid=condition-property]`, "country")
	ch.fill(`[data-testid=rule] [data-testid=condition-value]`, "nl")
	ch.choose(`[data-testid=rule] [data-testid=serve-choice]`, "rollout")
	ch.fill(`[data-testid=rule] input[name$=".pct.`+f.Variations[0].ID+`"]`, "30")
	ch.fill(`[data-testid=rule] input[name$=".pct.`+f.Variations[1].ID+`"]`, "60")
	ch.do("save", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=rule] [data-testid=serve-error]`)))
	ch.settled()
	said := ch.eval(`[...document.querySelectorAll("[data-testid=rule] .field-error")].filter(e => e.offsetParent !== null).map(e => e.textContent).join(" | ")`)
	if strings.Count(said, "100") != 1 {
		t.Errorf("the rollout's problem is said %d times: %s", strings.Count(said, "100"), said)
	}
	marked := ch.eval(`[...document.querySelectorAll("[data-testid=rule] [data-testid=rollout-percent]")].map(i => i.getAttribute("aria-invalid") + ":" + (document.getElementById(i.getAttribute("aria-describedby")) || {textContent: "nothing"}).textContent).join(" | ")`)
	if strings.Count(marked, "true:The percentages add up to 90%") != 2 {
		t.Errorf("the percentages are marked %q, want both invalid and described by the problem", marked)
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe with the rollout refused: %s", strings.Join(found, "; "))
	}
	ch.fill(`[data-testid=rule] input[name$=".pct.`+f.Variations[1].ID+`"]`, "70")
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=rule] [aria-invalid]").length)`); got != "0" {
		t.Errorf("%s fields stay marked once the rollout adds up", got)
	}
	ch.do("leave the editor", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))

	// Evaluated once.
	a.evaluate(a.flag(env, "checkout"), 1)
	ch.do("the flag", chromedp.Navigate(a.srv.URL+"/flags/checkout"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-evaluated]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-evaluated]").textContent`); !strings.HasSuffix(got, ", 1 time") {
		t.Errorf("a flag evaluated once says %q", got)
	}

	// The comparison on a phone names each part beside its state.
	a.makeFlag(pr.Environments[1], flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	ch.do("compare", viewport(390), chromedp.Navigate(a.srv.URL+"/flags/compare?target="+pr.Environments[1].ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-part]`)))
	parts := ch.eval(`[...document.querySelectorAll("[data-testid=compare-row][data-key=checkout] [data-testid=compare-part]")].map(td => td.innerText.replace(/\s+/g, " ").trim()).join(" | ")`)
	for _, part := range strings.Split(parts, " | ") {
		if !strings.HasSuffix(part, "Differs") && !strings.HasSuffix(part, "Same") || part == "Differs" || part == "Same" {
			t.Errorf("at 390 px a part reads %q, want its name and its state (all: %s)", part, parts)
		}
	}
	if found := ch.axeSerious(); len(found) > 0 {
		t.Errorf("axe on the comparison at 390 px: %s", strings.Join(found, "; "))
	}
}
