package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestPolicies(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/policies").status(http.StatusOK)
	if n := len(b.last.findAll("policy-builtin")); n != 3 {
		t.Errorf("%d policies marked built-in, want 3", n)
	}

	b.post("/policies", url.Values{"name": {""}, "key": {"bad key"}}).status(http.StatusBadRequest)
	form := b.last.must("policy-create")
	if text(find(form, "error-name")) != "Required." || !strings.HasPrefix(text(find(form, "error-key")), "Use at most 128 letters") {
		t.Errorf("problems: %q %q", text(find(form, "error-name")), text(find(form, "error-key")))
	}
	b.post("/policies", url.Values{"name": {"Mine"}, "key": {"Developer"}}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("policy-create"), "error-key")); got != "This key is already used." {
		t.Errorf("used key problem %q", got)
	}
	// The key check answers as the key is typed.
	if got := b.get("/policies/key-check?key=developer&form=policy-create").text("key-check"); got != "This key is already used." {
		t.Errorf("key check %q", got)
	}
	if got := b.get("/policies/key-check?key=fresh&form=policy-clone"); got.text("key-check") != "This key is free." ||
		attr(got.must("key-check"), "id") != "policy-clone-key-check" {
		t.Errorf("key check: %s", got.body)
	}

	// Creating opens the new policy.
	b.get("/policies")
	b.post("/policies", url.Values{"name": {"Flag editors"}, "key": {"flag-editors"}, "description": {"Flags only."}}).status(http.StatusOK)
	pol := a.policyByKey("flag-editors")
	href := "/policies/" + pol.ID.String()
	b.last.at(href)
	if b.last.text("flash-success") != "Policy “Flag editors” created. Add its statements." || !b.last.has("no-statements") {
		t.Errorf("new policy page: %q", b.last.text("flash-success"))
	}
	if got := b.htmx("/policies", url.Values{"name": {"Other"}, "key": {"other"}}); got.code != http.StatusNoContent || got.header.Get("HX-Redirect") == "" {
		t.Errorf("htmx create: %d %q", got.code, got.header.Get("HX-Redirect"))
	}

	// The editor edits without saving: add a statement, build a pattern, drop it.
	save := href + "/statements"
	b.get(href)
	p := b.post(save, url.Values{"op": {"add"}}).status(http.StatusOK)
	if n := len(p.findAll("statement")); n != 1 {
		t.Fatalf("%d statements after add", n)
	}
	edited := url.Values{"st": {"0"}, "st-0-type": {"project"}, "st-0-effect": {"deny"}, "st-0-actions": {"DeleteProject", "ToggleFlag"},
		"st-0-scope": {"project/*"}, "op": {"resource-0"}}
	p = b.post(save, edited).status(http.StatusOK)
	st := p.must("statement")
	if got := attr(find(st, "statement-resource"), "value"); got != "project/*" {
		t.Errorf("built pattern %q", got)
	}
	var checked []string
	for _, n := range findAll(st, "statement-action") {
		if hasAttr(n, "checked") {
			checked = append(checked, attr(n, "value"))
		}
	}
	if !slices.Equal(checked, []string{"DeleteProject"}) {
		t.Errorf("checked actions %v, want the project's only", checked)
	}
	if len(a.policyByKey("flag-editors").Statements) != 0 {
		t.Errorf("editing saved the statements")
	}

	// Saving an invalid statement marks it; a valid one is stored.
	p = b.post(save, url.Values{"st": {"0", "1"}, "op": {"save"},
		"st-0-type": {"project"}, "st-0-effect": {"allow"}, "st-0-actions": {"CanAccessProject"}, "st-0-resources": {"project/*"},
		"st-1-type": {"flag"}, "st-1-effect": {"allow"}, "st-1-resources": {"project/*:env/*:flag/*"}}).status(http.StatusBadRequest)
	if p.text("statements-error") == "" {
		t.Errorf("no message for invalid statements")
	}
	if problems := p.findAll("statement-problem"); len(problems) != 1 || text(problems[0]) != "Choose at least one action of this resource type." {
		t.Errorf("statement problems %d", len(problems))
	}
	if attr(find(p.row("statement", "data-index", "1"), "statement-problem"), "data-testid") == "" {
		t.Errorf("the problem is not on the second statement")
	}
	b.post(save, url.Values{"st": {"0"}, "op": {"save"}, "st-0-id": {"keep-me"},
		"st-0-type": {"flag"}, "st-0-effect": {"allow"}, "st-0-actions": {"ToggleFlag"},
		"st-0-resources": {"project/web:env/prod:flag/*;beta", " "}}).status(http.StatusOK).at(href)
	saved := a.policyByKey("flag-editors").Statements
	if len(saved) != 1 || saved[0].ID != "keep-me" || !slices.Equal(saved[0].Resources, []string{"project/web:env/prod:flag/*;beta"}) {
		t.Errorf("saved %+v", saved)
	}
	if !strings.HasPrefix(b.last.text("flash-success"), "Statements of “") || !strings.HasSuffix(b.last.text("flash-success"), "” saved.") {
		t.Errorf("message %q", b.last.text("flash-success"))
	}

	// Built-ins are read-only, with a clone button instead of a save button.
	developer := "/policies/" + core.DeveloperPolicyID.String()
	b.get(developer).status(http.StatusOK)
	if b.last.has("statements-save") || !b.last.has("builtin-notice") || !b.last.has("policy-clone") || len(b.last.findAll("statement")) != 6 {
		t.Errorf("built-in page offers editing")
	}
	p = b.post(developer+"/statements", url.Values{"op": {"save"}}).status(http.StatusUnprocessableEntity)
	if !strings.HasPrefix(p.text("flash-error"), "Built-in policies cannot be changed.") {
		t.Errorf("saving a built-in: %q", p.text("flash-error"))
	}
	b.get(developer + "?tab=settings")
	if b.last.has("policy-delete") || b.last.has("policy-settings-submit") {
		t.Errorf("built-in settings offer changes")
	}
	b.get(developer + "/delete").status(http.StatusOK)
	if b.last.has("delete-submit") {
		t.Errorf("built-in deletion offered")
	}

	// Clone the built-in.
	b.get(developer + "/clone").status(http.StatusOK)
	if got := attr(input(b.last.must("policy-clone-form"), "key"), "value"); got != "developer-copy" {
		t.Errorf("suggested clone key %q", got)
	}
	b.post(developer+"/clone", url.Values{"name": {"Dev 2"}, "key": {"flag-editors"}}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("policy-clone-form"), "error-key")); got != "This key is already used." {
		t.Errorf("clone key problem %q", got)
	}
	b.post(developer+"/clone", url.Values{"name": {"Dev 2"}, "key": {"dev-2"}, "description": {"Mine."}}).status(http.StatusOK)
	clone := a.policyByKey("dev-2")
	b.last.at("/policies/" + clone.ID.String())
	if len(clone.Statements) != 6 || clone.Type != iam.PolicyCustomerManaged || !b.last.has("statements-save") {
		t.Errorf("clone %+v", clone)
	}

	// Settings: rename with a problem, then for real.
	b.get(href + "?tab=settings")
	b.post(href+"/settings", url.Values{"name": {""}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("policy-settings"), "error-name")); got != "Required." {
		t.Errorf("settings problem %q", got)
	}
	b.post(href+"/settings", url.Values{"name": {"Flag people"}, "description": {"Flags."}}).status(http.StatusOK).at(href + "?tab=settings")
	if got := b.last.text("policy-heading"); got != "Flag people" {
		t.Errorf("heading after rename %q", got)
	}

	// Members and groups tabs: the switch lists all, to give and take.
	dev := a.addMember("dev@example.com")
	g, err := a.st.IAM().CreateGroup(t.Context(), a.ownerActor(), iam.GroupInput{Name: "Support"})
	must(t, err)
	b.get(href + "?tab=members&mall=true&mq=dev")
	row := b.last.row("iam-row", "data-key", "dev@example.com")
	b.post(attrOfForm(row), url.Values{"tab": {"members"}, "mall": {"true"}, "mq": {"dev"}}).status(http.StatusOK)
	if got := a.directPolicies(dev.String()); !slices.Equal(got, []string{"Flag people"}) {
		t.Errorf("member's policies %v", got)
	}
	if !b.last.has("policy-members") || find(b.last.row("iam-row", "data-key", "dev@example.com"), "iam-row-attached") == nil {
		t.Errorf("members tab after giving: %s", b.last.body)
	}
	b.get(href + "?tab=groups&gall=true")
	b.post(attrOfForm(b.last.row("iam-row", "data-key", "Support")), url.Values{"tab": {"groups"}, "gall": {"true"}}).status(http.StatusOK)
	gps, err := a.st.IAM().ListGroupPolicies(t.Context(), a.ownerActor(), g.ID, iam.IAMFilter{Page: core.Page{Size: 10}})
	must(t, err)
	if len(gps.Items) != 1 || gps.Items[0].Name != "Flag people" {
		t.Errorf("group policies %+v", gps.Items)
	}
	b.get(href + "?tab=groups")
	b.post(attrOfForm(b.last.row("iam-row", "data-key", "Support")), url.Values{"tab": {"groups"}}).status(http.StatusOK)
	if b.last.row("iam-row", "data-key", "Support") != nil {
		t.Errorf("group still has the policy")
	}

	// Delete through the confirmation.
	b.get(href + "/delete").status(http.StatusOK)
	b.post(b.last.formAction("delete-confirm"), nil).status(http.StatusOK).at("/policies")
	if b.last.row("policy-row", "data-key", "flag-editors") != nil {
		t.Errorf("policy still listed")
	}
}
