package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

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
	inherited, err := a.st.IAM().ListMemberInheritedPolicies(t.Context(), a.ownerActor(), dev, iam.IAMFilter{Page: core.Page{Size: 10}})
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
