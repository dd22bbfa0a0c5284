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

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

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
	dev := core.DeveloperPolicyID.String()
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
	a.addMember("admin@example.com", core.AdministratorPolicyID)
	admin := a.signedIn("admin@example.com", memberPassword)
	if p := admin.get("/members"); strings.Contains(p.body, password) {
		t.Errorf("another administrator sees the initial password")
	}

	// Without choices, the organization's default permissions apply.
	_, err := a.st.IAM().UpdateOrganization(t.Context(), a.ownerActor(), iam.OrganizationInput{Name: "Default Organization",
		DefaultPermissions: &iam.DefaultPermissions{PolicyIDs: []uuid.UUID{core.AdministratorPolicyID}, GroupIDs: []uuid.UUID{}}})
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
	id := a.addMember("dev@example.com", core.DeveloperPolicyID)
	g, err := a.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Release team", Description: "Ships things."})
	must(t, err)
	must(t, a.st.IAM().AddGroupPolicy(ctx, owner, g.ID, core.AdministratorPolicyID))
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
