package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// TestBrowserTriggersTableFits: at 1440 px the triggers table stays inside
// its card however long a trigger's description is; the masked token is
// cut short with its whole text in its title.
func TestBrowserTriggersTableFits(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	long := "PagerDuty-checkout-latency-alert-for-the-eu-west-1-region-payment-service-primary-and-secondary-" + strings.Repeat("x", 120)
	for _, d := range []string{"Checkout alert", long, ""} {
		_, err := a.st.Governance().CreateTrigger(ctx, owner, governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral,
			Action: governance.TriggerTurnOff, Description: d})
		must(t, err)
	}
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the triggers", chromedp.Navigate(a.srv.URL+"/flags/checkout/triggers"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=trigger-table]`)))
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=trigger-row]").length)`); got != "3" {
		t.Fatalf("%s triggers listed, want 3", got)
	}
	fit := ch.eval(`(function(){var t=document.querySelector("[data-testid=trigger-table]"), w=t.parentElement;
		return t.scrollWidth + " <= " + w.clientWidth + ": " + String(t.scrollWidth <= w.clientWidth && document.documentElement.scrollWidth <= document.documentElement.clientWidth)})()`)
	if !strings.HasSuffix(fit, "true") {
		t.Errorf("the triggers table overflows its card at 1440 px: %s", fit)
	}
	token := ch.eval(`(function(){var c=document.querySelector("[data-testid=trigger-token]");
		return c.getAttribute("title") + "|" + String(c.textContent === c.getAttribute("title") && c.getAttribute("title").length === 40)})()`)
	if !strings.HasSuffix(token, "|true") {
		t.Errorf("the token's whole text is not in its title: %q", token)
	}
}

// TestBrowserEnvironmentKeyIsFixed: the environment's settings show the key
// as text with why it cannot change, post no key, and save the rest.
func TestBrowserEnvironmentKeyIsFixed(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, web, env := flagApp(t)
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	href := "/projects/" + web.ID.String() + "/envs/" + env.ID.String()
	ch.do("open the environment", chromedp.Navigate(a.srv.URL+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid=env-settings-form]`)))
	got := ch.eval(`(function(){var f=document.querySelector("[data-testid=env-settings-form]");
		return [document.querySelector("[data-testid=env-key-value]").textContent, String(f.elements.namedItem("key")),
			String(document.querySelector("[data-testid=env-key]").textContent.includes("Fixed once the environment exists"))].join("|")})()`)
	if got != env.Key+"|null|true" {
		t.Errorf("the key field: %q, want the key as text, no key input, and why", got)
	}
	ch.fill(`#env-settings-name`, "Production")
	ch.do("save", chromedp.Click(chromedp.CSS(`[data-testid=env-settings-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	pr := a.project("web")
	for _, e := range pr.Environments {
		if e.ID == env.ID && (e.Name != "Production" || e.Key != env.Key) {
			t.Errorf("after saving: %s (%s), want Production (%s)", e.Name, e.Key, env.Key)
		}
	}
	if got := ch.eval(`document.querySelector("[data-testid=env-key-value]").textContent`); got != env.Key {
		t.Errorf("the key after saving: %q", got)
	}
}

// TestBrowserAuditLogNamesKinds: the audit log names every kind of change
// in words, never by its inner name, and filters by each kind it holds.
func TestBrowserAuditLogNamesKinds(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	a.makeSegment(env, "Beta testers", "beta")
	_, err := a.st.Governance().CreateTrigger(ctx, owner, governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral,
		Action: governance.TriggerTurnOff, Description: "Checkout alert"})
	must(t, err)

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the audit log", chromedp.Navigate(a.srv.URL+"/audit-log"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=history-entry]`)))
	types := ch.eval(`[...document.querySelectorAll("[data-testid=audit-type] option")].map(o => o.textContent).join(",")`)
	if want := "All changes,Feature flags,Segments,Change requests,Scheduled changes,Triggers,Code references,End users,End-user properties,Experiments,Experiment metrics"; types != want {
		t.Errorf("type filter offers %q, want %q", types, want)
	}
	kinds := ch.eval(`[...document.querySelectorAll("[data-testid=history-entry] .history-head > .meta")].map(e => e.textContent).join(",")`)
	if kinds != "Trigger,Segment,Feature flag" {
		t.Errorf("entries are of kinds %q, want Trigger,Segment,Feature flag", kinds)
	}
	body := ch.eval(`document.querySelector("main").innerText`)
	for _, inner := range []string{"FlagTrigger", "FeatureFlag", "FlagChangeRequest", "FlagSchedule"} {
		if strings.Contains(body, inner) {
			t.Errorf("the page shows the inner name %s", inner)
		}
	}
	ch.choose(`[data-testid=audit-type]`, "FlagTrigger")
	ch.do("only triggers", chromedp.WaitNotPresent(chromedp.CSS(`a[data-testid=history-name]`)))
	ch.waitPath(`^/audit-log$`)
	names := ch.eval(`[...document.querySelectorAll("[data-testid=history-name]")].map(e => e.textContent).join(",")`)
	if names != "“Checkout alert” on checkout" {
		t.Errorf("triggers' entries name %q", names)
	}
}

// TestBrowserWordsAndFields: action names keep their acronyms in the
// statement editor's lists, the organization's deletion counts its members
// in good grammar, and the scheduled change's time field looks like the
// other fields.
func TestBrowserWordsAndFields(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	policy, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	createOrganization(t, a, "Second", "second", true) // so this one may be deleted

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the policy", chromedp.Navigate(a.srv.URL+"/policies/"+policy.ID.String()+"?tab=statements"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=check-action]`)))
	labels := ch.eval(`[...document.querySelectorAll("[data-testid=check-action] option")].map(o => o.textContent).join("|")`)
	for _, want := range []string{"Update workspace SSO settings", "Can manage IAM"} {
		if !strings.Contains("|"+labels+"|", "|"+want+"|") {
			t.Errorf("the actions lack %q: %s", want, labels)
		}
	}
	if strings.Contains(labels, "s s o") {
		t.Errorf("an acronym is spelled out letter by letter: %s", labels)
	}

	consequence := func() string {
		return ch.eval(`[...document.querySelectorAll("[data-testid=delete-consequences] li")].map(l => l.textContent).find(l => l.startsWith("Its ")) || ""`)
	}
	ch.do("delete the organization?", chromedp.Navigate(a.srv.URL+"/organization/delete"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=delete-consequences]`)))
	if got := consequence(); !strings.HasPrefix(got, "Its 1 member loses access to it;") {
		t.Errorf("with one member: %q", got)
	}
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	a.addMember("qa@example.com", core.DeveloperPolicyID)
	ch.do("again", chromedp.Navigate(a.srv.URL+"/organization/delete"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=delete-consequences]`)))
	if got := consequence(); !strings.HasPrefix(got, "Its 3 members lose access to it;") {
		t.Errorf("with three members: %q", got)
	}

	ch.do("schedule a change", chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=schedule-fields]`)))
	style := func(el string) string {
		return ch.eval(`(function(){var s=getComputedStyle(` + el + `);
			return [s.borderTopWidth, s.borderTopStyle, s.borderTopColor, s.borderRadius, s.paddingLeft, s.fontSize, s.backgroundColor].join(" ")})()`)
	}
	timeField := `document.querySelector("[data-testid=schedule-time]")`
	if got, want := style(timeField), style(timeField+`.form.querySelector("[data-testid=comment]")`); got != want {
		t.Errorf("the time field is styled %q, the text fields %q", got, want)
	}
}
