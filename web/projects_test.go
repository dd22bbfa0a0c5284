package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// project returns the owner's project with that key, as the store has it.
func (a *app) project(key string) core.Project {
	a.t.Helper()
	ps, err := a.st.Projects().ListProjects(a.t.Context(), a.ownerActor())
	must(a.t, err)
	for _, p := range ps {
		if p.Key == key {
			return p
		}
	}
	a.t.Fatalf("no project %q", key)
	return core.Project{}
}

func projectPath(p core.Project) string { return "/projects/" + p.ID.String() }

func envPath(p core.Project, i int) string {
	return projectPath(p) + "/envs/" + p.Environments[i].ID.String()
}

func TestCreateProject(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects").status(http.StatusOK)
	if !b.last.has("project-create") || b.last.has("project-row") {
		t.Fatalf("empty projects page: want the create form and no rows")
	}

	// Problems show next to their fields, with what was typed kept.
	b.post("/projects", url.Values{"name": {" "}, "key": {"has space"}}).status(http.StatusBadRequest)
	form := b.last.must("project-create")
	if got := text(find(form, "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	if got := text(find(form, "error-key")); !strings.HasPrefix(got, "Use at most 128 letters") {
		t.Errorf("key problem %q", got)
	}
	if got := attr(input(form, "key"), "value"); got != "has space" {
		t.Errorf("key shown again as %q", got)
	}
	if got := attr(input(form, "key"), "aria-invalid"); got != "true" {
		t.Errorf("key field not marked invalid")
	}

	b.post("/projects", url.Values{"name": {"Web shop"}, "key": {"web-shop"}}).status(http.StatusOK).at("/projects")
	if got := b.last.text("flash-success"); got != "Project “Web shop” created." {
		t.Errorf("message %q", got)
	}
	row := b.last.row("project-row", "data-key", "web-shop")
	if row == nil || text(find(row, "project-name")) != "Web shop" || len(findAll(row, "env-link")) != 2 {
		t.Fatalf("list lacks the new project with two environments: %s", b.last.body)
	}
	// The message is shown once.
	b.get("/projects")
	if b.last.has("flash-success") {
		t.Errorf("message shown twice")
	}

	b.post("/projects", url.Values{"name": {"Again"}, "key": {"WEB-SHOP"}}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("project-create"), "error-key")); got != "This key is already used." {
		t.Errorf("duplicate key problem %q", got)
	}

	// htmx gets the form, the list and the message, not the page.
	p := b.htmx("/projects", url.Values{"name": {"Mobile"}, "key": {"mobile"}}).status(http.StatusOK)
	if p.has("nav-projects") || !p.has("project-create") || p.row("project-row", "data-key", "mobile") == nil ||
		p.text("flash-success") != "Project “Mobile” created." {
		t.Errorf("htmx answer is not the regions: %s", p.body)
	}
	// The top bar comes along out of band, offering the new project's environments.
	if bar := p.must("switcher"); attr(bar, "hx-swap-oob") != "true" || !strings.Contains(text(bar), "Mobile / Prod") {
		t.Errorf("the top bar is not sent again with the new project: %s", text(bar))
	}
	if got := attr(input(p.must("project-create"), "name"), "value"); got != "" {
		t.Errorf("form not reset after creation: name %q", got)
	}
	p = b.htmx("/projects", url.Values{"name": {""}, "key": {"mobile"}}).status(http.StatusBadRequest)
	if got := text(find(p.must("project-create"), "error-name")); got != "Required." {
		t.Errorf("htmx name problem %q: %s", got, p.body)
	}
}

func TestProjectNameIsEscaped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	const evil = `<script>alert(1)</script>`
	b.post("/projects", url.Values{"name": {evil}, "key": {"evil"}}).status(http.StatusOK)
	for _, path := range []string{"/projects", projectPath(a.project("evil")), envPath(a.project("evil"), 0)} {
		p := b.get(path).status(http.StatusOK)
		if strings.Contains(p.body, evil) {
			t.Errorf("%s renders the name unescaped", path)
		}
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the escaped name", path)
		}
		for n := range p.doc.Descendants() {
			if n.Type == html.ElementNode && n.Data == "script" && (n.FirstChild != nil || attr(n, "src") == "") {
				t.Errorf("%s has an inline script: %v", path, n.FirstChild)
			}
		}
	}
	if got := b.get("/projects").text("project-name"); got != evil {
		t.Errorf("name shown as %q, want the text %q", got, evil)
	}
}

func TestProjectPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	b.post("/projects", url.Values{"name": {"Web shop"}, "key": {"web-shop"}})
	pr := a.project("web-shop")

	b.get(projectPath(pr)).status(http.StatusOK)
	if got := b.last.text("project-heading"); got != "Web shop" {
		t.Errorf("heading %q", got)
	}
	if n := len(b.last.findAll("env-row")); n != 2 {
		t.Errorf("%d environment rows, want 2", n)
	}

	// Rename, with a problem first.
	b.post(projectPath(pr), url.Values{"name": {""}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("project-rename"), "error-name")); got != "Required." {
		t.Errorf("rename problem %q", got)
	}
	b.post(projectPath(pr), url.Values{"name": {"Shop"}}).status(http.StatusOK).at(projectPath(pr))
	if b.last.text("project-heading") != "Shop" || b.last.text("flash-success") != "Project renamed to “Shop”." {
		t.Errorf("after rename: heading %q, message %q", b.last.text("project-heading"), b.last.text("flash-success"))
	}
	p := b.htmx(projectPath(pr), url.Values{"name": {"Web shop"}}).status(http.StatusOK)
	if p.text("project-heading") != "Web shop" || !p.has("project-rename") {
		t.Errorf("htmx rename answer: %s", p.body)
	}

	// Add an environment, with a problem first.
	b.get(projectPath(pr))
	b.post(projectPath(pr)+"/envs", url.Values{"name": {"Staging"}, "key": {"prod"}, "description": {"pre-release"}}).
		status(http.StatusUnprocessableEntity)
	create := b.last.must("env-create")
	if got := text(find(create, "error-key")); got != "This key is already used." {
		t.Errorf("environment key problem %q", got)
	}
	if got := attr(input(create, "description"), "value"); got != "pre-release" {
		t.Errorf("description shown again as %q", got)
	}
	b.post(projectPath(pr)+"/envs", url.Values{"name": {"Staging"}, "key": {"staging"}, "description": {"pre-release"}}).
		status(http.StatusOK).at(projectPath(pr))
	row := b.last.row("env-row", "data-key", "staging")
	if row == nil || !strings.Contains(text(row), "pre-release") {
		t.Fatalf("no Staging row: %s", b.last.body)
	}
	if len(a.project("web-shop").Environments[2].Secrets) != 2 {
		t.Errorf("the new environment has no secrets")
	}
}

func TestEnvironmentPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	b.post("/projects", url.Values{"name": {"Web shop"}, "key": {"web-shop"}})
	pr := a.project("web-shop")
	path := envPath(pr, 0)

	b.get(path).status(http.StatusOK)
	if got := b.last.text("env-heading"); got != "Prod" {
		t.Errorf("heading %q", got)
	}
	// Secrets are in the page, masked until revealed by script.
	values := b.last.findAll("secret-value")
	if len(values) != 2 {
		t.Fatalf("%d secrets shown, want 2", len(values))
	}
	for i, v := range values {
		if attr(v, "type") != "password" || attr(v, "value") != pr.Environments[0].Secrets[i].Value || !hasAttr(v, "readonly") {
			t.Errorf("secret %d: %v, want a masked read-only field with the value", i, v.Attr)
		}
	}
	for _, button := range append(b.last.findAll("secret-reveal"), b.last.findAll("secret-copy")...) {
		if !hasAttr(button, "hidden") || !hasAttr(button, "data-js-only") {
			t.Errorf("reveal and copy are shown without script: %v", button.Attr)
		}
	}

	// The form shows the key and sends none; a key posted anyway is checked
	// by the store, and its problem shown beside the key.
	if input(b.last.must("env-settings-form"), "key") != nil {
		t.Error("the settings form has a key field")
	}
	settings := url.Values{"name": {"Production"}, "key": {"bad key"}, "description": {"live"}, "requireChangeComment": {"true"}}
	b.post(path, settings).status(http.StatusBadRequest)
	form := b.last.must("env-settings-form")
	if got := text(find(form, "error-key")); !strings.HasPrefix(got, "Use at most") {
		t.Errorf("settings problem %q", got)
	}
	if !hasAttr(input(form, "requireChangeComment"), "checked") {
		t.Errorf("the ticked box was not kept")
	}
	// An environment's key never changes.
	settings.Set("key", "production")
	b.post(path, settings).status(http.StatusBadRequest)
	if got := text(find(b.last.must("env-settings-form"), "error-key")); got != "The key cannot change once created." {
		t.Errorf("key change problem %q", got)
	}
	settings.Set("key", "prod")
	b.post(path, settings).status(http.StatusOK).at(path)
	env := a.project("web-shop").Environments[0]
	if env.Name != "Production" || env.Key != "prod" || env.Description != "live" || !env.Settings.RequireChangeComment {
		t.Errorf("stored %+v", env)
	}
	if !hasAttr(input(b.last.must("env-settings-form"), "requireChangeComment"), "checked") {
		t.Errorf("the setting is not shown ticked")
	}
	// An unticked box turns the setting off.
	settings.Del("requireChangeComment")
	b.post(path, settings).status(http.StatusOK)
	if a.project("web-shop").Environments[0].Settings.RequireChangeComment {
		t.Errorf("setting still on after unticking")
	}

	// Secrets: add (with a problem first), rename (with a problem first), delete.
	b.post(path+"/secrets", url.Values{"name": {""}, "type": {"server"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("secret-create"), "error-name")); got != "Required." {
		t.Errorf("secret problem %q", got)
	}
	b.post(path+"/secrets", url.Values{"name": {"Backend"}, "type": {"client"}}).status(http.StatusOK).at(path)
	secrets := a.project("web-shop").Environments[0].Secrets
	if len(secrets) != 3 || secrets[2].Name != "Backend" || secrets[2].Type != "client" {
		t.Fatalf("secrets %+v", secrets)
	}
	if b.last.row("secret-row", "data-name", "Backend") == nil {
		t.Errorf("new secret not listed")
	}
	secretPath := path + "/secrets/" + secrets[2].ID.String()
	b.post(secretPath, url.Values{"name": {""}}).status(http.StatusBadRequest)
	renamed := b.last.row("secret-row", "data-name", "Backend")
	if got := text(find(renamed, "error-name")); got != "Required." {
		t.Errorf("rename problem %q", got)
	}
	b.post(secretPath, url.Values{"name": {"Back end"}}).status(http.StatusOK)
	if b.last.row("secret-row", "data-name", "Back end") == nil {
		t.Errorf("renamed secret not listed")
	}
	p := b.htmx(secretPath+"/delete", url.Values{}).status(http.StatusOK)
	if !p.has("secrets") || p.row("secret-row", "data-name", "Back end") != nil || p.text("flash-success") != "Secret deleted." {
		t.Errorf("htmx delete answer: %s", p.body)
	}
	if n := len(a.project("web-shop").Environments[0].Secrets); n != 2 {
		t.Errorf("%d secrets after delete, want 2", n)
	}
}

func TestDeleteEnvironmentAndProject(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/projects")
	b.post("/projects", url.Values{"name": {"Web shop"}, "key": {"web-shop"}})
	pr := a.project("web-shop")

	b.get(envPath(pr, 1) + "/delete").status(http.StatusOK)
	consequences := b.last.text("delete-consequences")
	for _, want := range []string{"“Dev”", "feature flag", "segment", "2 SDK secrets"} {
		if !strings.Contains(consequences, want) {
			t.Errorf("environment confirmation %q does not name %q", consequences, want)
		}
	}
	b.post(envPath(pr, 1)+"/delete", nil).status(http.StatusOK).at(projectPath(pr))
	if b.last.row("env-row", "data-key", "dev") != nil || b.last.text("flash-success") != "Environment “Dev” deleted." {
		t.Errorf("Dev still listed, or no message")
	}

	b.get(projectPath(pr) + "/delete").status(http.StatusOK)
	consequences = b.last.text("delete-consequences")
	for _, want := range []string{"“Web shop”", "its environment “Prod”", "feature flag and segment", "SDK secrets"} {
		if !strings.Contains(consequences, want) {
			t.Errorf("project confirmation %q does not name %q", consequences, want)
		}
	}
	if got := b.last.formAction("delete-confirm"); got != projectPath(pr)+"/delete" {
		t.Errorf("confirmation posts to %q", got)
	}
	// Its key must be typed; anything else deletes nothing.
	b.post(projectPath(pr)+"/delete", url.Values{"confirm": {"web"}}).status(http.StatusBadRequest)
	if got := b.last.text("error-confirm"); got != "Type the project's key, web-shop, exactly." || attr(b.last.must("delete-typed"), "value") != "web" {
		t.Errorf("a wrong key: %q", got)
	}
	b.get(projectPath(pr)).status(http.StatusOK)
	b.post(projectPath(pr)+"/delete", url.Values{"confirm": {"web-shop"}}).status(http.StatusOK).at("/projects")
	if b.last.has("project-row") || b.last.text("flash-success") != "Project “Web shop” deleted." {
		t.Errorf("project still listed, or no message")
	}
	b.get(projectPath(pr)).status(http.StatusNotFound)
	if got := b.last.text("error-heading"); got != "Not found" {
		t.Errorf("deleted project's page: %q", got)
	}
}
