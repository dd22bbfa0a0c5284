package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// createOrg creates an organization as the owner, with FeatBit's body.
func (s *server) createOrg(name, key string) iam.Organization {
	s.t.Helper()
	return decode[iam.Organization](s.t, s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": name, "key": key}).ok(s.t))
}

func TestCreateOrganization(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.createProject("Web", "web")
	acme := s.createOrg(" Acme ", "acme")
	if acme.Name != "Acme" || acme.Key != "acme" || acme.Initialized || acme.WorkspaceID != s.wsID ||
		acme.Settings.FlagSortedBy != "created_at" || !slices.Equal(acme.DefaultPermissions.PolicyIDs, []uuid.UUID{core.DeveloperPolicyID}) ||
		acme.DefaultPermissions.GroupIDs == nil || len(acme.DefaultPermissions.GroupIDs) != 0 {
		t.Fatalf("created %+v, want uninitialized Acme with FeatBit's defaults", acme)
	}

	// The new organization is listed, and the creator now has to name one.
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs) != 2 || orgs[1].ID != acme.ID {
		t.Fatalf("organizations %+v, want the default one then Acme", orgs)
	}
	s.do("GET", "/api/v1/projects", s.owner, nil).fails(t, http.StatusBadRequest, "organization_is_required")
	in := []string{"Organization", acme.ID.String()}
	if ps := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil, in...).ok(t)); len(ps) != 0 {
		t.Fatalf("projects of the new organization %+v, want none", ps)
	}
	def := []string{"Organization", s.orgID.String()}
	if ps := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil, def...).ok(t)); len(ps) != 1 {
		t.Fatalf("projects of the default organization %+v, want Web", ps)
	}
	// The creator owns it: everything is allowed there.
	p := decode[core.Project](t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Api", "key": "web"}, in...).ok(t))
	if len(p.Environments) != 2 {
		t.Fatalf("project %+v", p)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE organization_id = $1 AND ref_type = 'Organization' AND operation = 'Create'`, acme.ID); n != 1 {
		t.Errorf("%d creation entries in the new organization's history, want 1", n)
	}

	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Again", "key": "ACME"}, def...).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{}, def...).fails(t, http.StatusBadRequest, "name_is_required", "key_is_required")
	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Bad", "key": "a b"}, def...).fails(t, http.StatusBadRequest, "key_is_invalid")

	// CreateOrg: Administrator holds it, Developer does not.
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	s.do("POST", "/api/v1/organizations", dev, map[string]string{"name": "Devs", "key": "devs"}).fails(t, http.StatusForbidden, "Forbidden")
	mine := decode[iam.Organization](t, s.do("POST", "/api/v1/organizations", admin, map[string]string{"name": "Admins", "key": "admins"}).ok(t))
	if got := decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+mine.ID.String(), admin, nil).ok(t)); got.Key != "admins" {
		t.Errorf("admin's organization %+v", got)
	}
	if n := s.count(`SELECT count(*) FROM organizations`); n != 3 {
		t.Errorf("%d organizations, want 3", n)
	}
}

func TestOnboarding(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	acme := s.createOrg("New organization", "new-org")
	in := []string{"Organization", acme.ID.String()}
	body := map[string]any{"organizationName": "Acme", "organizationKey": "acme", "projectName": "Web shop", "projectKey": "web",
		"environments": []string{"Dev", "Prod"}}
	if r := s.do("POST", "/api/v1/organizations/onboarding", s.owner, body, in...).ok(t); string(r.Data) != "true" {
		t.Fatalf("onboarding answered %s, want true", r.Data)
	}
	got := decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+acme.ID.String(), s.owner, nil, in...).ok(t))
	if got.Name != "Acme" || got.Key != "acme" || !got.Initialized {
		t.Fatalf("onboarded organization %+v", got)
	}
	ps := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil, in...).ok(t))
	if len(ps) != 1 || ps[0].Key != "web" || len(ps[0].Environments) != 2 ||
		ps[0].Environments[0].Key != "dev" || ps[0].Environments[1].Name != "Prod" || len(ps[0].Environments[1].Secrets) != 2 {
		t.Fatalf("projects after onboarding %+v", ps)
	}

	s.do("POST", "/api/v1/organizations/onboarding", s.owner, map[string]any{}, in...).fails(t, http.StatusBadRequest,
		"organizationName_is_required", "organizationKey_is_required", "projectName_is_required", "projectKey_is_required", "environments_is_required")
	for _, envs := range [][]string{{"Dev", "dev"}, {" "}, {"QA env"}} {
		body := map[string]any{"organizationName": "X", "organizationKey": "x", "projectName": "Y", "projectKey": "y", "environments": envs}
		s.do("POST", "/api/v1/organizations/onboarding", s.owner, body, in...).fails(t, http.StatusBadRequest, "environments_is_invalid")
	}
	// A clash leaves nothing half-done: the organization keeps its name.
	body["organizationName"], body["organizationKey"] = "Renamed", "default-organization"
	s.do("POST", "/api/v1/organizations/onboarding", s.owner, body, in...).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	if got := decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+acme.ID.String(), s.owner, nil, in...).ok(t)); got.Name != "Acme" {
		t.Errorf("organization %+v after a refused onboarding", got)
	}
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	body = map[string]any{"organizationName": "Mine", "organizationKey": "default-organization", "projectName": "P", "projectKey": "p", "environments": []string{"Dev"}}
	s.do("POST", "/api/v1/organizations/onboarding", dev, body).fails(t, http.StatusForbidden, "Forbidden")
}

func TestGetOrganization(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	got := decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+s.orgID.String(), s.owner, nil).ok(t))
	// A fresh install's organization awaits onboarding (TestFreshInstallAwaitsOnboarding).
	if got.ID != s.orgID || got.Key != "default-organization" || got.Initialized || got.Settings.FlagSortedBy != "created_at" {
		t.Fatalf("organization %+v", got)
	}
	s.otherOrganization() // one the owner is not a member of
	var other uuid.UUID
	must(t, s.pool.QueryRow(t.Context(), `SELECT id FROM organizations WHERE key = 'other'`).Scan(&other))
	for _, id := range []string{other.String(), uuid.NewString(), "not-a-uuid"} {
		s.do("GET", "/api/v1/organizations/"+id, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
}

func TestDeleteOrganization(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.do("DELETE", "/api/v1/organizations", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "CannotDeleteLastOrganization")

	acme := s.createOrg("Acme", "acme")
	in := []string{"Organization", acme.ID.String()}
	def := []string{"Organization", s.orgID.String()}
	p := decode[core.Project](t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Web", "key": "web"}, in...).ok(t))
	env := p.Environments[0].ID.String()
	s.do("POST", "/api/v1/envs/"+env+"/feature-flags", s.owner, map[string]string{"name": "F", "key": "f"}, in...).ok(t)
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}, in...).ok(t)).Token
	s.do("GET", "/api/v1/projects", token, nil).ok(t)

	// Administrators may not delete an organization; only a policy with DeleteOrg may.
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	s.do("DELETE", "/api/v1/organizations", admin, nil).fails(t, http.StatusForbidden, "Forbidden")

	if r := s.do("DELETE", "/api/v1/organizations", s.owner, nil, in...).ok(t); string(r.Data) != "true" {
		t.Fatalf("delete answered %s, want true", r.Data)
	}
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs) != 1 || orgs[0].ID != s.orgID {
		t.Fatalf("organizations after the delete %+v", orgs)
	}
	for table, n := range map[string]int{
		"projects": s.count(`SELECT count(*) FROM projects WHERE organization_id = $1`, acme.ID),
		"flags":    s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, p.Environments[0].ID),
		"members":  s.count(`SELECT count(*) FROM organization_users WHERE organization_id = $1`, acme.ID),
		"tokens":   s.count(`SELECT count(*) FROM access_tokens WHERE organization_id = $1`, acme.ID),
	} {
		if n != 0 {
			t.Errorf("%d %s of the deleted organization remain", n, table)
		}
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE organization_id IS NULL AND ref_type = 'Organization' AND operation = 'Remove' AND ref_id = $1`, acme.ID.String()); n != 1 {
		t.Errorf("%d removal entries in the workspace's history, want 1", n)
	}
	s.do("GET", "/api/v1/projects", token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/organizations/"+acme.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	// The owner is back to one organization, so no header is needed; the last one stays.
	s.do("GET", "/api/v1/projects", s.owner, nil).ok(t)
	s.do("DELETE", "/api/v1/organizations", s.owner, nil, def...).fails(t, http.StatusUnprocessableEntity, "CannotDeleteLastOrganization")
}

func TestOrganizationSettings(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// FeatBit's client sends the whole organization back with one part changed.
	body := map[string]any{"name": "Default Organization", "settings": map[string]string{"flagSortedBy": "key"},
		"defaultPermissions": map[string]any{"policyIds": []uuid.UUID{core.DeveloperPolicyID}, "groupIds": []uuid.UUID{}}}
	got := decode[iam.Organization](t, s.do("PUT", "/api/v1/organizations", s.owner, body).ok(t))
	if got.Settings.FlagSortedBy != "key" || got.Name != "Default Organization" {
		t.Fatalf("updated %+v", got)
	}
	if orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t)); orgs[0].Settings.FlagSortedBy != "key" {
		t.Fatalf("stored settings %+v", orgs[0].Settings)
	}
	// Left out, settings stay.
	if got := decode[iam.Organization](t, s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Renamed"}).ok(t)); got.Settings.FlagSortedBy != "key" {
		t.Fatalf("settings after a rename %+v", got.Settings)
	}
	s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Renamed", "settings": map[string]string{"flagSortedBy": "name"}}).
		fails(t, http.StatusBadRequest, "flagSortedBy_is_invalid")
	s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Renamed", "settings": map[string]string{}}).
		fails(t, http.StatusBadRequest, "flagSortedBy_is_required")

	// UpdateOrgSortFlagsBy is checked when, and only when, the order changes.
	sorter := []access.Statement{{ID: "s", ResourceType: "organization", Effect: "allow", Actions: []string{"UpdateOrgSortFlagsBy"}, Resources: []string{"organization/*"}}}
	renamer := []access.Statement{{ID: "n", ResourceType: "organization", Effect: "allow", Actions: []string{"UpdateOrgName"}, Resources: []string{"organization/*"}}}
	st := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "sorter", "type": "Service", "permissions": sorter}).ok(t)).Token
	rt := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "renamer", "type": "Service", "permissions": renamer}).ok(t)).Token
	s.do("PUT", "/api/v1/organizations", st, map[string]any{"name": "Renamed", "settings": map[string]string{"flagSortedBy": "created_at"}}).ok(t)
	s.do("PUT", "/api/v1/organizations", rt, map[string]any{"name": "Renamed", "settings": map[string]string{"flagSortedBy": "key"}}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/organizations", rt, map[string]any{"name": "Again", "settings": map[string]string{"flagSortedBy": "created_at"}}).ok(t)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	s.do("PUT", "/api/v1/organizations", admin, map[string]any{"name": "Again", "settings": map[string]string{"flagSortedBy": "key"}}).ok(t)
}

// TestOrganizationCreationIsBounded: an Administrator creating organizations
// in a loop, many at once, gets MaxCreatedOrganizations of them and then
// 422 TooManyOrganizations, with nothing more stored; the workspace's owner
// still creates them up to the workspace's total; deleting one makes room.
func TestOrganizationCreationIsBounded(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	admin, adminID := s.addMember("admin@example.com", core.AdministratorPolicyID)
	const tries = iam.MaxCreatedOrganizations + 8
	statuses := make([]int, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			r := s.do("POST", "/api/v1/organizations", admin, map[string]string{"name": fmt.Sprintf("Loop %d", i), "key": fmt.Sprintf("loop-%d", i)},
				"Organization", s.orgID.String())
			statuses[i] = r.Status
			if r.Status != http.StatusOK && !slices.Equal(r.Errors, []string{"TooManyOrganizations"}) {
				t.Errorf("creation %d answered %d %v, want 200 or 422 TooManyOrganizations", i, r.Status, r.Errors)
			}
		})
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		if st == http.StatusOK {
			created++
		}
	}
	if created != iam.MaxCreatedOrganizations {
		t.Errorf("%d of %d concurrent creations succeeded, want %d", created, tries, iam.MaxCreatedOrganizations)
	}
	if n := s.count(`SELECT count(*) FROM organizations WHERE creator_id = $1`, adminID); n != iam.MaxCreatedOrganizations {
		t.Errorf("%d organizations stored for the administrator, want %d", n, iam.MaxCreatedOrganizations)
	}
	s.do("POST", "/api/v1/organizations", admin, map[string]string{"name": "One more", "key": "one-more"}, "Organization", s.orgID.String()).
		fails(t, http.StatusUnprocessableEntity, "TooManyOrganizations")

	// Deleting one of them makes room for one.
	mine := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", admin, nil).ok(t))
	s.do("DELETE", "/api/v1/organizations", admin, nil, "Organization", mine[1].ID.String()).ok(t)
	s.do("POST", "/api/v1/organizations", admin, map[string]string{"name": "One more", "key": "one-more"}, "Organization", s.orgID.String()).ok(t)

	// The workspace's owner is held to the workspace's total only.
	def := []string{"Organization", s.orgID.String()}
	for i := range iam.MaxCreatedOrganizations + 1 {
		s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": fmt.Sprintf("Owned %d", i), "key": fmt.Sprintf("owned-%d", i)}, def...).ok(t)
	}
	_, err := s.pool.Exec(context.Background(), `INSERT INTO organizations (workspace_id, name, key)
		SELECT $1, 'Filler ' || n, 'filler-' || n FROM generate_series(1, $2 - (SELECT count(*) FROM organizations WHERE workspace_id = $1)) n`,
		s.wsID, iam.MaxWorkspaceOrganizations)
	must(t, err)
	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Past the total", "key": "past"}, def...).
		fails(t, http.StatusUnprocessableEntity, "TooManyOrganizations")
	if n := s.count(`SELECT count(*) FROM organizations WHERE workspace_id = $1`, s.wsID); n != iam.MaxWorkspaceOrganizations {
		t.Errorf("%d organizations in the workspace, want %d", n, iam.MaxWorkspaceOrganizations)
	}
}
