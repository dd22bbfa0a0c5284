package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sso"
)

// What FeatBit's admin UI calls on its way in (featbit_entry.go).

// cookie returns the cookie named name that an answer sets, or nil.
func cookie(r *reply, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestFreshInstallAwaitsOnboarding: the default organization of a fresh
// install is not initialized until it has a project, so FeatBit's UI starts
// its onboarding; onboarding, or any project, initializes it.
func TestFreshInstallAwaitsOnboarding(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs) != 1 || orgs[0].Initialized {
		t.Fatalf("fresh install's organizations %+v, want one, not initialized", orgs)
	}
	body := map[string]any{"organizationName": "Acme", "organizationKey": "acme", "projectName": "Web", "projectKey": "web",
		"environments": []string{"Dev", "Prod"}}
	if !decode[bool](t, s.do("POST", "/api/v1/organizations/onboarding", s.owner, body).ok(t)) {
		t.Fatal("onboarding answered false")
	}
	got := decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+s.orgID.String(), s.owner, nil).ok(t))
	if !got.Initialized || got.Name != "Acme" || got.Key != "acme" {
		t.Fatalf("after onboarding %+v, want Acme initialized", got)
	}
	projects := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil).ok(t))
	if len(projects) != 1 || len(projects[0].Environments) != 2 {
		t.Fatalf("projects %+v, want Web with Dev and Prod", projects)
	}

	// An organization made without onboarding is initialized by its first project.
	second := decode[iam.Organization](t, s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Second", "key": "second"}).ok(t))
	org := func() iam.Organization {
		return decode[iam.Organization](t, s.do("GET", "/api/v1/organizations/"+second.ID.String(), s.owner, nil, "Organization", second.ID.String()).ok(t))
	}
	if org().Initialized {
		t.Fatal("a new organization is initialized")
	}
	s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Api", "key": "api"}, "Organization", second.ID.String()).ok(t)
	if !org().Initialized {
		t.Fatal("an organization with a project is not initialized")
	}
}

// TestJoinOrganization: FeatBit's UI joins the organization picked; a person
// enters only their own, which is remembered as where they work.
func TestJoinOrganization(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	second := decode[iam.Organization](t, s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Second", "key": "second"}).ok(t))
	// Two organizations and no header: which one is unsaid.
	s.do("POST", "/api/v1/user/join-organization", s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "organization_is_required")
	if !decode[bool](t, s.do("POST", "/api/v1/user/join-organization", s.owner, map[string]any{}, "Organization", second.ID.String()).ok(t)) {
		t.Fatal("join answered false")
	}
	owner := s.userID(s.owner)
	if uc, err := s.st.IAM().UserContext(t.Context(), owner); err != nil || uc.OrganizationID != second.ID {
		t.Fatalf("after joining Second the owner works in %+v (%v)", uc, err)
	}
	s.do("POST", "/api/v1/user/join-organization", s.owner, nil, "Organization", s.orgID.String()).ok(t)
	if uc, _ := s.st.IAM().UserContext(t.Context(), owner); uc.OrganizationID != s.orgID {
		t.Fatalf("after joining the default organization the owner works in %v", uc.OrganizationID)
	}

	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	// Not a member of Second: refused, as every route naming it.
	s.do("POST", "/api/v1/user/join-organization", dev, map[string]any{}, "Organization", second.ID.String()).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/user/join-organization", dev, map[string]any{}, "Organization", uuid.NewString()).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/user/join-organization", dev, `[1]`).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", "/api/v1/user/join-organization", dev, map[string]any{}).ok(t)
	s.do("POST", "/api/v1/user/join-organization", "", map[string]any{}).fails(t, http.StatusUnauthorized, "Unauthorized")
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner,
		map[string]string{"name": "script", "type": "Personal"}, "Organization", s.orgID.String()).ok(t)).Token
	s.do("POST", "/api/v1/user/join-organization", token, map[string]any{}).fails(t, http.StatusForbidden, "Forbidden")
}

// TestSSOPreCheckAndSocialProviders: FeatBit's sign-in page learns that
// single sign-on is offered once the workspace has OIDC settings, with the
// only workspace's key, and that there are no social providers.
func TestSSOPreCheckAndSocialProviders(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	pre := decode[sso.SSOPreCheck](t, s.do("GET", "/api/v1/sso/pre-check", "", nil).ok(t))
	if pre.IsEnabled || pre.WorkspaceKey != "default-workspace" {
		t.Fatalf("pre-check %+v, want disabled with default-workspace", pre)
	}
	s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, map[string]string{"clientId": "c", "clientSecret": "s",
		"authorizationEndpoint": "https://id.example.com/auth", "tokenEndpoint": "https://id.example.com/token",
		"clientAuthenticationMethod": "client_secret_post", "scope": "openid email", "userEmailClaim": "email"}).ok(t)
	pre = decode[sso.SSOPreCheck](t, s.do("GET", "/api/v1/sso/pre-check", "", nil).ok(t))
	if !pre.IsEnabled || pre.WorkspaceKey != "default-workspace" {
		t.Fatalf("pre-check %+v, want enabled with default-workspace", pre)
	}
	// A second workspace: the person types theirs.
	_, err := s.q.CreateWorkspace(t.Context(), db.CreateWorkspaceParams{Name: "Other", Key: "other-ws"})
	must(t, err)
	pre = decode[sso.SSOPreCheck](t, s.do("GET", "/api/v1/sso/pre-check", "", nil).ok(t))
	if !pre.IsEnabled || pre.WorkspaceKey != "" {
		t.Fatalf("pre-check %+v with two workspaces, want enabled and no key", pre)
	}
	r := s.do("GET", "/api/v1/social/providers?redirectUri=http://ui.example/login?social-logged-in=true", "", nil).ok(t)
	if string(r.Data) != "[]" {
		t.Fatalf("social providers %s, want []", r.Data)
	}
}

// TestRefreshTokenCookie: signing in sets FeatBit's refresh-token cookie,
// which refresh-token trades, without a bearer token, for a new session and
// a new cookie; the one replaced stops working, and so does its session.
func TestRefreshTokenCookie(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	signIn := func() (string, *http.Cookie) {
		r := s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}).ok(t)
		return bearer(decode[iam.Session](t, r).Token), cookie(r, "refresh-token")
	}
	session, ck := signIn()
	if ck == nil || ck.Value == "" || !ck.HttpOnly || ck.Path != "/api/v1/identity" || ck.SameSite != http.SameSiteLaxMode ||
		ck.MaxAge != 30*24*3600 || ck.Secure {
		t.Fatalf("refresh cookie %+v, want HttpOnly, Path /api/v1/identity, SameSite=Lax, 30 days, not Secure over http", ck)
	}
	// Over TLS the cookie is Secure.
	req := httptest.NewRequest("POST", "https://bunting.example/api/v1/identity/login-by-email",
		strings.NewReader(`{"email":"`+ownerEmail+`","password":"`+ownerPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, req)
	if cks := rec.Result().Cookies(); rec.Code != http.StatusOK || len(cks) != 1 || !cks[0].Secure {
		t.Fatalf("sign-in over TLS answered %d with cookies %v, want a Secure refresh cookie", rec.Code, cks)
	}

	r := s.do("POST", "/api/v1/identity/refresh-token", "", map[string]any{}, "Cookie", "refresh-token="+ck.Value).ok(t)
	next := bearer(decode[iam.Session](t, r).Token)
	nextCk := cookie(r, "refresh-token")
	if nextCk == nil || nextCk.Value == ck.Value || !nextCk.HttpOnly || nextCk.Path != "/api/v1/identity" {
		t.Fatalf("refreshed cookie %+v, want a new one", nextCk)
	}
	s.do("GET", "/api/v1/user/profile", next, nil).ok(t)
	// The replaced session stops working.
	s.do("GET", "/api/v1/user/profile", session, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	// FeatBit's UI sends its expired bearer token with the cookie: the cookie decides.
	r = s.do("POST", "/api/v1/identity/refresh-token", session, nil, "Cookie", "refresh-token="+nextCk.Value).ok(t)
	third := cookie(r, "refresh-token")
	s.do("POST", "/api/v1/identity/refresh-token", "", `{"x":[1]}`, "Cookie", "refresh-token="+third.Value).fails(t, http.StatusBadRequest, "body_is_invalid")
	// The replaced cookie stops working (and, spent, revokes its chain:
	// TestRefreshTokenReuse); a refused cookie is deleted.
	old := s.do("POST", "/api/v1/identity/refresh-token", "", nil, "Cookie", "refresh-token="+ck.Value)
	old.fails(t, http.StatusUnauthorized, "Unauthorized")
	if del := cookie(old, "refresh-token"); del == nil || del.MaxAge >= 0 {
		t.Fatalf("a refused cookie is not deleted: %+v", del)
	}
	s.do("POST", "/api/v1/identity/refresh-token", "", nil, "Cookie", "refresh-token=made-up").fails(t, http.StatusUnauthorized, "Unauthorized")

	// Without a cookie the bearer refresh works as before.
	plain := s.login(ownerEmail, ownerPassword)
	fresh := bearer(decode[iam.Session](t, s.do("POST", "/api/v1/identity/refresh-token", plain, nil).ok(t)).Token)
	s.do("GET", "/api/v1/user/profile", plain, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("POST", "/api/v1/identity/refresh-token", "", nil).fails(t, http.StatusUnauthorized, "Unauthorized")

	// Signing out with the cookie revokes it.
	session2, ck2 := signIn()
	out := s.do("POST", "/api/v1/identity/logout", session2, nil, "Cookie", "refresh-token="+ck2.Value).ok(t)
	if del := cookie(out, "refresh-token"); del == nil || del.MaxAge >= 0 {
		t.Fatalf("logout does not delete the cookie: %+v", del)
	}
	s.do("POST", "/api/v1/identity/refresh-token", "", nil, "Cookie", "refresh-token="+ck2.Value).fails(t, http.StatusUnauthorized, "Unauthorized")

	// A password change ends every refresh token of the user.
	_, ck3 := signIn()
	s.do("PUT", "/api/v1/identity/reset-password", fresh, map[string]string{"currentPassword": ownerPassword, "newPassword": "another-password"}).ok(t)
	s.do("POST", "/api/v1/identity/refresh-token", "", nil, "Cookie", "refresh-token="+ck3.Value).fails(t, http.StatusUnauthorized, "Unauthorized")
	if n := s.count(`SELECT count(*) FROM refresh_tokens`); n != 0 {
		t.Fatalf("%d refresh tokens left after the password change", n)
	}
}

// TestOrganizationMembers: the pickers' member list, for those who use one.
func TestOrganizationMembers(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Web", "key": "web"}).ok(t)
	statements := func(action access.Action, rn string) uuid.UUID {
		p := decode[iam.Policy](t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": string(action), "key": strings.ToLower(string(action))}).ok(t))
		s.do("PUT", "/api/v1/policies/"+p.ID.String()+"/statements", s.owner, []map[string]any{{"resourceType": "*", "effect": "allow",
			"actions": []string{string(action)}, "resources": []string{rn}}}).ok(t)
		return p.ID
	}
	tokens, _ := s.addMember("tokens@example.com", statements(access.ListAccessTokens, core.AccessTokenRN))
	reader, _ := s.addMember("reader@example.com", statements(access.CanAccessEnv, "project/web:env/dev"))
	nobody, _ := s.addMember("nobody@example.com")

	for _, caller := range []string{s.owner, tokens, reader} {
		page := decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/organizations/members?searchText=example&pageIndex=0&pageSize=10", caller, nil).ok(t))
		if page.TotalCount != 4 || len(page.Items) != 4 || page.Items[0].Email == "" || page.Items[0].Groups == nil {
			t.Fatalf("members %+v, want all 4 with emails and groups", page)
		}
	}
	page := decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/organizations/members?searchText=READER", s.owner, nil).ok(t))
	if page.TotalCount != 1 || page.Items[0].Email != "reader@example.com" {
		t.Fatalf("search READER: %+v", page)
	}
	s.do("GET", "/api/v1/organizations/members", nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/organizations/members?pageSize=0", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
	// Another organization's owner sees their own members only.
	other, _ := s.otherOwner()
	page = decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/organizations/members", other, nil).ok(t))
	if page.TotalCount != 1 || page.Items[0].Email != "other.owner@example.com" {
		t.Fatalf("another organization's members %+v", page)
	}
}

// otherOwner makes a user who owns a second organization of the workspace
// and belongs to no other; it returns their Authorization value and the
// organization.
func (s *server) otherOwner() (string, uuid.UUID) {
	s.t.Helper()
	ctx := context.Background()
	org, err := s.q.CreateOrganization(ctx, db.CreateOrganizationParams{WorkspaceID: s.wsID, Name: "Other", Key: "other-org",
		DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(s.t, err)
	hash, _ := bcrypt.GenerateFromPassword([]byte("other-password"), bcrypt.MinCost)
	h := string(hash)
	u, err := s.q.CreateUser(ctx, db.CreateUserParams{Email: "other.owner@example.com", Name: "Other", PasswordHash: &h})
	must(s.t, err)
	must(s.t, s.q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: s.wsID, UserID: u.ID}))
	_, err = s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: org.ID, UserID: u.ID})
	must(s.t, err)
	must(s.t, s.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: org.ID, UserID: u.ID, PolicyID: core.OwnerPolicyID}))
	return s.login("other.owner@example.com", "other-password"), org.ID
}

// TestAccessTokenListMasked: listed tokens show their start and asterisks,
// as FeatBit masks them; only creation answers the whole value.
func TestAccessTokenListMasked(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	created := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}).ok(t))
	page := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens", s.owner, nil).ok(t))
	want := created.Token[:8] + strings.Repeat("*", 19)
	if len(page.Items) != 1 || page.Items[0].Token != want {
		t.Fatalf("listed token %q, want %q", page.Items[0].Token, want)
	}
}

// TestInheritedPoliciesCreatedAt: a policy held through a group says when it was made.
func TestInheritedPoliciesCreatedAt(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, dev := s.addMember("dev@example.com")
	g := decode[iam.Group](t, s.do("POST", "/api/v1/groups", s.owner, map[string]string{"name": "Devs"}).ok(t))
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-member/"+dev.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	r := s.do("GET", "/api/v1/members/"+dev.String()+"/inherited-policies", s.owner, nil).ok(t)
	page := decode[core.Paged[iam.InheritedPolicy]](t, r)
	if len(page.Items) != 1 || page.Items[0].CreatedAt.IsZero() || page.Items[0].GroupName != "Devs" ||
		!strings.Contains(string(r.Data), `"createdAt":"`) || !strings.Contains(string(r.Data), `Z"`) {
		t.Fatalf("inherited policies %s, want Developer through Devs with createdAt in UTC", r.Data)
	}
}

// TestWorkspaceUsages: the usage tab's numbers are the end users and
// evaluations Bunting recorded, in FeatBit's shape.
func TestWorkspaceUsages(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := decode[core.Project](t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Web", "key": "web"}).ok(t))
	env := p.Environments[0]
	flag := decode[flagstore.Flag](t, s.do("POST", "/api/v1/envs/"+env.ID.String()+"/feature-flags", s.owner, map[string]string{"name": "F", "key": "f"}).ok(t))
	day := func(d string) time.Time { t, _ := time.Parse(time.DateOnly, d); return t.Add(10 * time.Hour) }
	exec := func(sql string, args ...any) {
		_, err := s.pool.Exec(t.Context(), sql, args...)
		must(t, err)
	}
	// u1 first seen on the 2nd, last on the 5th; u2 first and last seen on the 9th (before the period).
	exec(`INSERT INTO end_users (env_id, key_id, created_at, updated_at) VALUES ($1, 'u1', $2, $3), ($1, 'u2', $4, $4)`,
		env.ID, day("2026-03-02"), day("2026-03-05"), day("2026-02-25"))
	// 7 evaluations all on the 3rd; 5 spread over the 3rd and 4th (not surely of either day).
	exec(`INSERT INTO flag_evaluations (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at) VALUES
		($1, 'a', 7, $2, $2), ($1, 'b', 5, $2, $3)`, flag.ID, day("2026-03-03"), day("2026-03-04"))

	r := s.do("GET", "/api/v1/workspaces/usages?startDate=2026-03-01&endDate=2026-03-07&prevStartDate=2026-02-22&prevEndDate=2026-02-28", s.owner, nil).ok(t)
	u := decode[iam.WorkspaceUsage](t, r)
	if u.Summary != (iam.UsageSummary{UniqueUsers: 1, TotalFlagEvaluations: 7, PrevUniqueUsers: 1}) {
		t.Fatalf("summary %+v", u.Summary)
	}
	if len(u.DailyTrend) != 7 || u.DailyTrend[1] != (iam.DailyUsage{Date: "2026-03-02", NewUsers: 1}) ||
		u.DailyTrend[2] != (iam.DailyUsage{Date: "2026-03-03", FlagEvaluations: 7}) {
		t.Fatalf("daily trend %+v", u.DailyTrend)
	}
	if len(u.EnvironmentUsages) != 2 || u.EnvironmentUsages[0] != (iam.EnvironmentUsage{OrgName: "Default Organization", ProjectName: "Web",
		EnvName: env.Name, EnvID: env.ID, UniqueUsers: 1, FlagEvaluations: 7}) {
		t.Fatalf("environment usages %+v", u.EnvironmentUsages)
	}
	// Without the previous period: the week before.
	u = decode[iam.WorkspaceUsage](t, s.do("GET", "/api/v1/workspaces/usages?startDate=2026-03-01&endDate=2026-03-07", s.owner, nil).ok(t))
	if u.Summary.PrevUniqueUsers != 1 {
		t.Fatalf("previous week's users %d, want 1", u.Summary.PrevUniqueUsers)
	}

	s.do("GET", "/api/v1/workspaces/usages", s.owner, nil).fails(t, http.StatusBadRequest, "startDate_is_required", "endDate_is_required")
	s.do("GET", "/api/v1/workspaces/usages?startDate=2026-03-08&endDate=2026-03-07", s.owner, nil).fails(t, http.StatusBadRequest, "endDate_is_invalid")
	s.do("GET", "/api/v1/workspaces/usages?startDate=March&endDate=2026-03-07&prevStartDate=2026-01-01", s.owner, nil).
		fails(t, http.StatusBadRequest, "startDate_is_invalid", "prevEndDate_is_required")
	s.do("GET", "/api/v1/workspaces/usages?startDate=2025-01-01&endDate=2026-03-07", s.owner, nil).fails(t, http.StatusBadRequest, "endDate_is_invalid")
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("GET", "/api/v1/workspaces/usages?startDate=2026-03-01&endDate=2026-03-07", dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/workspaces/usages?startDate=2026-03-01&endDate=2026-03-07", "", nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}

// raw sends a request and returns the recorder, for answers that are not
// an envelope (a redirect); the exchange is still checked against the
// OpenAPI document.
func (s *server) raw(method, target string, headers ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, req)
	s.validate(method, target, req.Header.Clone(), nil, rec)
	return rec
}
