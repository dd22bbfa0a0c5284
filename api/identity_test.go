package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store"
)

func httptestGet(s *server, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec
}

func TestLogin(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	login := func(body any) *reply { return s.do("POST", "/api/v1/identity/login-by-email", "", body) }

	r := login(map[string]string{"email": "OWNER@example.com", "password": ownerPassword}).ok(t)
	session := decode[store.Session](t, r)
	if session.Token == "" || session.IsSsoFirstLogin {
		t.Fatalf("got %s, want a token and isSsoFirstLogin false", r.Data)
	}
	s.do("GET", "/api/v1/user/profile", bearer(session.Token), nil).ok(t)

	login(map[string]string{"email": ownerEmail, "password": "wrong-password"}).fails(t, http.StatusUnauthorized, "EmailPasswordMismatch")
	login(map[string]string{"email": "nobody@example.com", "password": ownerPassword}).fails(t, http.StatusUnauthorized, "EmailPasswordMismatch")
	login(map[string]string{}).fails(t, http.StatusBadRequest, "email_is_required", "password_is_required")
	login(`{"email": 1}`).fails(t, http.StatusBadRequest, "body_is_invalid")
}

func TestLoginThrottling(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	wrong := map[string]string{"email": "victim@example.com", "password": "guess"}
	for i := range 10 {
		r := s.do("POST", "/api/v1/identity/login-by-email", "", wrong)
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: got %d, want 401 before the limit", i+1, r.Status)
		}
	}
	// The limit holds for the address too, whatever email it tries next.
	s.do("POST", "/api/v1/identity/login-by-email", "", wrong).fails(t, http.StatusTooManyRequests, "TooManyRequests")
	s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}).
		fails(t, http.StatusTooManyRequests, "TooManyRequests")
	// Another address can still sign in to an account that is not under attack.
	if _, err := s.st.Login(context.Background(), store.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.9"); err != nil {
		t.Fatalf("sign-in from another address: %v", err)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	for name, header := range map[string]string{
		"missing":         "",
		"garbage":         "Bearer not-a-token",
		"tampered":        s.owner[:len(s.owner)-2] + "xx",
		"unknown token":   "api-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"empty bearer":    "Bearer ",
		"other scheme":    "Basic b3duZXI6cGFzcw==",
		"truncated token": s.owner[:20],
	} {
		t.Run(name, func(t *testing.T) {
			s.do("GET", "/api/v1/projects", header, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
		})
	}

	// A session issued with a lifetime already over is refused by the same keys.
	expired := store.New(s.pool, s.st.Keys(), slog.New(slog.DiscardHandler), store.Options{SessionTTL: -time.Minute})
	session, err := expired.Login(context.Background(), store.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.1")
	must(t, err)
	s.do("GET", "/api/v1/user/profile", bearer(session.Token), nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}

func TestOrganizationHeader(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	s.do("GET", "/api/v1/projects", s.owner, nil, "Organization", s.orgID.String()).ok(t)
	s.do("GET", "/api/v1/projects", s.owner, nil, "Organization", "not-a-uuid").fails(t, http.StatusForbidden, "Forbidden")
	other := s.otherOrganization()
	_ = other
	var otherOrg string
	must(t, s.pool.QueryRow(context.Background(), `SELECT id::text FROM organizations WHERE key = 'other'`).Scan(&otherOrg))
	s.do("GET", "/api/v1/projects", s.owner, nil, "Organization", otherOrg).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/projects", s.owner, nil, "Workspace", "00000000-0000-0000-0000-000000000001").fails(t, http.StatusForbidden, "Forbidden")
}

func TestResetPassword(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	reset := func(token string, body any) *reply {
		return s.do("PUT", "/api/v1/identity/reset-password", token, body)
	}

	reset(s.owner, map[string]string{"currentPassword": ownerPassword, "newPassword": "short"}).fails(t, http.StatusBadRequest, "newPassword_is_invalid")
	reset(s.owner, map[string]string{"currentPassword": ownerPassword}).fails(t, http.StatusBadRequest, "newPassword_is_required")
	reset(s.owner, map[string]string{"currentPassword": "wrong-password", "newPassword": "new-password-1"}).fails(t, http.StatusUnprocessableEntity, "EmailPasswordMismatch")

	r := reset(s.owner, map[string]string{"currentPassword": ownerPassword, "newPassword": "new-password-1"}).ok(t)
	fresh := bearer(decode[store.Session](t, r).Token)
	s.do("GET", "/api/v1/user/profile", s.owner, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", fresh, nil).ok(t)
	s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}).
		fails(t, http.StatusUnauthorized, "EmailPasswordMismatch")
	s.login(ownerEmail, "new-password-1")

	token := decode[store.AccessToken](t, s.do("POST", "/api/v1/access-tokens", fresh, map[string]string{"name": "ci", "type": "Personal"}).ok(t)).Token
	reset(token, map[string]string{"currentPassword": "new-password-1", "newPassword": "new-password-2"}).fails(t, http.StatusForbidden, "Forbidden")
}

func TestContextDiscovery(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := decode[store.Profile](t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t))
	if p.Email != ownerEmail || p.Name != "owner" {
		t.Errorf("profile = %+v, want %s named owner", p, ownerEmail)
	}
	orgs := decode[[]store.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs) != 1 || orgs[0].Key != "default-organization" || orgs[0].Name != "Default Organization" {
		t.Fatalf("organizations = %+v, want the default organization", orgs)
	}
	if len(orgs[0].DefaultPermissions.PolicyIDs) != 1 || orgs[0].DefaultPermissions.PolicyIDs[0] != store.DeveloperPolicyID {
		t.Errorf("default permissions = %+v, want the Developer policy", orgs[0].DefaultPermissions)
	}
	w := decode[store.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t))
	if w.Key != "default-workspace" || w.Name != "Default Workspace" || w.SSO != nil {
		t.Errorf("workspace = %+v, want the default workspace without SSO", w)
	}
	if n := s.count(`SELECT count(*) FROM policies WHERE type = 'SysManaged' AND organization_id IS NULL`); n != 3 {
		t.Errorf("%d built-in policies, want 3", n)
	}
}
