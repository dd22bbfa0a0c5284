package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
)

func TestAccessTokenPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	owner := a.ownerActor()
	personal, err := a.st.Tokens().CreateAccessToken(t.Context(), owner, accesstokens.AccessTokenInput{Name: "laptop", Type: core.TokenPersonal})
	must(t, err)
	service, err := a.st.Tokens().CreateAccessToken(t.Context(), owner, accesstokens.AccessTokenInput{Name: "deploy", Type: core.TokenService,
		Permissions: []access.Statement{{ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}}}})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)

	// Search by name.
	b.get("/access-tokens?q=LAP").status(http.StatusOK)
	if rows := b.last.findAll("token-row"); len(rows) != 1 || attr(rows[0], "data-name") != "laptop" {
		t.Errorf("search found %d tokens", len(rows))
	}
	edit := attr(find(b.last.row("token-row", "data-name", "laptop"), "token-edit"), "href")
	if edit != "/access-tokens/"+personal.ID.String() {
		t.Fatalf("edit link %q", edit)
	}

	// A Service token is created with the statement editor too.
	b.get("/access-tokens")
	if !b.last.has("token-permissions") || len(findAll(b.last.must("token-permissions"), "statement")) != 1 {
		t.Errorf("the creation form has no statement editor")
	}
	create := url.Values{"name": {"ci"}, "type": {"Service"}, "statements": {"edited"}, "st": {"0"},
		"st-0-type": {"project"}, "st-0-effect": {"allow"}, "st-0-actions": {"CanAccessProject"}}
	create.Set("op", "add")
	if p := b.post("/access-tokens", create).status(http.StatusOK); len(p.findAll("statement")) != 2 || p.has("token-value") {
		t.Errorf("adding a statement to a new token: %d statements", len(p.findAll("statement")))
	}
	create.Set("op", "save")
	p := b.post("/access-tokens", create).status(http.StatusBadRequest)
	if got := text(find(p.must("token-permissions"), "statement-problem")); !strings.HasPrefix(got, "Add at least one resource pattern") {
		t.Errorf("new token's statement problem %q", got)
	}
	create.Set("st-0-resources", "project/*")
	p = b.post("/access-tokens", create).status(http.StatusOK)
	if !p.has("token-value") {
		t.Fatalf("Service token not created: %s", p.text("flash-error"))
	}
	ci, err := a.st.Tokens().ListAccessTokens(t.Context(), owner, accesstokens.AccessTokenFilter{Name: "ci", Page: core.Page{Size: 10}})
	must(t, err)
	if len(ci.Items) != 1 || len(ci.Items[0].Permissions) != 1 || ci.Items[0].Permissions[0].Resources[0] != "project/*" {
		t.Errorf("created %+v", ci.Items)
	}

	// A Personal token is renamed; it has no statements.
	b.get(edit).status(http.StatusOK)
	if b.last.has("statement-editor") {
		t.Errorf("a Personal token shows statements")
	}
	b.post(edit, url.Values{"name": {""}, "op": {"save"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("token-edit-form"), "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	b.post(edit, url.Values{"name": {"work laptop"}, "op": {"save"}}).status(http.StatusOK).at(edit)
	if b.last.text("token-heading") != "work laptop" || b.last.text("flash-success") != "Access token “work laptop” saved." {
		t.Errorf("after rename %q", b.last.text("token-heading"))
	}

	// A Service token's statements use the policies' editor.
	path := "/access-tokens/" + service.ID.String()
	b.get(path).status(http.StatusOK)
	if n := len(b.last.findAll("statement")); n != 1 {
		t.Fatalf("%d statements shown", n)
	}
	p = b.post(path, url.Values{"name": {"deploy"}, "statements": {"edited"}, "op": {"add"}, "st": {"0"},
		"st-0-type": {"project"}, "st-0-effect": {"allow"}, "st-0-actions": {"CanAccessProject"}, "st-0-resources": {"project/*"}}).status(http.StatusOK)
	if n := len(p.findAll("statement")); n != 2 {
		t.Fatalf("%d statements after add", n)
	}
	// An empty statement list is refused for a Service token, and said so.
	p = b.post(path, url.Values{"name": {"deploy"}, "statements": {"edited"}, "op": {"save"}}).status(http.StatusBadRequest)
	if got := p.text("statements-error"); got != "A Service token needs at least one statement." {
		t.Errorf("empty statements %q", got)
	}
	p = b.post(path, url.Values{"name": {"deploy"}, "statements": {"edited"}, "op": {"save"}, "st": {"0"},
		"st-0-type": {"env"}, "st-0-effect": {"allow"}, "st-0-actions": {"CanAccessEnv"}}).status(http.StatusBadRequest)
	if got := p.text("statement-problem"); !strings.HasPrefix(got, "Add at least one resource pattern") {
		t.Errorf("statement problem %q", got)
	}
	b.post(path, url.Values{"name": {"deploy bot"}, "statements": {"edited"}, "op": {"save"}, "st": {"0"},
		"st-0-type": {"env"}, "st-0-effect": {"allow"}, "st-0-actions": {"CanAccessEnv"}, "st-0-resources": {"project/*:env/*"}}).status(http.StatusOK)
	got, err := a.st.Tokens().GetAccessToken(t.Context(), owner, service.ID)
	must(t, err)
	if got.Name != "deploy bot" || len(got.Permissions) != 1 || got.Permissions[0].ResourceType != "env" {
		t.Errorf("token after save %+v", got)
	}
}
