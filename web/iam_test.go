package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store"
)

// memberID is the id of the user with that email.
func memberID(t *testing.T, a *app, email string) string {
	t.Helper()
	var id string
	must(t, a.pool.QueryRow(t.Context(), `SELECT id::text FROM users WHERE email = $1`, email).Scan(&id))
	return id
}

// policyByKey is the organization's or a built-in policy with that key.
func (a *app) policyByKey(key string) store.Policy {
	a.t.Helper()
	ps, err := a.st.ListPolicies(a.t.Context(), a.ownerActor(), store.IAMFilter{Page: store.Page{Size: 100}})
	must(a.t, err)
	for _, p := range ps.Items {
		if p.Key == key {
			return p
		}
	}
	a.t.Fatalf("no policy %q", key)
	return store.Policy{}
}

// directPolicies are the names of a member's direct policies.
func (a *app) directPolicies(member string) []string {
	a.t.Helper()
	ps, err := a.st.ListMemberDirectPolicies(a.t.Context(), a.ownerActor(), uuid.MustParse(member), store.IAMFilter{Page: store.Page{Size: 100}})
	must(a.t, err)
	var out []string
	for _, p := range ps.Items {
		out = append(out, p.Name)
	}
	return out
}

func TestAddMember(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/members").status(http.StatusOK)
	if b.last.row("member-row", "data-email", ownerEmail) == nil {
		t.Fatalf("the owner is not listed")
	}
	if got := text(b.last.row("member-row", "data-email", ownerEmail)); !strings.Contains(got, "No groups") {
		t.Errorf("owner row %q", got)
	}

	// Problems show next to their fields, with what was typed kept.
	b.post("/members", url.Values{"email": {""}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("member-add"), "error-email")); got != "Enter the new member's email." {
		t.Errorf("email problem %q", got)
	}
	b.post("/members", url.Values{"email": {"not an email"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("member-add"), "error-email")); got != "This email is not valid." {
		t.Errorf("email problem %q", got)
	}
	if got := attr(input(b.last.must("member-add"), "email"), "value"); got != "not an email" {
		t.Errorf("email shown again as %q", got)
	}
	b.post("/members", url.Values{"email": {"x@example.com"}, "policyIds": {"not-a-uuid"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("member-add"), "error-policyIds")); got != "Choose among this organization's policies." {
		t.Errorf("policies problem %q", got)
	}
	if !hasAttr(b.last.must("member-add-access"), "open") {
		t.Errorf("the choice of policies is closed although it has a problem")
	}

	// The initial password is shown to the inviter once, in the answer.
	dev := store.DeveloperPolicyID.String()
	b.post("/members", url.Values{"email": {"dev@example.com"}, "policyIds": {dev}}).status(http.StatusOK)
	password := attr(b.last.must("initial-password"), "value")
	if len(password) != 16 || b.last.text("flash-success") != "dev@example.com is a member now." {
		t.Fatalf("initial password %q, message %q", password, b.last.text("flash-success"))
	}
	if b.last.row("member-row", "data-email", "dev@example.com") == nil {
		t.Errorf("the new member is not listed")
	}
	// Adding them again says they already are one, and shows no password.
	b.post("/members", url.Values{"email": {"dev@example.com"}}).status(http.StatusOK)
	if got := b.last.text("flash-success"); got != "dev (dev@example.com) is already a member; nothing changed." || b.last.has("initial-password") {
		t.Errorf("adding an existing member says %q", got)
	}
	id := memberID(t, a, "dev@example.com")
	if got := a.directPolicies(id); !slices.Equal(got, []string{"Developer"}) {
		t.Errorf("new member's policies %v", got)
	}
	for _, path := range []string{"/members", "/members/" + id, "/policies/" + dev + "?tab=members"} {
		if p := b.get(path).status(http.StatusOK); p.has("initial-password") || strings.Contains(p.body, password) {
			t.Errorf("%s shows the initial password again", path)
		}
	}
	a.signedIn("dev@example.com", password) // the password works

	// Another administrator never sees it.
	a.addMember("admin@example.com", store.AdministratorPolicyID)
	admin := a.signedIn("admin@example.com", memberPassword)
	if p := admin.get("/members"); strings.Contains(p.body, password) {
		t.Errorf("another administrator sees the initial password")
	}

	// Without choices, the organization's default permissions apply.
	_, err := a.st.UpdateOrganization(t.Context(), a.ownerActor(), store.OrganizationInput{Name: "Default Organization",
		DefaultPermissions: &store.DefaultPermissions{PolicyIDs: []uuid.UUID{store.AdministratorPolicyID}, GroupIDs: []uuid.UUID{}}})
	must(t, err)
	p := b.htmx("/members", url.Values{"email": {"ana@example.com"}}).status(http.StatusOK)
	if p.has("switcher") || !p.has("initial-password") || p.row("member-row", "data-email", "ana@example.com") == nil {
		t.Errorf("htmx answer is not the regions: %s", p.body)
	}
	if got := a.directPolicies(memberID(t, a, "ana@example.com")); !slices.Equal(got, []string{"Administrator"}) {
		t.Errorf("default permissions not applied: %v", got)
	}
}

func TestMembersSearchAndPaging(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for i := range 22 {
		a.addMember(fmt.Sprintf("user%02d@example.com", i))
	}
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/members").status(http.StatusOK)
	if n := len(b.last.findAll("member-row")); n != 20 {
		t.Errorf("%d rows on page 1, want 20", n)
	}
	if got := b.last.text("pager-label"); got != "Page 1 of 2 · 23 members" {
		t.Errorf("pager %q", got)
	}
	b.get(attr(b.last.must("pager-next"), "href")).status(http.StatusOK)
	if n := len(b.last.findAll("member-row")); n != 3 {
		t.Errorf("%d rows on page 2, want 3", n)
	}
	b.get("/members?q=USER07").status(http.StatusOK)
	if rows := b.last.findAll("member-row"); len(rows) != 1 || attr(rows[0], "data-email") != "user07@example.com" {
		t.Errorf("search found %d rows", len(rows))
	}
	b.get("/members?q=nobody").status(http.StatusOK)
	if !b.last.has("list-empty") {
		t.Errorf("no empty message for a search without results")
	}
	b.get("/members?page=x").status(http.StatusBadRequest)
}

func TestMemberPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	id := a.addMember("dev@example.com", store.DeveloperPolicyID)
	g, err := a.st.CreateGroup(ctx, owner, store.GroupInput{Name: "Release team", Description: "Ships things."})
	must(t, err)
	must(t, a.st.AddGroupPolicy(ctx, owner, g.ID, store.AdministratorPolicyID))
	b := a.signedIn(ownerEmail, ownerPassword)
	path := "/members/" + id.String()
	b.get(path).status(http.StatusOK)
	if got := b.last.text("member-heading"); got != "dev@example.com" {
		t.Errorf("heading %q", got)
	}
	if b.last.row("iam-row", "data-key", "Release team") != nil {
		t.Errorf("a group the member is not in is listed without the switch")
	}

	// The all-groups list offers the group; adding it shows the inherited policy.
	b.get(path + "?gall=true").status(http.StatusOK)
	row := find(b.last.must("member-groups"), "iam-row")
	if attr(row, "data-key") != "Release team" || find(row, "iam-row-add") == nil {
		t.Fatalf("all-groups row: %s", text(row))
	}
	action := attrOfForm(row)
	b.post(action, url.Values{"gall": {"true"}}).status(http.StatusOK).at(path + "?gall=true")
	if got := b.last.text("flash-success"); got != "Added to the group." {
		t.Errorf("message %q", got)
	}
	row = find(b.last.must("member-groups"), "iam-row")
	if find(row, "iam-row-attached") == nil || find(row, "iam-row-remove") == nil {
		t.Errorf("the group is not marked after adding: %s", text(row))
	}
	inherited := b.last.must("member-inherited")
	if r := find(inherited, "iam-row"); r == nil || !strings.Contains(text(r), "Administrator") || !strings.Contains(text(r), "Release team") {
		t.Errorf("inherited policies: %s", text(inherited))
	}

	// htmx gets the lists and the message; removing the group drops the inherited policy.
	p := b.htmx(attrOfForm(find(b.last.must("member-groups"), "iam-row")), url.Values{"gall": {"true"}}).status(http.StatusOK)
	if p.has("switcher") || p.text("flash-success") != "Removed from the group." || find(p.must("member-inherited"), "iam-row") != nil {
		t.Errorf("htmx remove answer: %s", p.body)
	}

	// Direct policies: give and take.
	b.get(path + "?pall=true&pq=admin").status(http.StatusOK)
	row = find(b.last.must("member-policies"), "iam-row")
	if attr(row, "data-key") != "Administrator" {
		t.Fatalf("policy search found %q", attr(row, "data-key"))
	}
	b.post(attrOfForm(row), url.Values{"pall": {"true"}, "pq": {"admin"}}).status(http.StatusOK)
	if got := a.directPolicies(id.String()); !slices.Equal(got, []string{"Administrator", "Developer"}) {
		t.Errorf("policies after giving %v", got)
	}
	b.get(path)
	dev := b.last.row("iam-row", "data-key", "Developer")
	b.post(attrOfForm(dev), nil).status(http.StatusOK)
	if got := a.directPolicies(id.String()); !slices.Equal(got, []string{"Administrator"}) {
		t.Errorf("policies after taking %v", got)
	}

	// Removing from the organization goes through a confirmation.
	b.get(path)
	b.get(attr(b.last.must("member-remove"), "href")).status(http.StatusOK)
	if !strings.Contains(b.last.text("delete-consequences"), "dev@example.com loses every policy") {
		t.Errorf("consequences %q", b.last.text("delete-consequences"))
	}
	b.post(b.last.formAction("delete-confirm"), nil).status(http.StatusOK).at("/members")
	if b.last.row("member-row", "data-email", "dev@example.com") != nil || b.last.text("flash-success") != "dev@example.com was removed from the organization." && !strings.HasSuffix(b.last.text("flash-success"), "(dev@example.com) was removed from the organization.") {
		t.Errorf("member still listed after removal")
	}
	b.get(path).status(http.StatusNotFound)
}

// attrOfForm is the action of the first form inside n.
func attrOfForm(n *html.Node) string {
	if n != nil {
		for d := range n.Descendants() {
			if d.Type == html.ElementNode && d.Data == "form" {
				return attr(d, "action")
			}
		}
	}
	return ""
}

// The last owner cannot be taken away: the pages say so and nothing changes.
func TestLastOwnerRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	path := "/members/" + a.owner.String()
	b.get(path).status(http.StatusOK)
	owner := b.last.row("iam-row", "data-key", "Owner")
	if owner == nil {
		t.Fatalf("the owner's page lacks the Owner policy: %s", text(b.last.must("member-policies")))
	}
	const want = "This would leave the organization without an owner. Give another member the Owner policy first."
	p := b.post(attrOfForm(owner), nil).status(http.StatusUnprocessableEntity)
	if got := p.text("flash-error"); got != want {
		t.Errorf("refusal %q", got)
	}
	if !p.has("member-policies") {
		t.Errorf("the refusal is not shown on the member's page")
	}
	p = b.htmx(attrOfForm(owner), nil).status(http.StatusUnprocessableEntity)
	if got := p.text("flash-error"); got != want || !strings.Contains(p.body, `id="member-policies-body"`) {
		t.Errorf("htmx refusal %q: %s", got, p.body)
	}
	// Removing them from the organization is refused on the confirmation page.
	b.get(path + "/remove").status(http.StatusOK)
	p = b.post(path+"/remove", nil).status(http.StatusUnprocessableEntity)
	if got := p.text("flash-error"); got != want || !p.has("delete-confirm") {
		t.Errorf("removal refusal %q", got)
	}
	if got := a.directPolicies(a.owner.String()); !slices.Equal(got, []string{"Owner"}) {
		t.Errorf("owner's policies now %v", got)
	}
	b.get("/members").status(http.StatusOK)
	if b.last.row("member-row", "data-email", ownerEmail) == nil {
		t.Errorf("the owner was removed")
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	dev := a.addMember("dev@example.com")
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/groups").status(http.StatusOK)
	if !b.last.has("list-empty") {
		t.Errorf("no empty message")
	}
	b.post("/groups", url.Values{"name": {" "}, "description": {strings.Repeat("x", 513)}}).status(http.StatusBadRequest)
	form := b.last.must("group-create")
	if text(find(form, "error-name")) != "Required." || text(find(form, "error-description")) != "Use at most 512 characters." {
		t.Errorf("problems: name %q, description %q", text(find(form, "error-name")), text(find(form, "error-description")))
	}
	b.post("/groups", url.Values{"name": {"Release team"}, "description": {"Ships things."}}).status(http.StatusOK).at("/groups")
	if b.last.text("flash-success") != "Group “Release team” created." || b.last.row("group-row", "data-name", "Release team") == nil {
		t.Fatalf("group not created: %s", b.last.body)
	}
	p := b.htmx("/groups", url.Values{"name": {"Support"}}).status(http.StatusOK)
	if p.has("switcher") || p.row("group-row", "data-name", "Support") == nil {
		t.Errorf("htmx create: %s", p.body)
	}
	b.get("/groups?q=supp")
	if rows := b.last.findAll("group-row"); len(rows) != 1 || attr(rows[0], "data-name") != "Support" {
		t.Errorf("search found %d groups", len(rows))
	}

	b.get("/groups")
	href := attr(find(b.last.row("group-row", "data-name", "Release team"), "group-name"), "href")
	b.get(href).status(http.StatusOK)
	if b.last.text("group-heading") != "Release team" {
		t.Errorf("heading %q", b.last.text("group-heading"))
	}
	// Rename, with a problem first.
	b.post(href, url.Values{"name": {""}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("group-settings"), "error-name")); got != "Required." {
		t.Errorf("rename problem %q", got)
	}
	b.post(href, url.Values{"name": {"Release crew"}, "description": {"Ships."}}).status(http.StatusOK).at(href)
	if b.last.text("group-heading") != "Release crew" || b.last.text("flash-success") != "Group “Release crew” saved." {
		t.Errorf("after rename: %q %q", b.last.text("group-heading"), b.last.text("flash-success"))
	}

	// Members: add from the "show all" list, then remove.
	b.get(href + "?mall=true&mq=dev")
	row := b.last.row("iam-row", "data-key", "dev@example.com")
	if row == nil || find(row, "iam-row-add") == nil {
		t.Fatalf("show-all members list: %s", text(b.last.must("group-members")))
	}
	b.post(attrOfForm(row), url.Values{"mall": {"true"}, "mq": {"dev"}}).status(http.StatusOK)
	b.get(href)
	if b.last.row("iam-row", "data-key", "dev@example.com") == nil {
		t.Fatalf("member not in the group")
	}
	// Policies: give Developer, which the member then inherits.
	b.get(href + "?pall=true")
	b.post(attrOfForm(b.last.row("iam-row", "data-key", "Developer")), url.Values{"pall": {"true"}}).status(http.StatusOK)
	inherited, err := a.st.ListMemberInheritedPolicies(t.Context(), a.ownerActor(), dev, store.IAMFilter{Page: store.Page{Size: 10}})
	must(t, err)
	if len(inherited.Items) != 1 || inherited.Items[0].Name != "Developer" {
		t.Errorf("inherited %+v", inherited.Items)
	}
	b.get(href)
	b.post(attrOfForm(b.last.row("iam-row", "data-key", "Developer")), nil).status(http.StatusOK)
	b.post(attrOfForm(b.last.row("iam-row", "data-key", "dev@example.com")), nil).status(http.StatusOK)
	if find(b.last.must("group-members"), "iam-row") != nil || find(b.last.must("group-policies"), "iam-row") != nil {
		t.Errorf("group still has members or policies")
	}

	// Delete through the confirmation.
	b.get(attr(b.last.must("group-delete"), "href")).status(http.StatusOK)
	b.post(b.last.formAction("delete-confirm"), nil).status(http.StatusOK).at("/groups")
	if b.last.row("group-row", "data-name", "Release crew") != nil || b.last.text("flash-success") != "Group “Release crew” deleted." {
		t.Errorf("group still listed")
	}
}

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
	developer := "/policies/" + store.DeveloperPolicyID.String()
	b.get(developer).status(http.StatusOK)
	if b.last.has("statements-save") || !b.last.has("builtin-notice") || !b.last.has("policy-clone") || len(b.last.findAll("statement")) != 5 {
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
	if len(clone.Statements) != 5 || clone.Type != store.PolicyCustomerManaged || !b.last.has("statements-save") {
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
	g, err := a.st.CreateGroup(t.Context(), a.ownerActor(), store.GroupInput{Name: "Support"})
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
	gps, err := a.st.ListGroupPolicies(t.Context(), a.ownerActor(), g.ID, store.IAMFilter{Page: store.Page{Size: 10}})
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

func TestOrganizationPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/organization").status(http.StatusOK)
	if !b.last.has("nav-organization") {
		t.Errorf("no navigation entry")
	}
	b.post("/organization", url.Values{"name": {""}, "defaults": {"true"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("org-settings"), "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	g, err := a.st.CreateGroup(t.Context(), a.ownerActor(), store.GroupInput{Name: "Support"})
	must(t, err)
	b.post("/organization", url.Values{"name": {"Acme"}, "defaults": {"true"},
		"policyIds": {store.DeveloperPolicyID.String()}, "groupIds": {g.ID.String()}}).status(http.StatusOK).at("/organization")
	if b.last.text("flash-success") != "Organization “Acme” saved." || b.last.text("org-name") != "" && b.last.text("org-name") != "Acme" {
		t.Errorf("message %q", b.last.text("flash-success"))
	}
	orgs, err := a.st.ListOrganizations(t.Context(), a.ownerActor())
	must(t, err)
	if orgs[0].Name != "Acme" || !slices.Equal(orgs[0].DefaultPermissions.PolicyIDs, []uuid.UUID{store.DeveloperPolicyID}) ||
		!slices.Equal(orgs[0].DefaultPermissions.GroupIDs, []uuid.UUID{g.ID}) {
		t.Errorf("organization %+v", orgs[0])
	}
	defaults := b.last.must("org-default-policies")
	if !hasAttr(inputValued(defaults, store.DeveloperPolicyID.String()), "checked") {
		t.Errorf("Developer not ticked as a default")
	}
	// Untick everything.
	b.post("/organization", url.Values{"name": {"Acme"}, "defaults": {"true"}}).status(http.StatusOK)
	orgs, _ = a.st.ListOrganizations(t.Context(), a.ownerActor())
	if len(orgs[0].DefaultPermissions.PolicyIDs)+len(orgs[0].DefaultPermissions.GroupIDs) != 0 {
		t.Errorf("defaults not cleared: %+v", orgs[0].DefaultPermissions)
	}
	b.post("/organization", url.Values{"name": {"Acme"}, "defaults": {"true"}, "policyIds": {uuid.NewString()}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("org-settings"), "error-defaultPermissions")); got != "Choose among this organization's policies and groups." {
		t.Errorf("defaults problem %q", got)
	}
}

// inputValued is the input inside root whose value is value.
func inputValued(root *html.Node, value string) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "value") == value {
			return n
		}
	}
	return &html.Node{}
}

func TestAccessTokenPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	owner := a.ownerActor()
	personal, err := a.st.CreateAccessToken(t.Context(), owner, store.AccessTokenInput{Name: "laptop", Type: store.TokenPersonal})
	must(t, err)
	service, err := a.st.CreateAccessToken(t.Context(), owner, store.AccessTokenInput{Name: "deploy", Type: store.TokenService,
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
	ci, err := a.st.ListAccessTokens(t.Context(), owner, store.AccessTokenFilter{Name: "ci", Page: store.Page{Size: 10}})
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
	got, err := a.st.GetAccessToken(t.Context(), owner, service.ID)
	must(t, err)
	if got.Name != "deploy bot" || len(got.Permissions) != 1 || got.Permissions[0].ResourceType != "env" {
		t.Errorf("token after save %+v", got)
	}
}

// A Developer sees no IAM navigation; IAM pages and actions answer the 403 page.
func TestDeveloperCannotManageIAM(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	other := a.addMember("other@example.com", store.DeveloperPolicyID)
	g, err := a.st.CreateGroup(ctx, owner, store.GroupInput{Name: "Support"})
	must(t, err)
	pol, err := a.st.CreatePolicy(ctx, owner, store.PolicyInput{Name: "Mine", Key: "mine"})
	must(t, err)
	a.addMember("dev@example.com", store.DeveloperPolicyID)
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
		m + "/policies/" + store.OwnerPolicyID.String() + "/add": {},
		m + "/groups/" + g.ID.String() + "/add":                  {},
		"/groups":                                                {"name": {"Mine"}},
		gp:                                                       {"name": {"Renamed"}},
		gp + "/delete":                                           {},
		gp + "/members/" + other.String() + "/add":                {},
		gp + "/policies/" + store.OwnerPolicyID.String() + "/add": {},
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
	tok, err := a.st.CreateAccessToken(ctx, owner, store.AccessTokenInput{Name: "svc", Type: store.TokenService,
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

	after, err := a.st.GetPolicy(ctx, owner, pol.ID)
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
	_, err := a.st.CreateProject(ctx, owner, store.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	dev := a.addMember("dev@example.com", store.DeveloperPolicyID)
	g, err := a.st.CreateGroup(ctx, owner, store.GroupInput{Name: "Support"})
	must(t, err)
	must(t, a.st.AddGroupMember(ctx, owner, g.ID, dev))
	pol, err := a.st.CreatePolicy(ctx, owner, store.PolicyInput{Name: "Mine", Key: "mine"})
	must(t, err)
	_, err = a.st.UpdatePolicyStatements(ctx, owner, pol.ID, []access.Statement{
		{ResourceType: "flag", Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/web:env/*:flag/*"}}})
	must(t, err)
	tok, err := a.st.CreateAccessToken(ctx, owner, store.AccessTokenInput{Name: "svc", Type: store.TokenService,
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
		"/policies/" + store.OwnerPolicyID.String(): "builtin-notice",
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
	g, err := a.st.CreateGroup(t.Context(), a.ownerActor(), store.GroupInput{Name: evil, Description: evil})
	must(t, err)
	pol, err := a.st.CreatePolicy(t.Context(), a.ownerActor(), store.PolicyInput{Name: evil, Key: "evil", Description: evil})
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
