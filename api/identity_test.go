package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
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
	session := decode[iam.Session](t, r)
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
	login := func(email, password, addr string) *reply {
		return s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": email, "password": password}, remoteAddr, addr+":1234")
	}
	// Ten attempts for one email from one address are compared; then that
	// pair is refused, even with the right password.
	for i := range 10 {
		if r := login(ownerEmail, "guess", "198.51.100.1"); r.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: got %d, want 401 before the limit", i+1, r.Status)
		}
	}
	login(ownerEmail, ownerPassword, "198.51.100.1").fails(t, http.StatusTooManyRequests, "TooManyRequests")
	// The email is only slowed: its owner signs in from another address.
	session := decode[iam.Session](t, login(ownerEmail, ownerPassword, "198.51.100.2").ok(t))
	s.do("GET", "/api/v1/user/profile", bearer(session.Token), nil).ok(t)

	// One address gets 100 attempts over any emails, then nothing more.
	for i := range 100 {
		if r := login(fmt.Sprintf("user%d@example.com", i), "guess", "198.51.100.3"); r.Status != http.StatusUnauthorized {
			t.Fatalf("address attempt %d: got %d, want 401 before the limit", i+1, r.Status)
		}
	}
	login(ownerEmail, ownerPassword, "198.51.100.3").fails(t, http.StatusTooManyRequests, "TooManyRequests")
	login(ownerEmail, ownerPassword, "198.51.100.4").ok(t)

	// Successful sign-ins do not use up their address's allowance.
	for range 105 {
		login(ownerEmail, ownerPassword, "198.51.100.5").ok(t)
	}
}

// TestConcurrentSignInAttempts: attempts are counted before the password is
// compared, so 40 wrong passwords at once for one email from one address get
// no more comparisons than 10 in a row would.
func TestConcurrentSignInAttempts(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	attempt := func(password, addr string) int {
		body := fmt.Sprintf(`{"email":%q,"password":%q}`, ownerEmail, password)
		req := httptest.NewRequest("POST", "/api/v1/identity/login-by-email", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = addr + ":1234"
		rec := httptest.NewRecorder()
		s.e.ServeHTTP(rec, req)
		return rec.Code
	}
	statuses := make([]int, 40)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = attempt("guess", "198.51.100.1") })
	}
	wg.Wait()
	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
	}
	if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 30 {
		t.Fatalf("answers %v, want 10 compared (401) and 30 refused (429)", counts)
	}
	// The attacker's address stays refused; the owner elsewhere signs in.
	if st := attempt(ownerPassword, "198.51.100.1"); st != http.StatusTooManyRequests {
		t.Errorf("right password from the attacking address: %d, want 429", st)
	}
	r := s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword},
		remoteAddr, "198.51.100.2:1234").ok(t)
	s.do("GET", "/api/v1/user/profile", bearer(decode[iam.Session](t, r).Token), nil).ok(t)
}

// TestLogout: signing out ends the session on the server; a copy of its
// token is refused, other sessions live on.
func TestLogout(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	session := s.login(ownerEmail, ownerPassword)
	s.do("GET", "/api/v1/user/profile", session, nil).ok(t) // now in the actor cache
	r := s.do("POST", "/api/v1/identity/logout", session, nil).ok(t)
	if string(r.Data) != "true" {
		t.Errorf("logout answered %s, want true", r.Data)
	}
	s.do("GET", "/api/v1/user/profile", session, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("POST", "/api/v1/identity/logout", session, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t)

	// An access token has no session to end.
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}).ok(t)).Token
	s.do("POST", "/api/v1/identity/logout", token, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/user/profile", token, nil).ok(t)
	s.do("POST", "/api/v1/identity/logout", "", nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}

// TestRefreshToken: a new token that works, in place of the old one.
func TestRefreshToken(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	old := s.login(ownerEmail, ownerPassword)
	s.do("GET", "/api/v1/user/profile", old, nil).ok(t)
	r := s.do("POST", "/api/v1/identity/refresh-token", old, nil).ok(t)
	fresh := decode[iam.Session](t, r)
	if fresh.Token == "" || fresh.IsSsoFirstLogin || bearer(fresh.Token) == old {
		t.Fatalf("refresh answered %s, want a new token and isSsoFirstLogin false", r.Data)
	}
	s.do("GET", "/api/v1/user/profile", bearer(fresh.Token), nil).ok(t)
	s.do("GET", "/api/v1/user/profile", old, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("POST", "/api/v1/identity/refresh-token", old, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	// The new session ends like any other.
	s.do("POST", "/api/v1/identity/logout", bearer(fresh.Token), nil).ok(t)
	s.do("POST", "/api/v1/identity/refresh-token", bearer(fresh.Token), nil).fails(t, http.StatusUnauthorized, "Unauthorized")

	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}).ok(t)).Token
	s.do("POST", "/api/v1/identity/refresh-token", token, nil).fails(t, http.StatusForbidden, "Forbidden")
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
	expired := store.New(s.pool, s.st.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{SessionTTL: -time.Minute})
	session, err := expired.IAM().Login(context.Background(), iam.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.1")
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

	other := s.login(ownerEmail, ownerPassword)
	s.do("GET", "/api/v1/user/profile", other, nil).ok(t)
	r := reset(s.owner, map[string]string{"currentPassword": ownerPassword, "newPassword": "new-password-1"}).ok(t)
	answer := decode[iam.PasswordReset](t, r)
	if !answer.Success || answer.Reason != "" || answer.Token == "" {
		t.Fatalf("reset answered %s, want FeatBit's {success: true, reason: \"\"} and a token", r.Data)
	}
	fresh := bearer(answer.Token)
	// Every earlier session of the user has ended, the caller's and others.
	s.do("GET", "/api/v1/user/profile", s.owner, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", other, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", fresh, nil).ok(t)
	s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}).
		fails(t, http.StatusUnauthorized, "EmailPasswordMismatch")
	s.login(ownerEmail, "new-password-1")

	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", fresh, map[string]string{"name": "ci", "type": "Personal"}).ok(t)).Token
	reset(token, map[string]string{"currentPassword": "new-password-1", "newPassword": "new-password-2"}).fails(t, http.StatusForbidden, "Forbidden")
}

func TestContextDiscovery(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := decode[iam.Profile](t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t))
	if p.Email != ownerEmail || p.Name != "owner" {
		t.Errorf("profile = %+v, want %s named owner", p, ownerEmail)
	}
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs) != 1 || orgs[0].Key != "default-organization" || orgs[0].Name != "Default Organization" {
		t.Fatalf("organizations = %+v, want the default organization", orgs)
	}
	if len(orgs[0].DefaultPermissions.PolicyIDs) != 1 || orgs[0].DefaultPermissions.PolicyIDs[0] != core.DeveloperPolicyID {
		t.Errorf("default permissions = %+v, want the Developer policy", orgs[0].DefaultPermissions)
	}
	w := decode[iam.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t))
	if w.Key != "default-workspace" || w.Name != "Default Workspace" || w.SSO != nil {
		t.Errorf("workspace = %+v, want the default workspace without SSO", w)
	}
	if n := s.count(`SELECT count(*) FROM policies WHERE type = 'SysManaged' AND organization_id IS NULL`); n != 3 {
		t.Errorf("%d built-in policies, want 3", n)
	}
}
