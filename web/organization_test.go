package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

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
	g, err := a.st.IAM().CreateGroup(t.Context(), a.ownerActor(), iam.GroupInput{Name: "Support"})
	must(t, err)
	b.post("/organization", url.Values{"name": {"Acme"}, "defaults": {"true"},
		"policyIds": {core.DeveloperPolicyID.String()}, "groupIds": {g.ID.String()}}).status(http.StatusOK).at("/organization")
	if b.last.text("flash-success") != "Organization “Acme” saved." || b.last.text("org-name") != "" && b.last.text("org-name") != "Acme" {
		t.Errorf("message %q", b.last.text("flash-success"))
	}
	orgs, err := a.st.IAM().ListOrganizations(t.Context(), a.ownerActor())
	must(t, err)
	if orgs[0].Name != "Acme" || !slices.Equal(orgs[0].DefaultPermissions.PolicyIDs, []uuid.UUID{core.DeveloperPolicyID}) ||
		!slices.Equal(orgs[0].DefaultPermissions.GroupIDs, []uuid.UUID{g.ID}) {
		t.Errorf("organization %+v", orgs[0])
	}
	defaults := b.last.must("org-default-policies")
	if !hasAttr(inputValued(defaults, core.DeveloperPolicyID.String()), "checked") {
		t.Errorf("Developer not ticked as a default")
	}
	// Untick everything.
	b.post("/organization", url.Values{"name": {"Acme"}, "defaults": {"true"}}).status(http.StatusOK)
	orgs, _ = a.st.IAM().ListOrganizations(t.Context(), a.ownerActor())
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
