package web_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Each preset of the statement editor grants exactly what it says: a
// member holding only that policy may do it, and not the neighbouring
// things (another environment or project, the IAM pages).
func TestPolicyPresetsGrantWhatTheySay(t *testing.T) {
	t.Parallel()
	a, web, prod := flagApp(t)
	dev := web.Environments[1]
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Shop", Key: "shop"})
	must(t, err)
	shop := a.project("shop").Environments[0]
	for _, env := range []core.Environment{prod, dev, shop} {
		a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	}
	b := a.signedIn(ownerEmail, ownerPassword)

	// preset makes a policy through the editor: the preset's statements,
	// then saved.
	preset := func(key string, choice url.Values) uuid.UUID {
		t.Helper()
		pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: key, Key: key})
		must(t, err)
		href := "/policies/" + pol.ID.String()
		p := b.get(href).status(http.StatusOK)
		vals := formValues(p.must("statements-form"))
		for k, v := range choice {
			vals[k] = v
		}
		vals.Set("op", "preset")
		p = b.post(href+"/statements", vals).status(http.StatusOK)
		if p.has("statement-hint") {
			t.Errorf("%s: a preset's statements need more: %s", key, p.text("statement-hint"))
		}
		vals = formValues(p.must("statements-form"))
		vals.Set("op", "save")
		b.post(href+"/statements", vals).status(http.StatusOK)
		saved, err := a.st.IAM().GetPolicy(t.Context(), a.ownerActor(), pol.ID)
		must(t, err)
		if len(saved.Statements) == 0 {
			t.Fatalf("%s: no statements saved", key)
		}
		return pol.ID
	}
	// can tells whether the member may toggle the flag of an environment.
	toggles := func(m *core.Actor, env core.Environment) bool {
		_, err := a.st.Flags().ToggleFlag(t.Context(), m, env.ID, "checkout", true, flagstore.Change{})
		if err != nil && !errors.Is(err, core.ErrForbidden) && !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("toggle: %v", err)
		}
		return err == nil
	}
	reads := func(m *core.Actor, env core.Environment) bool {
		_, err := a.st.Flags().GetFlag(t.Context(), m, env.ID, "checkout")
		return err == nil
	}
	member := func(email string, policy uuid.UUID) (*core.Actor, *browser) {
		id := a.addMember(email, policy)
		act, err := a.st.IAM().UserActor(t.Context(), id, a.wsID.String(), a.orgID.String())
		must(t, err)
		return act, a.signedIn(email, memberPassword)
	}

	readOnly := preset("read-web", url.Values{"preset": {"read-project"}, "preset-project": {"web"}})
	m, mb := member("reader@example.com", readOnly)
	if !reads(m, prod) || !reads(m, dev) || reads(m, shop) || toggles(m, prod) {
		t.Errorf("read-only on web: reads prod %v, dev %v, shop %v; toggles prod %v", reads(m, prod), reads(m, dev), reads(m, shop), toggles(m, prod))
	}
	if p := mb.get("/flags/checkout").status(http.StatusOK); p.has("summary-edit") || p.has("flag-toggle") {
		t.Errorf("a read-only member is offered changes")
	}
	mb.get("/members").status(http.StatusForbidden)

	editProd := preset("edit-web-prod", url.Values{"preset": {"edit-env"}, "preset-env": {"web/prod"}})
	m, mb = member("editor@example.com", editProd)
	if !toggles(m, prod) || toggles(m, dev) || toggles(m, shop) || !reads(m, prod) || reads(m, dev) {
		t.Errorf("edit web/prod: toggles prod %v, dev %v, shop %v; reads dev %v", toggles(m, prod), toggles(m, dev), toggles(m, shop), reads(m, dev))
	}
	if _, err := a.st.Flags().CreateFlag(t.Context(), m, prod.ID, flagstore.FlagInput{Name: "New", Key: "new"}); err != nil {
		t.Errorf("edit web/prod cannot create a flag there: %v", err)
	}
	if _, err := a.st.Projects().UpdateEnvironment(t.Context(), m, web.ID, prod.ID, core.EnvironmentInput{Name: "Renamed"}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("edit web/prod may change the environment's settings: %v", err)
	}
	if p := mb.get("/flags/checkout").status(http.StatusOK); !p.has("summary-edit") {
		t.Errorf("an editor of Prod is not offered its targeting")
	}
	mb.get("/members").status(http.StatusForbidden)

	everything := preset("all-web", url.Values{"preset": {"all-project"}, "preset-project": {"web"}})
	m, _ = member("lead@example.com", everything)
	if !toggles(m, prod) || !toggles(m, dev) || toggles(m, shop) {
		t.Errorf("everything in web: toggles prod %v, dev %v, shop %v", toggles(m, prod), toggles(m, dev), toggles(m, shop))
	}
	if _, err := a.st.Projects().UpdateEnvironment(t.Context(), m, web.ID, dev.ID, core.EnvironmentInput{Name: "Development"}); err != nil {
		t.Errorf("everything in web cannot rename its environment: %v", err)
	}
	if !m.Can(access.CreateEnv, core.ProjectRN("web")) || m.Can(access.CreateEnv, core.ProjectRN("shop")) || m.Can(access.CanManageIAM, core.IAMRN) {
		t.Errorf("everything in web: create env in web %v, in shop %v; IAM %v", m.Can(access.CreateEnv, core.ProjectRN("web")),
			m.Can(access.CreateEnv, core.ProjectRN("shop")), m.Can(access.CanManageIAM, core.IAMRN))
	}

	iam := preset("iam", url.Values{"preset": {"iam"}})
	m, mb = member("admin@example.com", iam)
	mb.get("/members").status(http.StatusOK)
	mb.post("/members", url.Values{"email": {"new@example.com"}}).status(http.StatusOK)
	if reads(m, prod) || toggles(m, prod) {
		t.Errorf("manage members reads or changes flags")
	}
}

// A hand-built flag statement says it needs "Can access project/env"; the
// "what does this allow?" panel answers for a pair and names the statement.
func TestStatementHintsAndAccessCheck(t *testing.T) {
	t.Parallel()
	a, _, _ := flagApp(t)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), pol.ID, []access.Statement{
		{ID: "f", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/*:flag/*"}},
		{ID: "d", ResourceType: access.TypeFlag, Effect: "deny", Actions: []string{"DeleteFlag"}, Resources: []string{"project/web:env/prod:flag/*"}},
	})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	href := "/policies/" + pol.ID.String()
	p := b.get(href).status(http.StatusOK)
	if got := p.text("statement-hint"); !strings.Contains(got, "“Can access project” and “Can access env”") {
		t.Errorf("hint %q", got)
	}
	for q, want := range map[string]string{
		"ToggleFlag&check-resource=project/web:env/dev:flag/*":  "Allowed: Toggle flag on project/web:env/dev:flag/*, by statement 1.",
		"DeleteFlag&check-resource=project/web:env/prod:flag/*": "Denied: Delete flag on project/web:env/prod:flag/*, by statement 2, which denies it (a deny wins over any allow).",
		"CanManageIAM&check-resource=iam/*":                     "Denied: Can manage IAM on iam/*. No statement speaks about it, and what is not allowed is denied.",
		"NoSuchAction&check-resource=iam/*":                     "Choose an action and a resource from the lists.",
	} {
		if got := b.get(href + "?tab=statements&check-action=" + q).status(http.StatusOK).text("check-answer"); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}

// "What does this allow?" answers for the statements in the editor, saved
// or not, says when they are unsaved, and saves nothing; with script only
// the answer comes back, without it the editor as it was posted.
func TestAccessCheckAnswersForTheEditor(t *testing.T) {
	t.Parallel()
	a, _, _ := flagApp(t)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	saved := []access.Statement{{ID: "f", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/web:env/*:flag/*"}}}
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), pol.ID, saved)
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	href := "/policies/" + pol.ID.String()
	p := b.get(href).status(http.StatusOK)
	vals := formValues(p.must("statements-form"))
	vals.Set("check-action", "ToggleFlag")
	vals.Set("check-resource", "project/web:env/dev:flag/*")

	// As saved: allowed, and nothing is unsaved.
	ans := b.htmx(href+"/check", vals).status(http.StatusOK)
	if got, want := ans.text("check-answer"), "Allowed: Toggle flag on project/web:env/dev:flag/*, by statement 1."; got != want {
		t.Errorf("saved statements: %q, want %q", got, want)
	}
	if ans.has("check-unsaved") || ans.has("statement-editor") {
		t.Errorf("the answer for saved statements says they are unsaved, or carries the editor")
	}

	// The editor's statement now denies: its answer, marked unsaved.
	vals.Set("st-0-effect", "deny")
	ans = b.htmx(href+"/check", vals).status(http.StatusOK)
	if got, want := ans.text("check-answer"), "Denied: Toggle flag on project/web:env/dev:flag/*, by statement 1, which denies it (a deny wins over any allow)."; got != want {
		t.Errorf("unsaved statements: %q, want %q", got, want)
	}
	if !ans.has("check-unsaved") {
		t.Errorf("the answer does not say the statements are unsaved")
	}
	// Without script: the page again, the editor as posted, with the answer.
	vals.Set("op", "check")
	page := b.post(href+"/statements", vals).status(http.StatusOK)
	if n := input(page.must("statements-form"), "st-0-effect"); n == nil || !strings.Contains(page.body, `value="deny" checked`) {
		t.Errorf("the editor lost the unsaved effect")
	}
	if !page.has("check-unsaved") || !strings.HasPrefix(page.text("check-answer"), "Denied:") {
		t.Errorf("no answer for the unsaved statements: %q", page.text("check-answer"))
	}
	got, err := a.st.IAM().GetPolicy(t.Context(), a.ownerActor(), pol.ID)
	must(t, err)
	if got.Statements[0].Effect != "allow" {
		t.Errorf("a check saved the statements")
	}

	// Whoever may not read the policy may not ask.
	a.addMember("dev@example.com")
	m := a.signedIn("dev@example.com", memberPassword)
	m.get("/profile")
	vals.Del("op")
	m.htmx(href+"/check", vals).status(http.StatusForbidden)
}
