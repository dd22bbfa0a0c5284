package web_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// axe runs axe-core on the page as it is now and fails on serious or
// critical findings, as TestBrowserAccessibility does for whole pages: for
// states reached by clicking.
func (b *chrome) axe(state string) {
	b.t.Helper()
	script, err := json.Marshal(axeScript)
	must(b.t, err)
	b.eval(`(function(){ if (!window.axe) { (0, eval)(` + string(script) + `) }; return "ready" })()`)
	result := b.eval(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + " (" + v.help + ") at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))))`)
	var found []string
	must(b.t, json.Unmarshal([]byte(result), &found))
	for _, v := range found {
		b.t.Errorf("%s: %s", state, v)
	}
}

// waitFor polls a script until it answers want, as a person waits for an
// answer to appear; it fails with what it last answered.
func (b *chrome) waitFor(what, js, want string) {
	b.t.Helper()
	got := ""
	for range 100 {
		if got = b.eval(js); got == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("%s: got %q, want %q", what, got, want)
}

// In Chromium: the policy check answers for the unsaved statement in the
// editor without reloading or losing it; the scope picker makes a shared
// segment for one project's environments, shown checked afterwards; a form
// with several invalid fields marks them all. No state has serious axe
// findings.
func TestBrowserExpertScreens(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, web, prod := flagApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Mobile", Key: "mobile"})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), pol.ID, []access.Statement{{ID: "f", ResourceType: access.TypeFlag,
		Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/web:env/*:flag/*"}}})
	must(t, err)
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)

	// The policy's statement, made a deny in the editor and not saved, is
	// what the check answers for.
	ch.do("policy", chromedp.Navigate(a.srv.URL+"/policies/"+pol.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statements-form]`)))
	ch.eval(`window.notReloaded = "yes"; document.querySelector("[data-testid=statement-effect-deny]").click(); "ok"`)
	ch.choose(`[data-testid=check-action]`, "ToggleFlag")
	ch.choose(`[data-testid=check-resource]`, "project/web:env/prod:flag/*")
	ch.do("check", chromedp.Click(chromedp.CSS(`[data-testid=check-submit]`)))
	answer := `(document.querySelector("[data-testid=check-answer]") || {}).textContent || ""`
	ch.waitFor("the check's answer", answer,
		"Denied: Toggle flag on project/web:env/prod:flag/*, by statement 1, which denies it (a deny wins over any allow).")
	if got := ch.eval(`String(!!document.querySelector("[data-testid=check-unsaved]"))`); got != "true" {
		t.Errorf("the answer does not say the statements are unsaved")
	}
	if got := ch.eval(`String(window.notReloaded) + " " + String(document.querySelector("[data-testid=statement-effect-deny]").checked)`); got != "yes true" {
		t.Errorf("the page reloaded, or the editor lost the unsaved deny: %s", got)
	}
	if got, err := a.st.IAM().GetPolicy(t.Context(), a.ownerActor(), pol.ID); err != nil || got.Statements[0].Effect != "allow" {
		t.Errorf("the check saved the statements (%v)", err)
	}
	ch.axe("policy check of unsaved statements")
	// An empty statement is refused with each wrong field marked.
	ch.do("refuse an empty statement", chromedp.Click(chromedp.CSS(`[data-testid=statement-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement][data-index="1"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=statements-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement][data-index="1"] [data-testid=statement-problem]`)))
	if got := ch.eval(`String(document.querySelectorAll('[data-testid=statement][data-index="1"] [aria-invalid=true]').length > 1)`); got != "true" {
		t.Errorf("the refused statement's fields are not marked")
	}
	ch.axe("a refused statement")

	// A shared segment for Web's two environments, picked rather than typed.
	const org = "organization/default-organization"
	box := func(scope string) string { return fmt.Sprintf(`input[name=scopes][value=%q]`, scope) }
	ch.do("segments", chromedp.Navigate(a.srv.URL+"/segments"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-create] summary`)),
		chromedp.Click(chromedp.CSS(`[data-testid=segment-create] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#segment-create-name`)))
	ch.fill(`#segment-create-name`, "Web beta")
	ch.fill(`#segment-create-key`, "web-beta")
	ch.do("shared", chromedp.Click(chromedp.CSS(`label[for=segment-create-type-shared]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=scope-picker]`)))
	want := []string{org + ":project/web:env/" + prod.Key, org + ":project/web:env/" + web.Environments[1].Key}
	ch.axe("segment creation with the scope picker")
	ch.eval(fmt.Sprintf(`document.querySelector(%q).click(); document.querySelector(%q).click(); document.querySelector(%q).click(); "ok"`,
		box(org+":project/web:env/*"), box(want[0]), box(want[1])))
	ch.do("create segment", chromedp.Click(chromedp.CSS(`[data-testid=segment-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-heading]`)))
	list, err := a.st.Segments().ListSegments(t.Context(), a.ownerActor(), prod.ID, segments.SegmentFilter{Name: "web beta", Page: core.Page{Size: 10}})
	must(t, err)
	if len(list.Items) != 1 || list.Items[0].Type != flagstore.SegmentShared || !slices.Equal(list.Items[0].Scopes, want) {
		t.Fatalf("the segment saved: %+v, want shared in %q", list.Items, want)
	}
	// Its settings show those scopes checked, and nothing else.
	ch.do("segment settings", chromedp.Navigate(a.srv.URL+segmentPath(list.Items[0])+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=segment-scopes-form]`)))
	checked := ch.eval(`Array.from(document.querySelectorAll("[data-testid=segment-scopes-form] input[name=scopes]:checked")).map(i => i.value).join(" ")`)
	if checked != strings.Join(want, " ") {
		t.Errorf("checked scopes %q, want %q", checked, want)
	}
	ch.axe("a shared segment's scopes")

	// A new policy with no name, a bad key and too long a description:
	// all three marked at once.
	ch.do("policies", chromedp.Navigate(a.srv.URL+"/policies"), chromedp.WaitVisible(chromedp.CSS(`#policy-create-name`)))
	ch.fill(`#policy-create-key`, "bad key!")
	ch.eval(`document.querySelector("#policy-create-description").value = "x".repeat(600); "ok"`)
	ch.do("create policy", chromedp.Click(chromedp.CSS(`[data-testid=policy-create-submit]`)))
	marked := `["name", "key", "description"].map(f => {
		const i = document.querySelector("#policy-create-" + f), m = document.getElementById(i.getAttribute("aria-describedby") || "none");
		return i.getAttribute("aria-invalid") + ":" + (m ? m.textContent : "");
	}).join(" | ")`
	ch.waitFor("the fields marked", marked, "true:Required. | true:Use at most 128 letters, digits, “.”, “_” or “-”. | true:Use at most 512 characters.")
	ch.axe("a policy form with three invalid fields")
}
