package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// callTrigger runs a trigger by its URL's token, as the API does when an
// alerting system posts to it, and answers the status the API would.
func (a *app) callTrigger(u string) int {
	a.t.Helper()
	token := u[strings.LastIndex(u, "/")+1:]
	if _, err := a.st.Governance().RunTrigger(context.Background(), token, func(uuid.UUID) bool { return true }); err != nil {
		return core.Classify(err).Status
	}
	return http.StatusOK
}

// Without script: a trigger is made on the flag's Triggers tab, its URL is
// shown once (with a command calling it), and it is disabled, enabled,
// reset and deleted with plain forms.
func TestFlagTriggersPage(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/flags/checkout/triggers").status(http.StatusOK)
	if !p.has("triggers-empty") || !p.has("trigger-create") || p.has("trigger-created") {
		t.Fatalf("empty triggers tab: %s", p.body)
	}
	vals := formValues(p.must("trigger-create"))
	if vals.Get("action") != governance.TriggerTurnOff {
		t.Errorf("the form offers %q first, want turn-off", vals.Get("action"))
	}
	vals.Set("description", "PagerDuty checkout")
	p = b.post("/flags/checkout/triggers", vals).status(http.StatusOK)
	u := attr(p.must("trigger-url"), "value")
	token := strings.TrimPrefix(u, "http://bunting.test/api/v1/triggers/run/")
	if len(token) != 40 || attr(p.must("trigger-curl"), "value") != "curl -X POST "+u {
		t.Fatalf("shown URL %q, command %q", u, attr(p.must("trigger-curl"), "value"))
	}
	row := p.row("trigger-row", "data-testid", "trigger-row")
	if text(find(row, "trigger-name")) != "PagerDuty checkout" || text(find(row, "trigger-token")) != token[:5]+strings.Repeat("*", 35) ||
		text(find(row, "trigger-action")) != "Turns off" || text(find(row, "trigger-last")) != "Never" {
		t.Errorf("row: %s", p.body)
	}
	// Shown once: the tab opened again has no URL.
	p = b.get("/flags/checkout/triggers")
	if p.has("trigger-created") || strings.Contains(p.body, token) {
		t.Fatal("the trigger's URL is shown again")
	}

	if got := a.callTrigger(u); got != http.StatusOK {
		t.Fatalf("calling the URL: %d", got)
	}
	if a.flag(env, "checkout").IsEnabled {
		t.Fatal("the flag is still on")
	}
	p = b.get("/flags/checkout/triggers")
	row = p.row("trigger-row", "data-testid", "trigger-row")
	if text(find(row, "trigger-count")) != "1" || text(find(row, "trigger-last")) == "Never" {
		t.Errorf("after one call: count %q, last %q", text(find(row, "trigger-count")), text(find(row, "trigger-last")))
	}
	// The flag's history names the trigger.
	if h := b.get("/flags/checkout/history"); !strings.Contains(h.body, "Turned off by trigger “PagerDuty checkout”") {
		t.Errorf("history does not name the trigger: %s", h.body)
	}

	// Disable: the URL answers 404; enable: it works again.
	form := find(row, "trigger-disable").Parent
	b.post(attr(form, "action"), formValues(form)).status(http.StatusOK).at("/flags/checkout/triggers")
	if !strings.Contains(b.last.text("flash-success"), "disabled") || a.callTrigger(u) != http.StatusNotFound {
		t.Errorf("disabled: %q", b.last.text("flash-success"))
	}
	row = b.last.row("trigger-row", "data-testid", "trigger-row")
	form = find(row, "trigger-enable").Parent
	b.post(attr(form, "action"), formValues(form)).status(http.StatusOK)
	if got := a.callTrigger(u); got != http.StatusOK {
		t.Errorf("enabled again: %d", got)
	}

	// Reset: a new URL shown once, the old one gone.
	row = b.last.row("trigger-row", "data-testid", "trigger-row")
	form = find(row, "trigger-reset").Parent
	p = b.post(attr(form, "action"), formValues(form)).status(http.StatusOK)
	fresh := attr(p.must("trigger-url"), "value")
	if fresh == u || a.callTrigger(u) != http.StatusNotFound || a.callTrigger(fresh) != http.StatusOK {
		t.Errorf("after reset: old %s, new %s", u, fresh)
	}

	// Delete.
	row = p.row("trigger-row", "data-testid", "trigger-row")
	form = find(row, "trigger-delete").Parent
	b.post(attr(form, "action"), formValues(form)).status(http.StatusOK).at("/flags/checkout/triggers")
	if !b.last.has("triggers-empty") || a.callTrigger(fresh) != http.StatusNotFound {
		t.Errorf("after delete: %s", b.last.body)
	}

	// A bad action is named on the form, which keeps what was typed.
	p = b.post("/flags/checkout/triggers", url.Values{"action": {"explode"}, "description": {"x"}}).status(http.StatusBadRequest)
	if p.has("trigger-created") || attr(input(p.must("trigger-create"), "description"), "value") != "x" {
		t.Errorf("refused form: %s", p.body)
	}
}

// A member who may read flags but not toggle them sees the triggers, with
// no way to make or change one; the store refuses a forged post.
func TestFlagTriggersFollowPermissions(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	_, err := a.st.Governance().CreateTrigger(t.Context(), a.ownerActor(), governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral, Action: governance.TriggerTurnOn})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Readers", Key: "readers"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), pol.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}}})
	must(t, err)
	a.addMember("reader@example.com", pol.ID)
	b := a.signedIn("reader@example.com", memberPassword)
	p := b.get("/flags/checkout/triggers").status(http.StatusOK)
	if len(p.findAll("trigger-row")) != 1 || p.has("trigger-create") || p.has("trigger-disable") || p.has("trigger-reset") || p.has("trigger-delete") {
		t.Fatalf("reader's triggers tab: %s", p.body)
	}
	b.post("/flags/checkout/triggers", url.Values{"action": {"turn-off"}}).status(http.StatusForbidden)
}
