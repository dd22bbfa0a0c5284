package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestAccessTokens(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/access-tokens").status(http.StatusOK)
	if got := b.last.formAction("token-create"); got != "/access-tokens" {
		t.Errorf("create form posts to %q", got)
	}
	if b.last.has("token-row") {
		t.Errorf("rows on an empty list")
	}

	b.post("/access-tokens", url.Values{"name": {""}, "type": {"Personal"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("token-create"), "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	b.post("/access-tokens", url.Values{"name": {"ci"}, "type": {"Service"}, "permissions": {"not json"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("token-create"), "error-permissions")); !strings.HasPrefix(got, "Enter a JSON array") {
		t.Errorf("permissions problem %q", got)
	}
	if got := text(input(b.last.must("token-create"), "permissions")); got != "not json" {
		t.Errorf("permissions shown again as %q", got)
	}

	// The value is shown once, in the answer to the creation.
	b.post("/access-tokens", url.Values{"name": {"deploy"}, "type": {"Personal"}}).status(http.StatusOK)
	value := attr(b.last.must("token-value"), "value")
	if !strings.HasPrefix(value, iam.AccessTokenPrefix) || len(value) < 36 {
		t.Fatalf("token value %q", value)
	}
	if row := b.last.row("token-row", "data-name", "deploy"); row == nil || text(find(row, "token-status")) != "Active" {
		t.Errorf("new token not listed as Active")
	}
	if act, err := a.st.IAM().Authenticate(t.Context(), iam.Credentials{Authorization: value}); err != nil || act.UserID != a.owner {
		t.Errorf("the shown value does not authenticate: %v", err)
	}
	b.get("/access-tokens")
	if b.last.has("token-value") || strings.Contains(b.last.body, value) {
		t.Errorf("the value is shown again")
	}

	statements := `[{"resourceType":"project","effect":"allow","actions":["CanAccessProject"],"resources":["project/*"]}]`
	b.post("/access-tokens", url.Values{"name": {"ci"}, "type": {"Service"}, "permissions": {statements}}).status(http.StatusOK)
	if row := b.last.row("token-row", "data-name", "ci"); row == nil || !strings.Contains(text(row), "Service") {
		t.Errorf("Service token not listed")
	}

	// Deactivate, activate, delete; htmx gets the list and the message.
	id := tokenID(t, a, "deploy")
	b.post("/access-tokens/"+id+"/toggle", url.Values{"page": {"1"}}).status(http.StatusOK).at("/access-tokens?page=1")
	if got := text(find(b.last.row("token-row", "data-name", "deploy"), "token-status")); got != "Inactive" {
		t.Errorf("status after toggle %q", got)
	}
	if _, err := a.st.IAM().Authenticate(t.Context(), iam.Credentials{Authorization: value}); err == nil {
		t.Errorf("an inactive token still authenticates")
	}
	p := b.htmx("/access-tokens/"+id+"/toggle", url.Values{"page": {"1"}}).status(http.StatusOK)
	if got := text(find(p.row("token-row", "data-name", "deploy"), "token-status")); got != "Active" || p.text("flash-success") != "Access token “deploy” activated." {
		t.Errorf("htmx toggle: status %q, message %q", got, p.text("flash-success"))
	}
	b.get("/access-tokens")
	b.post("/access-tokens/"+id+"/delete", url.Values{"page": {"1"}}).status(http.StatusOK)
	if b.last.row("token-row", "data-name", "deploy") != nil {
		t.Errorf("deleted token still listed")
	}
	b.post("/access-tokens/"+id+"/delete", url.Values{"page": {"1"}}).status(http.StatusNotFound)
}

func tokenID(t *testing.T, a *app, name string) string {
	t.Helper()
	var id string
	must(t, a.pool.QueryRow(t.Context(), `SELECT id::text FROM access_tokens WHERE name = $1`, name).Scan(&id))
	return id
}

// A Personal token is its creator's: a Developer sees the owner's in the
// list with no button and is refused when posting anyway; an Administrator
// is offered only to deactivate it, and then nothing.
func TestPersonalTokenRowsFollowTheirCreator(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	tok, err := a.st.Tokens().CreateAccessToken(t.Context(), a.ownerActor(), accesstokens.AccessTokenInput{Name: "deploy", Type: core.TokenPersonal})
	must(t, err)
	id := tok.ID.String()
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	a.addMember("admin@example.com", core.AdministratorPolicyID)
	buttons := func(b *browser) []string {
		t.Helper()
		row := b.get("/access-tokens").status(http.StatusOK).row("token-row", "data-name", "deploy")
		if row == nil {
			t.Fatal("the owner's token is not listed")
		}
		var out []string
		for _, testid := range []string{"token-edit", "token-toggle", "token-delete"} {
			if find(row, testid) != nil {
				out = append(out, testid)
			}
		}
		return out
	}

	dev := a.signedIn("dev@example.com", memberPassword)
	if got := buttons(dev); len(got) != 0 {
		t.Errorf("a Developer is offered %v on the owner's token", got)
	}
	dev.post("/access-tokens/"+id+"/toggle", url.Values{"page": {"1"}}).status(http.StatusForbidden)
	dev.get("/access-tokens")
	dev.post("/access-tokens/"+id+"/delete", url.Values{"page": {"1"}}).status(http.StatusForbidden)
	dev.get("/access-tokens/" + id).status(http.StatusForbidden)

	admin := a.signedIn("admin@example.com", memberPassword)
	if got := buttons(admin); len(got) != 1 || got[0] != "token-toggle" {
		t.Errorf("an Administrator is offered %v on the owner's token, want only to deactivate it", got)
	}
	admin.post("/access-tokens/"+id+"/toggle", url.Values{"page": {"1"}}).status(http.StatusOK)
	if got := text(find(admin.last.row("token-row", "data-name", "deploy"), "token-status")); got != "Inactive" {
		t.Errorf("status after the Administrator's toggle %q", got)
	}
	if got := buttons(admin); len(got) != 0 {
		t.Errorf("an Administrator is offered %v on the owner's inactive token", got)
	}
	admin.post("/access-tokens/"+id+"/toggle", url.Values{"page": {"1"}}).status(http.StatusForbidden)
	if got := buttons(a.signedIn(ownerEmail, ownerPassword)); len(got) != 3 {
		t.Errorf("the owner is offered %v on their token, want all three", got)
	}
}

func TestAccessTokenPaging(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	// Stored directly: twelve at once is more than the creation rate limit allows.
	owner := a.ownerActor()
	for i := range 12 {
		_, err := db.New(a.pool).CreateAccessToken(t.Context(), db.CreateAccessTokenParams{OrganizationID: owner.OrgID,
			CreatorID: owner.UserID, Name: fmt.Sprintf("token-%02d", i), Type: core.TokenPersonal,
			TokenHash: []byte(fmt.Sprintf("fixture-%d", i)), Preview: "api-…", Permissions: []byte("[]")})
		must(t, err)
	}
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/access-tokens").status(http.StatusOK)
	if n := len(b.last.findAll("token-row")); n != 10 {
		t.Errorf("%d rows on page 1, want 10", n)
	}
	if got := b.last.text("pager-label"); got != "Page 1 of 2 · 12 tokens" {
		t.Errorf("pager %q", got)
	}
	if b.last.has("pager-prev") {
		t.Errorf("page 1 offers a previous page")
	}
	next := attr(b.last.must("pager-next"), "href")
	b.get(next).status(http.StatusOK)
	if n := len(b.last.findAll("token-row")); n != 2 || b.last.has("pager-next") || !b.last.has("pager-prev") {
		t.Errorf("page 2: %d rows, next %v, prev %v", n, b.last.has("pager-next"), b.last.has("pager-prev"))
	}
	// htmx asks for the list alone.
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+next, nil)
	req.Header.Set("HX-Request", "true")
	p := b.do(req).status(http.StatusOK)
	if p.has("switcher") || len(p.findAll("token-row")) != 2 {
		t.Errorf("htmx page answer: %s", p.body)
	}
	b.get("/access-tokens?page=zero").status(http.StatusBadRequest)
}

func TestWorkspace(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/workspace").status(http.StatusOK)
	if got := attr(input(b.last.must("workspace-form"), "key"), "value"); got != "default-workspace" {
		t.Errorf("key shown as %q", got)
	}

	b.post("/workspace", url.Values{"name": {"Acme"}, "key": {"no spaces allowed"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("workspace-form"), "error-key")); !strings.HasPrefix(got, "Use at most") {
		t.Errorf("key problem %q", got)
	}
	b.post("/workspace", url.Values{"name": {"Acme"}, "key": {"acme"}}).status(http.StatusOK).at("/workspace")
	if got := attr(input(b.last.must("workspace-form"), "name"), "value"); got != "Acme" {
		t.Errorf("name after saving %q", got)
	}

	sso := url.Values{
		"clientId": {"bunting"}, "clientSecret": {""}, "authorizationEndpoint": {"https://id.example.com/authorize"},
		"tokenEndpoint": {"https://id.example.com/token"}, "clientAuthenticationMethod": {"client_secret_post"},
		"scope": {"email profile"}, "userEmailClaim": {"email"}, "issuer": {""},
	}
	b.post("/workspace/sso", sso).status(http.StatusBadRequest)
	form := b.last.must("sso-form")
	if got := text(find(form, "error-clientSecret")); got != "Required." {
		t.Errorf("secret problem %q", got)
	}
	if got := text(find(form, "error-scope")); got != "Separate scopes with spaces and include openid." {
		t.Errorf("scope problem %q", got)
	}
	if got := attr(input(form, "clientId"), "value"); got != "bunting" {
		t.Errorf("client id shown again as %q", got)
	}

	// A secret typed before a refused save stays in its field.
	sso.Set("clientSecret", "typed-secret")
	b.post("/workspace/sso", sso).status(http.StatusBadRequest)
	if got := attr(input(b.last.must("sso-form"), "clientSecret"), "value"); got != "typed-secret" {
		t.Errorf("the typed secret was lost on a refused save: %q", got)
	}

	sso.Set("clientSecret", "s3cret-value")
	sso.Set("scope", "openid email")
	b.post("/workspace/sso", sso).status(http.StatusOK).at("/workspace")
	if strings.Contains(b.last.body, "s3cret-value") {
		t.Fatalf("the client secret was sent back to the browser")
	}
	secret := input(b.last.must("sso-form"), "clientSecret")
	if attr(secret, "value") != "" || attr(secret, "placeholder") != "********" || attr(secret, "type") != "password" {
		t.Errorf("secret field %v, want empty with the ******** placeholder", secret.Attr)
	}
	// Saving again with the field empty keeps the stored secret.
	sso.Set("clientSecret", "")
	sso.Set("clientId", "bunting-2")
	b.post("/workspace/sso", sso).status(http.StatusOK)
	var sealed string
	must(t, a.pool.QueryRow(t.Context(), `SELECT sso_oidc->>'clientSecret' FROM workspaces`).Scan(&sealed))
	if plain, err := a.st.Projects().Keys().Open(sealed); err != nil || plain != "s3cret-value" {
		t.Errorf("stored secret %q (%v), want it kept", plain, err)
	}
	ws, err := a.st.IAM().GetWorkspace(t.Context(), a.ownerActor())
	must(t, err)
	if ws.SSO.OIDC.ClientID != "bunting-2" || ws.SSO.OIDC.ClientAuthenticationMethod != "client_secret_post" {
		t.Errorf("stored %+v", ws.SSO.OIDC)
	}
	if !strings.Contains(b.last.body, `<option value="client_secret_post" selected>`) {
		t.Errorf("stored method not selected")
	}
}

func TestContextSwitcher(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, p := range []core.ProjectInput{{Name: "Web", Key: "web"}, {Name: "Mobile", Key: "mobile"}} {
		_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), p)
		must(t, err)
	}
	mobile := a.project("mobile")
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	selected := func(p *page) string {
		for n := range p.must("switch-env").Descendants() {
			if n.Data == "option" && hasAttr(n, "selected") {
				return attr(n, "value")
			}
		}
		return ""
	}
	if got, want := selected(b.last), a.project("web").Environments[0].ID.String(); got != want {
		t.Errorf("first choice %s, want the first environment %s", got, want)
	}

	dev := mobile.Environments[1].ID.String()
	b.post("/context", url.Values{"envId": {dev}, "next": {"/workspace"}}).status(http.StatusOK).at("/workspace")
	if got := selected(b.last); got != dev {
		t.Errorf("selected %s after switching, want %s", got, dev)
	}
	// Remembered per user: another browser of the same person sees it too.
	other := a.signedIn(ownerEmail, ownerPassword)
	other.get("/projects")
	if got := selected(other.last); got != dev {
		t.Errorf("another browser selects %s, want %s", got, dev)
	}
	if row := other.last.row("project-row", "data-key", "mobile"); row == nil || !strings.Contains(fmt.Sprint(findAll(row, "env-link")[1].Attr), "current") {
		t.Errorf("the current environment is not marked in the list")
	}

	b.post("/context", url.Values{"envId": {"0b7d9d3e-0000-4000-8000-000000000000"}}).status(http.StatusNotFound)
	b.get("/projects")
	b.post("/context", url.Values{"envId": {dev}, "next": {"https://evil.example/"}}).at("/flags") // via /
}

func TestSwitchOrganization(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	other := createOrganization(t, a, "Other", "other", true)
	stranger := createOrganization(t, a, "Stranger", "stranger", false)
	_, err := a.q.CreateProject(ctx, db.CreateProjectParams{OrganizationID: other, Name: "Secret", Key: "secret"})
	must(t, err)

	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	if !b.last.has("switch-org") || b.last.row("project-row", "data-key", "secret") != nil {
		t.Fatalf("want an organization switcher and only this organization's projects")
	}
	b.post("/context", url.Values{"organizationId": {other.String()}, "next": {"/projects"}}).status(http.StatusOK).at("/projects")
	if b.last.row("project-row", "data-key", "secret") == nil {
		t.Errorf("the other organization's project is not listed after switching")
	}
	b.post("/context", url.Values{"organizationId": {stranger.String()}}).status(http.StatusForbidden)
}

func TestErrorPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	for _, path := range []string{"/no-such-page", "/projects/not-a-uuid", "/projects/0b7d9d3e-0000-4000-8000-000000000000"} {
		p := b.get(path).status(http.StatusNotFound)
		if !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || p.text("error-status") != "404" || p.text("error-heading") != "Not found" {
			t.Errorf("%s: not an HTML 404 page: %s", path, p.body)
		}
	}
	b.get("/projects")
	b.send("/projects", url.Values{"_csrf": {b.last.csrf()}}, http.Header{"Content-Type": {"application/xml"}})
	if b.last.code >= 500 {
		t.Errorf("odd request answered %d", b.last.code)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.browser()
	for _, path := range []string{"/login", "/no-such-page"} {
		h := b.get(path).header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s: %s %q, want %q", path, name, got, want)
			}
		}
		if h.Get("Strict-Transport-Security") != "" {
			t.Errorf("%s: HSTS over http", path)
		}
	}
}

func TestStaticFiles(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.browser()
	login := b.get("/login")
	var css string
	for n := range login.doc.Descendants() {
		// The main stylesheet; the navigation's (nav.css) follows it.
		if n.Data == "link" && attr(n, "rel") == "stylesheet" && strings.HasPrefix(attr(n, "href"), "/static/app.") {
			css = attr(n, "href")
		}
	}
	if !strings.HasPrefix(css, "/static/app.") || len(css) < len("/static/app.123456789012.css") {
		t.Fatalf("stylesheet URL %q is not content-hashed", css)
	}
	p := b.get(css).status(http.StatusOK)
	if got := p.header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("Cache-Control %q", got)
	}
	if !strings.HasPrefix(p.header.Get("Content-Type"), "text/css") || !strings.Contains(p.body, ".btn") {
		t.Errorf("stylesheet answer: %s %q", p.header.Get("Content-Type"), p.body[:min(80, len(p.body))])
	}
	b.get("/static/app.css").status(http.StatusNotFound)
}

func TestEveryPageRenders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	pr := a.project("web")
	b := a.signedIn(ownerEmail, ownerPassword)
	for path, marker := range map[string]string{
		"/projects":                 "project-list",
		projectPath(pr):             "env-list",
		projectPath(pr) + "/delete": "delete-confirm",
		envPath(pr, 0):              "secrets",
		envPath(pr, 0) + "/delete":  "delete-confirm",
		"/access-tokens":            "token-list",
		"/workspace":                "workspace-general",
		"/profile":                  "password-form",
	} {
		p := b.get(path).status(http.StatusOK).at(path)
		if !p.has(marker) || !p.has("switcher") || !p.has("nav-projects") || p.text("user-email") != ownerEmail {
			t.Errorf("%s: missing %s or the shell", path, marker)
		}
		// Every control has a label.
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
	b.get("/").at("/flags")
}

// An unexpected failure is a proper page that tells nothing internal.
func TestServerErrorPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	token := b.last.csrf()
	a.pool.Close() // every store call fails from now on
	p := b.get("/projects")
	if p.code < 500 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || !p.has("error-heading") {
		t.Fatalf("got %d %s, want an HTML 5xx page", p.code, p.body)
	}
	if strings.Contains(strings.ToLower(p.body), "pool") || strings.Contains(p.body, "goroutine") {
		t.Errorf("the page shows internal text: %s", p.text("error-text"))
	}
	if !strings.Contains(p.text("error-text"), "Reference ") {
		t.Errorf("no request reference: %q", p.text("error-text"))
	}
	h := b.send("/projects", url.Values{}, http.Header{"Hx-Request": {"true"}, "X-Csrf-Token": {token}})
	if h.code < 500 || !h.has("flash-error") {
		t.Errorf("htmx: got %d %s, want the message in place", h.code, h.body)
	}
}
