package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestUpdateProfile(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := decode[iam.Profile](t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t))
	if p.Origin != "Local" || p.Email != ownerEmail {
		t.Fatalf("profile %+v, want origin Local", p)
	}
	// FeatBit's body: {name, email}.
	got := decode[iam.Profile](t, s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"name": " Olive ", "email": "olive@example.com"}).ok(t))
	if got.ID != p.ID || got.Name != "Olive" || got.Email != "olive@example.com" || got.Origin != "Local" {
		t.Fatalf("updated %+v", got)
	}
	if again := decode[iam.Profile](t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t)); again != got {
		t.Fatalf("read back %+v, want %+v", again, got)
	}
	s.login("olive@example.com", ownerPassword) // the new email signs in
	if n := s.audits("User"); n != 1 {
		t.Errorf("%d audit entries, want 1", n)
	}
	// An empty name becomes the email's local part; the same answer twice records nothing.
	if got := decode[iam.Profile](t, s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"email": "olive@example.com"}).ok(t)); got.Name != "olive" {
		t.Fatalf("name %q, want olive", got.Name)
	}
	s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"email": "olive@example.com"}).ok(t)
	if n := s.audits("User"); n != 2 {
		t.Errorf("%d audit entries, want 2", n)
	}

	s.addMember("taken@example.com")
	s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"name": "O", "email": "TAKEN@example.com"}).fails(t, http.StatusUnprocessableEntity, "EmailHasBeenUsed")
	s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"name": "O"}).fails(t, http.StatusBadRequest, "email_is_required")
	s.do("PUT", "/api/v1/user/profile", s.owner, map[string]string{"email": "not an email"}).fails(t, http.StatusBadRequest, "email_is_invalid")
	s.do("PUT", "/api/v1/user/profile", s.owner, `{"email":1}`).fails(t, http.StatusBadRequest, "body_is_invalid")

	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}).ok(t)).Token
	s.do("PUT", "/api/v1/user/profile", token, map[string]string{"email": "bot@example.com"}).fails(t, http.StatusForbidden, "Forbidden")

	// Users made by single sign-on, without a password, are Sso.
	u, err := s.q.CreateUser(context.Background(), db.CreateUserParams{Email: "sso@example.com", Name: "sso"})
	must(t, err)
	if u.Origin != "Sso" {
		t.Errorf("origin of a user without a password %q, want Sso", u.Origin)
	}
}

func TestUserWorkspaces(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, err := s.q.UpdateWorkspaceSSO(context.Background(), db.UpdateWorkspaceSSOParams{ID: s.wsID, SsoOidc: []byte(`{"clientId":"c","clientSecret":"sealed",
		"tokenEndpoint":"https://id.example.com/t","clientAuthenticationMethod":"client_secret_basic","authorizationEndpoint":"https://id.example.com/a",
		"scope":"openid email","userEmailClaim":"email","issuer":""}`)})
	must(t, err)
	ws := decode[[]iam.Workspace](t, s.do("GET", "/api/v1/user/workspaces", s.owner, nil).ok(t))
	if len(ws) != 1 || ws[0].ID != s.wsID || ws[0].Key != "default-workspace" || !isBuntingLicense(t, ws[0].License, s.wsID) ||
		ws[0].SSO == nil || ws[0].SSO.OIDC.ClientSecret != iam.MaskedSecret {
		t.Fatalf("owner's workspaces %+v", ws)
	}
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	ws = decode[[]iam.Workspace](t, s.do("GET", "/api/v1/user/workspaces", dev, nil).ok(t))
	if len(ws) != 1 || ws[0].License != "" || ws[0].SSO.OIDC.ClientSecret != iam.MaskedSecret {
		t.Fatalf("developer's workspaces %+v: the licence is for those who may change it", ws)
	}
}
