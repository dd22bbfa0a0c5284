package api_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestUpdateWorkspace(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	w := decode[iam.Workspace](t, s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Acme", "key": "acme"}).ok(t))
	if w.Name != "Acme" || w.Key != "acme" || w.ID != s.wsID {
		t.Fatalf("updated %+v", w)
	}
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "", "key": "no spaces"}).
		fails(t, http.StatusBadRequest, "name_is_required", "key_is_invalid")
	_, err := s.pool.Exec(context.Background(), `INSERT INTO workspaces (name, key) VALUES ('Other', 'other')`)
	must(t, err)
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Acme", "key": "OTHER"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Workspace'`); n != 1 {
		t.Errorf("%d workspace audit entries, want 1", n)
	}
}

// TestWorkspaceLicenseIsShownOnlyToThoseWhoMayChangeIt: the workspace view
// and the user's workspaces (TestUserWorkspaces) show the licence only to
// callers allowed UpdateWorkspaceLicense, as api/README.md (The license) promises.
func TestWorkspaceLicenseIsShownOnlyToThoseWhoMayChangeIt(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	if w := decode[iam.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t)); !isBuntingLicense(t, w.License, s.wsID) {
		t.Errorf("owner sees license %q", w.License)
	}
	if w := decode[iam.Workspace](t, s.do("GET", "/api/v1/workspaces", dev, nil).ok(t)); w.License != "" {
		t.Errorf("developer sees license %q, want none", w.License)
	}
}

func TestWorkspaceSSO(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	put := func(token string, body map[string]string) *reply {
		return s.do("PUT", "/api/v1/workspaces/sso-oidc", token, body)
	}
	settings := map[string]string{
		"clientId": "bunting", "clientSecret": "top-secret-value",
		"authorizationEndpoint": "https://id.example.com/authorize", "tokenEndpoint": "https://id.example.com/token",
		"clientAuthenticationMethod": "client_secret_post", "scope": "openid email", "userEmailClaim": "mail",
		"issuer": "https://id.example.com",
	}
	w := decode[iam.Workspace](t, put(s.owner, settings).ok(t))
	if w.SSO == nil || w.SSO.OIDC.ClientSecret != iam.MaskedSecret || w.SSO.OIDC.ClientID != "bunting" ||
		w.SSO.OIDC.UserEmailClaim != "mail" || w.SSO.OIDC.Issuer != "https://id.example.com" {
		t.Fatalf("answer %+v, want the settings with the secret masked", w.SSO)
	}
	var raw string
	must(t, s.pool.QueryRow(context.Background(), `SELECT sso_oidc::text FROM workspaces`).Scan(&raw))
	if strings.Contains(raw, "top-secret-value") {
		t.Fatal("the client secret is stored in the clear")
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE coalesce(current::text, '') LIKE '%top-secret%'`); n != 0 {
		t.Fatal("the client secret reached the audit log")
	}

	// Empty or masked keeps the stored secret; defaults fill scope and claim.
	for _, keep := range []string{"", iam.MaskedSecret} {
		settings["clientSecret"] = keep
		settings["scope"], settings["userEmailClaim"] = "", ""
		w = decode[iam.Workspace](t, put(s.owner, settings).ok(t))
		if w.SSO.OIDC.ClientSecret != iam.MaskedSecret || w.SSO.OIDC.Scope != "openid email profile" || w.SSO.OIDC.UserEmailClaim != "email" {
			t.Fatalf("after keeping the secret: %+v", w.SSO.OIDC)
		}
	}
	var sealed string
	must(t, s.pool.QueryRow(context.Background(), `SELECT sso_oidc->>'clientSecret' FROM workspaces`).Scan(&sealed))
	if plain, err := s.st.Projects().Keys().Open(sealed); err != nil || plain != "top-secret-value" {
		t.Fatalf("stored secret opens to %q, %v; want the original", plain, err)
	}

	put(s.owner, map[string]string{"clientSecret": "x", "authorizationEndpoint": "ftp://x", "tokenEndpoint": "not a url",
		"clientAuthenticationMethod": "private_key_jwt", "scope": "email"}).
		fails(t, http.StatusBadRequest, "clientId_is_required", "authorizationEndpoint_is_invalid", "tokenEndpoint_is_invalid",
			"clientAuthenticationMethod_is_invalid", "scope_is_invalid")

	// Bunting fetches these URLs: https only (private networks are not
	// allowed here), no query (which would swallow the discovery suffix), no
	// fragment, no user info.
	put(s.owner, map[string]string{"clientId": "c", "clientSecret": "x", "authorizationEndpoint": "http://id.example.com/a",
		"tokenEndpoint": "https://user:pw@id.example.com/t", "clientAuthenticationMethod": "client_secret_basic",
		"issuer": "https://id.example.com/internal?x="}).
		fails(t, http.StatusBadRequest, "authorizationEndpoint_is_invalid", "tokenEndpoint_is_invalid", "issuer_is_invalid")

	fresh := newServer(t)
	settings["clientSecret"] = ""
	fresh.do("PUT", "/api/v1/workspaces/sso-oidc", fresh.owner, settings).fails(t, http.StatusBadRequest, "clientSecret_is_required")

	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	settings["clientSecret"] = "stolen"
	put(dev, settings).fails(t, http.StatusForbidden, "Forbidden")
}

// TestWorkspaceSettingsNeedEveryOrganization: the workspace's settings act on
// all its organizations (single sign-on signs people in to each), so the
// owner of one of two organizations, who is not the workspace's owner, may
// change none of them, and nothing changes; the owner of both may.
func TestWorkspaceSettingsNeedEveryOrganization(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	other, err := s.q.CreateOrganization(context.Background(), db.CreateOrganizationParams{WorkspaceID: s.wsID, Name: "Other",
		Key: "other", DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(t, err)
	// An owner of this organization who does not own the workspace.
	owner, ownerID := s.addMember("co-owner@example.com", core.OwnerPolicyID)
	sso := map[string]string{"clientId": "mine", "clientSecret": "s", "authorizationEndpoint": "https://id.example.com/a",
		"tokenEndpoint": "https://id.example.com/t", "clientAuthenticationMethod": "client_secret_basic", "issuer": "https://id.example.com"}
	s.do("PUT", "/api/v1/workspaces", owner, map[string]string{"name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/workspaces/sso-oidc", owner, sso).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/workspaces/is-key-used?key=theirs", owner, nil).fails(t, http.StatusForbidden, "Forbidden")
	if w := decode[iam.Workspace](t, s.do("GET", "/api/v1/workspaces", owner, nil).ok(t)); w.License != "" ||
		w.Key != "default-workspace" || w.SSO != nil {
		t.Errorf("the owner of one organization sees %+v, want the workspace unchanged and no license", w)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Workspace'`); n != 0 {
		t.Errorf("%d workspace audit entries after refusals", n)
	}

	// Owning both organizations, in either as the current one.
	s.changeAccess(`INSERT INTO organization_users (organization_id, user_id) VALUES ($1, $2)`, other.ID, ownerID)
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)`,
		other.ID, ownerID, core.OwnerPolicyID)
	if used := decode[bool](t, s.do("GET", "/api/v1/workspaces/is-key-used?key=theirs", owner, nil, "Organization", other.ID.String()).ok(t)); used {
		t.Error("an unused workspace key is reported used")
	}
	s.do("PUT", "/api/v1/workspaces", owner, map[string]string{"name": "Mine", "key": "mine"}, "Organization", other.ID.String()).ok(t)
	w := decode[iam.Workspace](t, s.do("PUT", "/api/v1/workspaces/sso-oidc", owner, sso, "Organization", s.orgID.String()).ok(t))
	if w.Key != "mine" || w.SSO == nil || w.SSO.OIDC.ClientID != "mine" || !isBuntingLicense(t, w.License, s.wsID) {
		t.Errorf("the owner of both: %+v", w)
	}
}

// TestWorkspaceOwnerIsNotLockedOut: an Administrator creates organizations
// the workspace's owner is not in. The owner keeps the workspace's settings,
// acting in the organization where they hold the permission (not in one
// where they are only a Developer); the owner's access token, which acts in
// its own organization only, does not get them.
func TestWorkspaceOwnerIsNotLockedOut(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	for i := range 3 {
		s.do("POST", "/api/v1/organizations", admin, map[string]string{"name": fmt.Sprintf("Theirs %d", i), "key": fmt.Sprintf("theirs-%d", i)},
			"Organization", s.orgID.String()).ok(t)
	}
	in := []string{"Organization", s.orgID.String()}
	sso := map[string]string{"clientId": "owners", "clientSecret": "s", "authorizationEndpoint": "https://id.example.com/a",
		"tokenEndpoint": "https://id.example.com/t", "clientAuthenticationMethod": "client_secret_basic", "issuer": "https://id.example.com"}
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Owned", "key": "owned"}, in...).ok(t)
	w := decode[iam.Workspace](t, s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, sso, in...).ok(t))
	if w.Key != "owned" || w.SSO == nil || w.SSO.OIDC.ClientID != "owners" || !isBuntingLicense(t, w.License, s.wsID) {
		t.Errorf("the workspace's owner: %+v, want the new settings and the license", w)
	}
	if used := decode[bool](t, s.do("GET", "/api/v1/workspaces/is-key-used?key=free", s.owner, nil, in...).ok(t)); used {
		t.Error("an unused workspace key is reported used")
	}
	// The Administrator holds the permission in every organization (as
	// Administrator here, Owner of the others), so the old rule allows them.
	s.do("PUT", "/api/v1/workspaces", admin, map[string]string{"name": "Taken", "key": "taken"}, in...).ok(t)
	// In an organization where the owner is only a Developer, the owner
	// acts with a Developer's rights.
	theirs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", admin, nil).ok(t))[1]
	ownerID := s.ownerID()
	s.changeAccess(`INSERT INTO organization_users (organization_id, user_id) VALUES ($1, $2)`, theirs.ID, ownerID)
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)`, theirs.ID, ownerID, core.DeveloperPolicyID)
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Owned", "key": "owned"}, "Organization", theirs.ID.String()).
		fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Owned", "key": "owned"}, in...).ok(t)

	// The owner's access token acts in one of several organizations.
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}, in...).ok(t))
	s.do("PUT", "/api/v1/workspaces", token.Token, map[string]string{"name": "Scripted", "key": "scripted"}).fails(t, http.StatusForbidden, "Forbidden")
	if ws, err := s.q.GetWorkspace(context.Background(), s.wsID); err != nil || ws.Key != "owned" {
		t.Errorf("workspace key %q (%v), want owned", ws.Key, err)
	}
}

// TestExistingWorkspaceGetsItsOwner: on a database from before workspaces had
// owners, the migration names the member who has held the built-in Owner
// policy longest in the workspace's oldest organization.
func TestExistingWorkspaceGetsItsOwner(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	ctx := context.Background()
	s.addMember("later-owner@example.com", core.OwnerPolicyID)
	_, err := s.pool.Exec(ctx, `UPDATE member_policies SET created_at = created_at - interval '1 day'
		WHERE user_id = (SELECT id FROM users WHERE email = 'later-owner@example.com')`)
	must(t, err)
	_, err = s.pool.Exec(ctx, `ALTER TABLE workspaces DROP COLUMN owner_id; ALTER TABLE organizations DROP COLUMN creator_id`)
	must(t, err)
	body, err := fs.ReadFile(migrations.FS, "0026_workspace_owner.sql")
	must(t, err)
	_, err = s.pool.Exec(ctx, string(body))
	must(t, err)
	var owner string
	must(t, s.pool.QueryRow(ctx, `SELECT u.email FROM workspaces w JOIN users u ON u.id = w.owner_id`).Scan(&owner))
	if owner != "later-owner@example.com" {
		t.Errorf("the workspace's owner is %s, want the member who has held Owner longest", owner)
	}
}
