package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestUpdateOrganization(t *testing.T) {
	s := newServer(t)
	g := s.createGroup("Newcomers")
	p := s.createPolicy("Readers", "readers")
	theirs := s.otherOrganizationIAM()

	renamed := decode[iam.Organization](t, s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": " Acme "}).ok(t))
	if renamed.Name != "Acme" || renamed.Key != "default-organization" ||
		!slices.Equal(renamed.DefaultPermissions.PolicyIDs, []uuid.UUID{core.DeveloperPolicyID}) {
		t.Fatalf("renamed %+v: defaults must stay when not given", renamed)
	}
	set := decode[iam.Organization](t, s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Acme",
		"defaultPermissions": map[string]any{"policyIds": []uuid.UUID{p.ID, core.DeveloperPolicyID, p.ID}, "groupIds": []uuid.UUID{g.ID}}}).ok(t))
	if !slices.Equal(set.DefaultPermissions.PolicyIDs, []uuid.UUID{p.ID, core.DeveloperPolicyID}) || !slices.Equal(set.DefaultPermissions.GroupIDs, []uuid.UUID{g.ID}) {
		t.Fatalf("defaults %+v", set.DefaultPermissions)
	}

	// A new member without explicit access gets the new defaults.
	m := s.addByEmail(map[string]any{"email": "new@example.com"})
	if len(m.Groups) != 1 || m.Groups[0].ID != g.ID {
		t.Errorf("new member's groups %+v, want the default group", m.Groups)
	}
	if got := policyIDsOf(t, s, m.ID); len(got) != 2 {
		t.Errorf("new member's policies %v, want the two defaults", got)
	}

	for _, bad := range []map[string]any{
		{"policyIds": []uuid.UUID{theirs.policy}},
		{"policyIds": []uuid.UUID{uuid.New()}},
		{"groupIds": []uuid.UUID{theirs.group}},
		{"groupIds": []uuid.UUID{core.DeveloperPolicyID}},
	} {
		s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Evil", "defaultPermissions": bad}).
			fails(t, http.StatusBadRequest, "defaultPermissions_is_invalid")
	}
	s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "name_is_required")
	s.do("PUT", "/api/v1/organizations", s.owner, `{"defaultPermissions":[]}`).fails(t, http.StatusBadRequest, "body_is_invalid")

	// Clearing the defaults is allowed.
	cleared := decode[iam.Organization](t, s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Acme",
		"defaultPermissions": map[string]any{"policyIds": nil, "groupIds": []uuid.UUID{}}}).ok(t))
	if len(cleared.DefaultPermissions.PolicyIDs) != 0 || cleared.DefaultPermissions.PolicyIDs == nil || len(cleared.DefaultPermissions.GroupIDs) != 0 {
		t.Errorf("cleared defaults %+v", cleared.DefaultPermissions)
	}
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if orgs[0].Name != "Acme" {
		t.Errorf("organization %+v after refused changes", orgs[0])
	}
	if n := s.audits("Organization"); n != 3 {
		t.Errorf("%d organization audit entries, want 3", n)
	}
}

func TestOrganizationSettingsPermissions(t *testing.T) {
	s := newServer(t)
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	s.do("PUT", "/api/v1/organizations", dev, map[string]any{"name": "Mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/organizations", dev, map[string]any{"name": "Default Organization"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/organizations", admin, map[string]any{"name": "Admins' org"}).ok(t)

	// Each action is checked for the part it changes.
	nameOnly := []access.Statement{{ID: "n", ResourceType: "organization", Effect: "allow", Actions: []string{"UpdateOrgName"}, Resources: []string{"organization/*"}}}
	renamer := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "renamer", "type": "Service", "permissions": nameOnly}).ok(t))
	s.do("PUT", "/api/v1/organizations", renamer.Token, map[string]any{"name": "Renamed"}).ok(t)
	s.do("PUT", "/api/v1/organizations", renamer.Token, map[string]any{"name": "Renamed",
		"defaultPermissions": map[string]any{"policyIds": []uuid.UUID{}}}).fails(t, http.StatusForbidden, "Forbidden")
	otherOrg := []access.Statement{{ID: "n", ResourceType: "organization", Effect: "allow", Actions: []string{"*"}, Resources: []string{"organization/other"}}}
	stranger := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "stranger", "type": "Service", "permissions": otherOrg}).ok(t))
	s.do("PUT", "/api/v1/organizations", stranger.Token, map[string]any{"name": "Nope"}).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.audits("Organization"); n != 2 {
		t.Errorf("%d organization audit entries, want 2", n)
	}
}

// TestIAMNeedsCanManageIAM sends every IAM request as a member whose policies
// do not include CanManageIAM, with valid bodies and ids that exist, and
// expects 403 and nothing changed; the same requests succeed for an
// Administrator.
func TestIAMNeedsCanManageIAM(t *testing.T) {
	s := newServer(t)
	p := s.createPolicy("Mine", "mine")
	g := s.createGroup("QA")
	dev, devID := s.addMember("dev@example.com", core.DeveloperPolicyID)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	_, otherID := s.addMember("other@example.com")
	pid, gid, mid, oid := p.ID.String(), g.ID.String(), devID.String(), otherID.String()
	requests := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/policies", nil},
		{"POST", "/api/v1/policies", map[string]string{"name": "X", "key": "x"}},
		{"GET", "/api/v1/policies/is-key-used?key=x", nil},
		{"POST", "/api/v1/policies/clone/developer", map[string]string{"name": "Y", "key": "y"}},
		{"GET", "/api/v1/policies/" + pid, nil},
		{"PUT", "/api/v1/policies/" + pid + "/settings", map[string]string{"name": "Renamed"}},
		{"PUT", "/api/v1/policies/" + pid + "/statements", []access.Statement{flagStatement}},
		{"GET", "/api/v1/policies/" + pid + "/members?getAllMembers=true", nil},
		{"GET", "/api/v1/policies/" + pid + "/groups", nil},
		{"GET", "/api/v1/groups", nil},
		{"POST", "/api/v1/groups", map[string]string{"name": "Z"}},
		{"GET", "/api/v1/groups/" + gid, nil},
		{"PUT", "/api/v1/groups/" + gid, map[string]string{"name": "QA 2"}},
		{"GET", "/api/v1/groups/" + gid + "/members", nil},
		{"PUT", "/api/v1/groups/" + gid + "/add-member/" + mid, nil},
		{"PUT", "/api/v1/groups/" + gid + "/remove-member/" + mid, nil},
		{"GET", "/api/v1/groups/" + gid + "/policies", nil},
		{"PUT", "/api/v1/groups/" + gid + "/add-policy/" + pid, nil},
		{"PUT", "/api/v1/groups/" + gid + "/remove-policy/" + pid, nil},
		{"GET", "/api/v1/members", nil},
		{"POST", "/api/v1/members/add", map[string]string{"email": "new@example.com"}},
		{"GET", "/api/v1/members/" + mid, nil},
		{"GET", "/api/v1/members/" + mid + "/groups", nil},
		{"GET", "/api/v1/members/" + mid + "/direct-policies", nil},
		{"GET", "/api/v1/members/" + mid + "/inherited-policies", nil},
		{"PUT", "/api/v1/members/" + mid + "/add-policy/" + core.OwnerPolicyID.String(), nil},
		{"PUT", "/api/v1/members/" + mid + "/remove-policy/" + core.DeveloperPolicyID.String(), nil},
		{"DELETE", "/api/v1/members/remove-from-org/" + oid, nil},
		{"DELETE", "/api/v1/groups/" + gid, nil},
		{"DELETE", "/api/v1/policies/" + pid, nil},
	}
	audits := s.count(`SELECT count(*) FROM audit_logs`)
	for _, r := range requests {
		got := s.do(r.method, r.path, dev, r.body)
		if got.Status != http.StatusForbidden || !slices.Equal(got.Errors, []string{"Forbidden"}) {
			t.Errorf("developer %s %s: got %d %v, want 403 Forbidden", r.method, r.path, got.Status, got.Errors)
		}
	}
	if n := s.count(`SELECT count(*) FROM audit_logs`); n != audits {
		t.Fatalf("%d audit entries after refused requests, want %d", n, audits)
	}
	if got := policyIDsOf(t, s, devID); !slices.Equal(got, []uuid.UUID{core.DeveloperPolicyID}) {
		t.Fatalf("the developer changed their own policies to %v", got)
	}
	for _, r := range requests {
		if got := s.do(r.method, r.path, admin, r.body); got.Status != http.StatusOK {
			t.Errorf("administrator %s %s: got %d %s, want 200", r.method, r.path, got.Status, got.raw)
		}
	}
	// Anyone signed in may read their own statements and the catalogue.
	s.do("GET", "/api/v1/user/policies", dev, nil).ok(t)
	s.do("GET", "/api/v1/iam/actions", dev, nil).ok(t)
}
