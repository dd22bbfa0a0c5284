package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// A Developer may see projects, environments and secrets and manage access
// tokens, but change nothing else: the pages do not offer it, and the server
// refuses it when posted anyway.
func TestDeveloperSeesOnlyWhatTheyMayDo(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	pr := a.project("web")
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	b := a.signedIn("dev@example.com", memberPassword)

	hidden := map[string][]string{
		"/projects":     {"project-create"},
		projectPath(pr): {"project-rename", "env-create", "env-delete", "project-delete"},
		envPath(pr, 0):  {"env-settings-form", "secret-create", "secret-rename", "secret-delete", "env-delete"},
		"/workspace":    {"workspace-form", "workspace-sso", "sso-form"},
	}
	for path, ids := range hidden {
		p := b.get(path).status(http.StatusOK)
		for _, id := range ids {
			if p.has(id) {
				t.Errorf("%s offers %s to a Developer", path, id)
			}
		}
	}
	// What they may do is there.
	env := b.get(envPath(pr, 0))
	if n := len(env.findAll("secret-value")); n != 2 {
		t.Errorf("Developer sees %d secrets, want 2", n)
	}
	if env.text("env-settings") == "" || !strings.Contains(env.text("env-settings"), "Optional") {
		t.Errorf("settings not shown read-only: %q", env.text("env-settings"))
	}
	if got := b.get("/workspace").text("workspace-name"); got != "Default Workspace" {
		t.Errorf("workspace name shown as %q", got)
	}
	tokens := b.get("/access-tokens")
	if got := text(tokens.must("token-type")); got != "Personal" {
		t.Errorf("token types offered %q, want only Personal (Service needs CanManageIAM)", got)
	}

	// Posting anyway is refused with the 403 page, and nothing changes.
	b.get("/projects")
	secret := envPath(pr, 0) + "/secrets/" + pr.Environments[0].Secrets[0].ID.String()
	for path, form := range map[string]url.Values{
		"/projects":                 {"name": {"Mine"}, "key": {"mine"}},
		projectPath(pr):             {"name": {"Renamed"}},
		projectPath(pr) + "/delete": {},
		projectPath(pr) + "/envs":   {"name": {"QA"}, "key": {"qa"}},
		envPath(pr, 0):              {"name": {"Live"}, "key": {"live"}},
		envPath(pr, 0) + "/delete":  {},
		envPath(pr, 0) + "/secrets": {"name": {"Mine"}, "type": {"server"}},
		secret:                      {"name": {"Mine"}},
		secret + "/delete":          {},
		"/workspace":                {"name": {"Mine"}, "key": {"mine"}},
		"/workspace/sso":            {"clientId": {"x"}},
		"/access-tokens":            {"name": {"svc"}, "type": {"Service"}, "permissions": {`[{"resourceType":"*","effect":"allow","actions":["*"],"resources":["*"]}]`}},
	} {
		p := b.post(path, form)
		if p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
			t.Errorf("POST %s: got %d %q, want the 403 page", path, p.code, p.text("error-heading"))
		}
		b.get("/projects")
	}
	// The confirmation pages offer no deletion.
	for _, path := range []string{projectPath(pr) + "/delete", envPath(pr, 0) + "/delete"} {
		p := b.get(path).status(http.StatusOK)
		if p.has("delete-submit") || !p.has("delete-not-allowed") {
			t.Errorf("%s offers the deletion to a Developer", path)
		}
	}

	after := a.project("web")
	if after.Name != "Web" || len(after.Environments) != 2 || after.Environments[0].Name != "Prod" || len(after.Environments[0].Secrets) != 2 {
		t.Errorf("a Developer changed the project: %+v", after)
	}
	// htmx gets the refusal in the message region.
	b.get("/projects")
	p := b.htmx("/projects", url.Values{"name": {"Mine"}, "key": {"mine"}}).status(http.StatusForbidden)
	if !strings.Contains(p.text("flash-error"), "Not allowed") {
		t.Errorf("htmx refusal: %s", p.body)
	}

	// A Developer may manage their Personal tokens.
	b.get("/access-tokens")
	b.post("/access-tokens", url.Values{"name": {"mine"}, "type": {"Personal"}}).status(http.StatusOK)
	if !b.last.has("token-value") {
		t.Errorf("a Developer cannot create a Personal token")
	}
}

// A member with no access to access tokens does not see them in the navigation.
func TestNavigationFollowsPermissions(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.addMember("nobody@example.com")
	b := a.signedIn("nobody@example.com", memberPassword)
	b.get("/projects").status(http.StatusOK)
	if b.last.has("nav-access-tokens") {
		t.Errorf("navigation offers access tokens to a member without ListAccessTokens")
	}
	b.get("/access-tokens").status(http.StatusForbidden)
}
