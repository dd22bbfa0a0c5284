package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// memberID is the id of the user with that email.
func memberID(t *testing.T, a *app, email string) string {
	t.Helper()
	var id string
	must(t, a.pool.QueryRow(t.Context(), `SELECT id::text FROM users WHERE email = $1`, email).Scan(&id))
	return id
}

// policyByKey is the organization's or a built-in policy with that key.
func (a *app) policyByKey(key string) iam.Policy {
	a.t.Helper()
	ps, err := a.st.IAM().ListPolicies(a.t.Context(), a.ownerActor(), iam.IAMFilter{Page: core.Page{Size: 100}})
	must(a.t, err)
	for _, p := range ps.Items {
		if p.Key == key {
			return p
		}
	}
	a.t.Fatalf("no policy %q", key)
	return iam.Policy{}
}

// directPolicies are the names of a member's direct policies.
func (a *app) directPolicies(member string) []string {
	a.t.Helper()
	ps, err := a.st.IAM().ListMemberDirectPolicies(a.t.Context(), a.ownerActor(), uuid.MustParse(member), iam.IAMFilter{Page: core.Page{Size: 100}})
	must(a.t, err)
	var out []string
	for _, p := range ps.Items {
		out = append(out, p.Name)
	}
	return out
}

// A Developer sees no IAM navigation; IAM pages and actions answer the 403 page.
func TestDeveloperCannotManageIAM(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	other := a.addMember("other@example.com", core.DeveloperPolicyID)
	g, err := a.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Support"})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Mine", Key: "mine"})
	must(t, err)
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	b := a.signedIn("dev@example.com", memberPassword)
	b.get("/projects").status(http.StatusOK)
	for _, id := range []string{"nav-members", "nav-groups", "nav-policies", "nav-organization"} {
		if b.last.has(id) {
			t.Errorf("a Developer's navigation offers %s", id)
		}
	}
	m, gp, pp := "/members/"+other.String(), "/groups/"+g.ID.String(), "/policies/"+pol.ID.String()
	for _, path := range []string{"/members", m, m + "/remove", "/groups", gp, gp + "/delete", "/policies", pp,
		pp + "?tab=members", pp + "/clone", pp + "/delete", "/policies/key-check?key=x", "/organization"} {
		if path == "/organization" {
			p := b.get(path).status(http.StatusOK) // the name is shown to every member, read-only
			if p.has("org-form") {
				t.Errorf("a Developer may change the organization")
			}
			continue
		}
		if p := b.get(path); p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
			t.Errorf("GET %s: got %d %q, want the 403 page", path, p.code, p.text("error-heading"))
		}
	}
	statements := url.Values{"op": {"save"}, "st": {"0"}, "st-0-type": {"*"}, "st-0-effect": {"allow"}, "st-0-actions": {"*"}, "st-0-resources": {"*"}}
	for path, form := range map[string]url.Values{
		"/members":    {"email": {"new@example.com"}},
		m + "/remove": {},
		m + "/policies/" + core.OwnerPolicyID.String() + "/add": {},
		m + "/groups/" + g.ID.String() + "/add":                 {},
		"/groups":                                               {"name": {"Mine"}},
		gp:                                                      {"name": {"Renamed"}},
		gp + "/delete":                                          {},
		gp + "/members/" + other.String() + "/add":               {},
		gp + "/policies/" + core.OwnerPolicyID.String() + "/add": {},
		"/policies":        {"name": {"Own"}, "key": {"own"}},
		pp + "/statements": statements,
		pp + "/settings":   {"name": {"Renamed"}},
		pp + "/clone":      {"name": {"Copy"}, "key": {"copy"}},
		pp + "/delete":     {},
		pp + "/members/" + other.String() + "/add": {},
		pp + "/groups/" + g.ID.String() + "/add":   {},
		"/organization":                            {"name": {"Taken over"}},
	} {
		b.get("/projects")
		if p := b.post(path, form); p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
			t.Errorf("POST %s: got %d %q, want the 403 page", path, p.code, p.text("error-heading"))
		}
	}
	// A Service token's statements are read-only to them, and refused when posted.
	tok, err := a.st.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "svc", Type: core.TokenService,
		Permissions: []access.Statement{{ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}}}})
	must(t, err)
	tp := "/access-tokens/" + tok.ID.String()
	if p := b.get(tp).status(http.StatusOK); p.has("statement-add") || !p.has("statement") {
		t.Errorf("a Developer may edit a Service token's statements")
	}
	statements.Set("name", "svc")
	statements.Set("statements", "edited")
	if p := b.post(tp, statements); p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
		t.Errorf("POST %s: got %d %q, want the 403 page", tp, p.code, p.text("error-heading"))
	}
	b.get(tp)
	b.post(tp, url.Values{"name": {"renamed"}, "op": {"save"}}).status(http.StatusOK) // renaming is theirs to do

	after, err := a.st.IAM().GetPolicy(ctx, owner, pol.ID)
	must(t, err)
	if after.Name != "Mine" || len(after.Statements) != 0 {
		t.Errorf("a Developer changed the policy: %+v", after)
	}
	if got := a.directPolicies(other.String()); !slices.Equal(got, []string{"Developer"}) {
		t.Errorf("a Developer changed a member: %v", got)
	}
}

func TestEveryIAMPageRenders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	_, err := a.st.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	dev := a.addMember("dev@example.com", core.DeveloperPolicyID)
	g, err := a.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Support"})
	must(t, err)
	must(t, a.st.IAM().AddGroupMember(ctx, owner, g.ID, dev))
	pol, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Mine", Key: "mine"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, pol.ID, []access.Statement{
		{ResourceType: "flag", Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/web:env/*:flag/*"}}})
	must(t, err)
	tok, err := a.st.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "svc", Type: core.TokenService,
		Permissions: []access.Statement{{ResourceType: "*", Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}}})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	m, gp, pp := "/members/"+dev.String(), "/groups/"+g.ID.String(), "/policies/"+pol.ID.String()
	for path, marker := range map[string]string{
		"/members":                    "member-list",
		m + "?gall=true&pall=true":    "member-inherited",
		m + "/remove":                 "delete-confirm",
		"/groups":                     "group-list",
		gp + "?mall=true&pall=true":   "group-members",
		gp + "/delete":                "delete-confirm",
		"/policies":                   "policy-list",
		pp:                            "statement-editor",
		pp + "?tab=members&mall=true": "policy-members",
		pp + "?tab=groups&gall=true":  "policy-groups",
		pp + "?tab=settings":          "policy-settings",
		pp + "/clone":                 "policy-clone-form",
		pp + "/delete":                "delete-confirm",
		"/policies/" + core.OwnerPolicyID.String(): "builtin-notice",
		"/organization":                     "org-form",
		"/access-tokens/" + tok.ID.String(): "statement-editor",
	} {
		p := b.get(path).status(http.StatusOK)
		if !p.has(marker) || !p.has("nav-members") || !p.has("nav-policies") {
			t.Errorf("%s: missing %s or the IAM navigation", path, marker)
		}
		labels := map[string]bool{}
		for n := range p.doc.Descendants() {
			if n.Data == "label" {
				labels[attr(n, "for")] = true
			}
		}
		for n := range p.doc.Descendants() {
			if (n.Data == "input" || n.Data == "select" || n.Data == "textarea") && attr(n, "type") != "hidden" && !labels[attr(n, "id")] {
				t.Errorf("%s: control %v has no label", path, n.Attr)
			}
		}
	}
}

// Names typed by people render escaped on the IAM pages.
func TestIAMNamesAreEscaped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	const evil = `<script>alert(1)</script>`
	g, err := a.st.IAM().CreateGroup(t.Context(), a.ownerActor(), iam.GroupInput{Name: evil, Description: evil})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: evil, Key: "evil", Description: evil})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	for _, path := range []string{"/groups", "/groups/" + g.ID.String(), "/policies", "/policies/" + pol.ID.String(), "/members?gall=true"} {
		if p := b.get(path).status(http.StatusOK); strings.Contains(p.body, evil) {
			t.Errorf("%s renders a name unescaped", path)
		}
	}
}

// An empty list says whether there is nothing yet or nothing matching.
func TestEmptyListsSayWhy(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	if got := b.get("/groups").status(http.StatusOK).text("list-empty"); got != "No groups yet." {
		t.Errorf("no groups at all: %q", got)
	}
	for path, want := range map[string]string{"/groups?q=zz": "No groups match “zz”.", "/members?q=zz": "No members match “zz”.",
		"/policies?q=zz": "No policies match “zz”."} {
		if got := b.get(path).status(http.StatusOK).text("list-empty"); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
