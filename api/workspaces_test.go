package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store"
)

func TestUpdateWorkspace(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	w := decode[store.Workspace](t, s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Acme", "key": "acme"}).ok(t))
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

func TestWorkspaceLicenseIsShownOnlyToThoseWhoMayChangeIt(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	_, err := s.pool.Exec(context.Background(), `UPDATE workspaces SET license = 'LICENSE-KEY'`)
	must(t, err)
	dev, _ := s.addMember("dev@example.com", store.DeveloperPolicyID)
	if w := decode[store.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t)); w.License != "LICENSE-KEY" {
		t.Errorf("owner sees license %q", w.License)
	}
	if w := decode[store.Workspace](t, s.do("GET", "/api/v1/workspaces", dev, nil).ok(t)); w.License != "" {
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
	w := decode[store.Workspace](t, put(s.owner, settings).ok(t))
	if w.SSO == nil || w.SSO.OIDC.ClientSecret != store.MaskedSecret || w.SSO.OIDC.ClientID != "bunting" ||
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
	for _, keep := range []string{"", store.MaskedSecret} {
		settings["clientSecret"] = keep
		settings["scope"], settings["userEmailClaim"] = "", ""
		w = decode[store.Workspace](t, put(s.owner, settings).ok(t))
		if w.SSO.OIDC.ClientSecret != store.MaskedSecret || w.SSO.OIDC.Scope != "openid email profile" || w.SSO.OIDC.UserEmailClaim != "email" {
			t.Fatalf("after keeping the secret: %+v", w.SSO.OIDC)
		}
	}
	var sealed string
	must(t, s.pool.QueryRow(context.Background(), `SELECT sso_oidc->>'clientSecret' FROM workspaces`).Scan(&sealed))
	if plain, err := s.st.Keys().Open(sealed); err != nil || plain != "top-secret-value" {
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

	dev, _ := s.addMember("dev@example.com", store.DeveloperPolicyID)
	settings["clientSecret"] = "stolen"
	put(dev, settings).fails(t, http.StatusForbidden, "Forbidden")
}

// TestWorkspaceSettingsNeedEveryOrganization: the workspace's settings act on
// all its organizations (single sign-on signs people in to each), so the
// owner of one of two organizations may change none of them, and nothing
// changes; the owner of both may.
func TestWorkspaceSettingsNeedEveryOrganization(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	other, err := s.q.CreateOrganization(context.Background(), db.CreateOrganizationParams{WorkspaceID: s.wsID, Name: "Other",
		Key: "other", DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(t, err)
	_, err = s.pool.Exec(context.Background(), `UPDATE workspaces SET license = 'LICENSE-KEY'`)
	must(t, err)
	sso := map[string]string{"clientId": "mine", "clientSecret": "s", "authorizationEndpoint": "https://id.example.com/a",
		"tokenEndpoint": "https://id.example.com/t", "clientAuthenticationMethod": "client_secret_basic", "issuer": "https://id.example.com"}
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, sso).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/workspaces/is-key-used?key=theirs", s.owner, nil).fails(t, http.StatusForbidden, "Forbidden")
	if w := decode[store.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t)); w.License != "" ||
		w.Key != "default-workspace" || w.SSO != nil {
		t.Errorf("the owner of one organization sees %+v, want the workspace unchanged and no license", w)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Workspace'`); n != 0 {
		t.Errorf("%d workspace audit entries after refusals", n)
	}

	// Owning both organizations, in either as the current one.
	s.changeAccess(`INSERT INTO organization_users (organization_id, user_id) SELECT $1, user_id FROM organization_users WHERE organization_id = $2`,
		other.ID, s.orgID)
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id) SELECT $1, user_id, policy_id FROM member_policies WHERE organization_id = $2`,
		other.ID, s.orgID)
	if used := decode[bool](t, s.do("GET", "/api/v1/workspaces/is-key-used?key=theirs", s.owner, nil, "Organization", other.ID.String()).ok(t)); used {
		t.Error("an unused workspace key is reported used")
	}
	s.do("PUT", "/api/v1/workspaces", s.owner, map[string]string{"name": "Mine", "key": "mine"}, "Organization", other.ID.String()).ok(t)
	w := decode[store.Workspace](t, s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, sso, "Organization", s.orgID.String()).ok(t))
	if w.Key != "mine" || w.SSO == nil || w.SSO.OIDC.ClientID != "mine" || w.License != "LICENSE-KEY" {
		t.Errorf("the owner of both: %+v", w)
	}
}
