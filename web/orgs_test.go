package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// switcherOrgs lists the organizations the top bar offers.
func switcherOrgs(p *page) []string {
	var out []string
	sel := p.find("switch-org")
	if sel == nil {
		return nil
	}
	for n := range sel.Descendants() {
		if n.Data == "option" {
			out = append(out, text(n))
		}
	}
	return out
}

// An owner creates an organization from the top bar's link: they own it,
// work in it at once, and the first-run guide greets them; the switcher
// lists both organizations and switches between them.
func TestCreateAndSwitchOrganization(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	if href := attr(b.last.must("switch-new-org"), "href"); href != "/organizations/new" {
		t.Fatalf("new organization link %q", href)
	}
	b.get("/organizations/new").must("org-create-form")

	// Bad input changes nothing and says why.
	b.post("/organizations", url.Values{"name": {""}, "key": {"bad key"}}).status(http.StatusBadRequest)
	if b.last.text("error-name") == "" || b.last.text("error-key") == "" {
		t.Errorf("problems not shown: %s", b.last.body)
	}
	b.post("/organizations", url.Values{"name": {"Again"}, "key": {strings.ToUpper(organizations(t, a)[0].Key)}}).status(http.StatusUnprocessableEntity)
	if got := b.last.text("error-key"); got != "This key is already used." {
		t.Errorf("taken key: %q", got)
	}

	b.post("/organizations", url.Values{"name": {"Acme Labs"}, "key": {"acme-labs"}}).status(http.StatusOK).at("/get-started")
	if got := b.last.text("flash-success"); !strings.Contains(got, "Acme Labs") || !strings.Contains(got, "owner") {
		t.Errorf("flash %q", got)
	}
	b.last.must("guide-project-form")
	orgs := switcherOrgs(b.last)
	if len(orgs) != 2 || !slices.Contains(orgs, "Acme Labs") {
		t.Fatalf("switcher lists %v", orgs)
	}
	// The creator is its owner.
	var acme uuid.UUID
	all, err := a.st.IAM().ListOrganizations(t.Context(), a.ownerActor())
	must(t, err)
	for _, o := range all {
		if o.Key == "acme-labs" {
			acme = o.ID
		}
	}
	act, err := a.st.IAM().UserActor(t.Context(), a.owner, a.wsID.String(), acme.String())
	must(t, err)
	if !act.Can("DeleteOrg", core.OrganizationRN("acme-labs")) {
		t.Error("the creator is not the owner")
	}

	// Switch back, and to the new one again: its guide greets, as it has no project.
	b.post("/context", url.Values{"organizationId": {a.orgID.String()}, "next": {"/"}}).status(http.StatusOK)
	if got := b.last.url.Path; got != "/get-started" { // the first organization has no project either
		t.Errorf("at %s", got)
	}
	b.post("/context", url.Values{"organizationId": {acme.String()}, "next": {"/"}}).status(http.StatusOK).at("/get-started")
	b.last.must("guide-step-project")

	// Skipped, the guide no longer greets in this session, and stays reachable.
	b.post("/get-started/skip", nil).status(http.StatusOK).at("/flags")
	b.last.must("no-env")
	b.get("/").at("/flags")
	b.get("/get-started").must("guide-project-form")
	// The other organization still greets.
	b.post("/context", url.Values{"organizationId": {a.orgID.String()}, "next": {"/"}}).at("/get-started")
}

// The guide: step 1 onboards the new organization with the environments
// named, step 2 creates a flag, step 3 shows snippets filled with the
// environment's secrets and the server's URL, and the live check turns to
// Received at the environment's first SDK request.
func TestFirstRunGuide(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.post("/organizations", url.Values{"name": {"Acme"}, "key": {"acme"}}).at("/get-started")
	if b.last.has("guide-flag-form") || b.last.has("snippet-node") {
		t.Error("steps 2 and 3 before step 1")
	}
	b.post("/get-started/project", url.Values{"projectName": {"Shop"}, "projectKey": {"shop"}, "environments": {"Dev, Dev"}}).
		status(http.StatusBadRequest)
	if !strings.Contains(b.last.text("error-environments"), "different names") {
		t.Errorf("duplicate environments: %q", b.last.text("error-environments"))
	}
	b.post("/get-started/project", url.Values{"projectName": {"Shop"}, "projectKey": {"shop"}, "environments": {"Dev, Staging, Prod"}}).
		status(http.StatusOK).at("/get-started")
	if got := b.last.text("guide-project-done"); !strings.Contains(got, "Shop / ") {
		t.Errorf("step 1 done: %q", got)
	}
	w := b.last
	org := organizationByKey(t, a, "acme")
	if !org.Initialized {
		t.Error("the organization is not initialized")
	}
	act, err := a.st.IAM().UserActor(t.Context(), a.owner, a.wsID.String(), org.ID.String())
	must(t, err)
	projects, err := a.st.Projects().ListProjects(t.Context(), act)
	must(t, err)
	if len(projects) != 1 || len(projects[0].Environments) != 3 {
		t.Fatalf("projects %+v", projects)
	}

	// Step 2.
	b.post("/get-started/flag", url.Values{"name": {""}, "key": {""}}).status(http.StatusBadRequest)
	b.post("/get-started/flag", url.Values{"name": {"New checkout"}, "key": {"new-checkout"}}).status(http.StatusOK).at("/get-started")
	if got := b.last.text("guide-flag-done"); !strings.Contains(got, "new-checkout") {
		t.Errorf("step 2 done: %q (before: %s)", got, w.url)
	}

	// Step 3: the working environment's secrets and the server's URL.
	uc, err := a.st.IAM().UserContext(t.Context(), a.owner)
	must(t, err)
	wp, err := a.st.Workplace().FrameAt(t.Context(), iam.PageSession{Actor: act, Context: uc})
	must(t, err)
	var server, client string
	for _, s := range wp.Env.Secrets {
		if s.Type == core.SecretServer {
			server = s.Value
		} else {
			client = s.Value
		}
	}
	// One SDK's snippet at a time: the Node server SDK's first, the others
	// by their links (?sdk=).
	if b.last.has("snippet-js") || b.last.has("snippet-ofrep") {
		t.Error("the guide shows more than the chosen SDK's snippet")
	}
	node := text(b.last.must("snippet-node"))
	js := text(b.get("/get-started?sdk=js").must("snippet-js"))
	ofrep := text(b.get("/get-started?sdk=ofrep").must("snippet-ofrep"))
	for name, want := range map[string][]string{
		node:  {"@featbit/node-server-sdk", "'" + server + "'", "'http://bunting.test'", "'new-checkout'"},
		js:    {"@featbit/js-client-sdk", "'" + client + "'", "'ws://bunting.test'", "'new-checkout'"},
		ofrep: {"@openfeature/ofrep-provider", "'" + server + "'", "'http://bunting.test'"},
	} {
		for _, w := range want {
			if !strings.Contains(name, w) {
				t.Errorf("snippet lacks %s:\n%s", w, name)
			}
		}
	}
	if strings.Contains(js, server) {
		t.Error("the browser snippet carries the server secret")
	}
	if !strings.Contains(text(b.get("/get-started?sdk=curl").must("snippet-curl")), "http://bunting.test/ofrep/v1/evaluate/flags/new-checkout") {
		t.Error("curl snippet")
	}

	// The live check waits, then sees an SDK's first request, recorded as
	// the SDK endpoints record it.
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Waiting for the first evaluation…" {
		t.Errorf("check %q", got)
	}
	a.sdkRequest(server)
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Received" {
		t.Errorf("check after a request: %q", got)
	}

	// The guide stays reachable from the flag list.
	if href := attr(b.get("/flags").must("connect-app"), "href"); href != "/get-started" {
		t.Errorf("connect link %q", href)
	}
}

// organizationByKey reads an organization of the owner's workspace.
func organizationByKey(t *testing.T, a *app, key string) iam.Organization {
	t.Helper()
	all, err := a.st.IAM().ListOrganizations(context.Background(), a.ownerActor())
	must(t, err)
	for _, o := range all {
		if o.Key == key {
			return o
		}
	}
	t.Fatalf("no organization %q", key)
	return iam.Organization{}
}

// Deleting an organization names what goes with it, needs its key typed,
// moves the person to another organization, and is refused for the last one.
func TestDeleteOrganizationPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)

	// The only organization cannot be deleted, and the page says so.
	first := organizations(t, a)[0]
	p := b.get("/organization/delete").status(http.StatusOK)
	if p.has("delete-submit") || !strings.Contains(p.text("delete-blocked"), "only organization") {
		t.Errorf("last organization: %s", p.text("delete-blocked"))
	}
	b.post("/organization/delete", url.Values{"confirm": {first.Key}}).status(http.StatusUnprocessableEntity)
	if !strings.Contains(b.last.text("delete-blocked"), "at least one organization") {
		t.Errorf("refusal: %q", b.last.text("delete-blocked"))
	}
	if len(organizations(t, a)) != 1 {
		t.Fatal("the last organization went")
	}

	b.get("/organizations/new")
	b.post("/organizations", url.Values{"name": {"Acme"}, "key": {"acme"}}).at("/get-started")
	b.post("/get-started/project", url.Values{"projectName": {"Shop"}, "projectKey": {"shop"}, "environments": {"Dev, Prod"}}).at("/get-started")
	b.post("/get-started/flag", url.Values{"name": {"Checkout"}, "key": {"checkout"}}).at("/get-started")

	if href := attr(b.get("/organization").must("org-delete"), "href"); href != "/organization/delete" {
		t.Fatalf("delete link %q", href)
	}
	p = b.get("/organization/delete").status(http.StatusOK)
	got := p.text("delete-consequences")
	for _, want := range []string{"“Acme” (key acme)", "1 project", "2 environments", "1 feature flag", "0 segments", "1 member", "another of your organizations"} {
		if !strings.Contains(got, want) {
			t.Errorf("consequences lack %q: %s", want, got)
		}
	}
	b.post("/organization/delete", url.Values{"confirm": {"wrong"}}).status(http.StatusBadRequest)
	if len(organizations(t, a)) != 2 {
		t.Fatal("deleted without its key typed")
	}
	b.post("/organization/delete", url.Values{"confirm": {"acme"}}).status(http.StatusOK)
	if got := b.last.text("flash-success"); got != "Organization “Acme” deleted." {
		t.Errorf("flash %q", got)
	}
	if got := b.last.text("org-name"); got != first.Name {
		t.Errorf("now working in %q", got)
	}
	if n := len(organizations(t, a)); n != 1 {
		t.Errorf("%d organizations left", n)
	}
}

func organizations(t *testing.T, a *app) []iam.Organization {
	t.Helper()
	all, err := a.st.IAM().ListOrganizations(context.Background(), a.ownerActor())
	must(t, err)
	return all
}

// Members without the permission are offered neither creating nor deleting
// an organization, and the server refuses them when they try.
func TestOrganizationLifecyclePermissions(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	createOrganization(t, a, "Other", "other", true) // so deleting is not refused for being the last
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	dev := a.signedIn("dev@example.com", memberPassword)
	if dev.last.has("switch-new-org") {
		t.Error("a Developer is offered to create an organization")
	}
	if !dev.get("/organizations/new").has("org-create-denied") {
		t.Error("the new organization page offers a Developer the form")
	}
	dev.post("/organizations", url.Values{"name": {"Mine"}, "key": {"mine"}}).status(http.StatusForbidden)
	dev.get("/organization/delete").status(http.StatusForbidden)
	dev.post("/organization/delete", url.Values{"confirm": {organizations(t, a)[0].Key}}).status(http.StatusForbidden)
	if n := len(organizations(t, a)); n != 2 {
		t.Errorf("%d organizations", n)
	}

	// An Administrator may create organizations, not delete this one.
	a.addMember("admin@example.com", core.AdministratorPolicyID)
	admin := a.signedIn("admin@example.com", memberPassword)
	if !admin.last.has("switch-new-org") || admin.get("/organization").has("org-delete") {
		t.Error("an Administrator's organization controls")
	}
	admin.post("/organization/delete", url.Values{"confirm": {organizations(t, a)[0].Key}}).status(http.StatusForbidden)
	// A member who may not create projects is not sent to the guide, and
	// the guide says whom to ask.
	if got := dev.get("/").url.Path; got != "/flags" {
		t.Errorf("a Developer without projects lands on %s", got)
	}
	if !dev.get("/get-started").has("guide-no-project") {
		t.Error("the guide offers a Developer the project form")
	}
}

// An Administrator creates organizations from the pages until the bound,
// which the form then explains; the workspace's owner, in none of them, is
// still offered the workspace's settings and saves them.
func TestWorkspaceOwnerKeepsTheWorkspacePage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.addMember("admin@example.com", core.AdministratorPolicyID)
	admin := a.signedIn("admin@example.com", memberPassword)
	for i := range iam.MaxCreatedOrganizations {
		admin.get("/organizations/new")
		admin.post("/organizations", url.Values{"name": {fmt.Sprintf("Theirs %d", i)}, "key": {fmt.Sprintf("theirs-%d", i)}}).
			status(http.StatusOK).at("/get-started")
	}
	admin.get("/organizations/new")
	admin.post("/organizations", url.Values{"name": {"One more"}, "key": {"one-more"}}).status(http.StatusUnprocessableEntity)
	if got := admin.last.text("form-error"); !strings.Contains(got, "No more organizations") {
		t.Errorf("the form says %q, want why no more organizations can be created", got)
	}
	var n int
	must(t, a.pool.QueryRow(t.Context(), `SELECT count(*) FROM organizations`).Scan(&n))
	if n != 1+iam.MaxCreatedOrganizations {
		t.Errorf("%d organizations, want %d", n, 1+iam.MaxCreatedOrganizations)
	}

	owner := a.signedIn(ownerEmail, ownerPassword)
	p := owner.get("/workspace").status(http.StatusOK)
	if !p.has("workspace-form") || !p.has("sso-form") {
		t.Fatal("the workspace's owner is not offered the workspace's settings")
	}
	owner.post("/workspace", url.Values{"name": {"Owned"}, "key": {"owned"}}).status(http.StatusOK)
	if ws, err := a.q.GetWorkspace(t.Context(), a.wsID); err != nil || ws.Key != "owned" {
		t.Errorf("workspace key %q (%v), want owned", ws.Key, err)
	}
}
