package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/bunting-flags/bunting/web/oidcflow/oidctest"
)

// newSSOApp is newApp served at its real loopback address, which is its
// BUNTING_BASE_URL, so the provider can send browsers back to it.
func newSSOApp(t *testing.T, logs *logRecorder) *app {
	t.Helper()
	return newSSOAppWith(t, logs, true)
}

// newSSOAppWith is newSSOApp with BUNTING_SSO_ALLOW_PRIVATE_NETWORKS as given.
func newSSOAppWith(t *testing.T, logs *logRecorder, allowPrivate bool) *app {
	t.Helper()
	// The provider is on loopback: tests (and on-premises providers) need
	// private networks allowed.
	return newLoopbackApp(t, logs, core.Options{AllowPrivateNetworks: allowPrivate})
}

// newLoopbackApp is newSSOApp with the store's outbound settings as given
// (the test's password cost and sign-in delay are set here).
func newLoopbackApp(t *testing.T, logs *logRecorder, opts core.Options) *app {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("test-secret-", 4))
	must(t, err)
	log := slog.New(logs)
	opts.PasswordCost, opts.LoginDelayStep = bcrypt.MinCost, time.Millisecond
	// The clock can be moved forward, to expire sign-in attempts.
	skew := &atomic.Int64{}
	opts.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	st := store.New(pool, keys, log, opts)
	_, err = st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword})
	must(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	base, _ := url.Parse("http://" + l.Addr().String())
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: newHandler(base, st, log)}}
	srv.Start()
	t.Cleanup(srv.Close)
	a := &app{t: t, srv: srv, st: st, pool: pool, q: db.New(pool), skew: skew}
	u, err := a.q.GetUserByEmail(ctx, ownerEmail)
	must(t, err)
	uc, err := st.IAM().UserContext(ctx, u.ID)
	must(t, err)
	a.owner, a.orgID, a.wsID = u.ID, uc.OrganizationID, uc.WorkspaceID
	return a
}

// useProvider stores the workspace's OIDC settings for the provider, as an
// administrator would; with issuer false Bunting must find discovery itself.
func (a *app) useProvider(p *oidcProvider, method string, issuer bool) {
	a.t.Helper()
	in := iam.OIDCSettings{ClientID: p.ClientID, ClientSecret: p.Secret, AuthorizationEndpoint: p.AuthEndpoint(),
		TokenEndpoint: p.TokenEndpoint(), ClientAuthenticationMethod: method, Scope: "openid email profile"}
	if issuer {
		in.Issuer = p.Issuer
	}
	_, err := a.st.IAM().UpdateWorkspaceSSO(context.Background(), a.ownerActor(), in)
	must(a.t, err)
}

// startSSO submits the sign-in page's SSO form and follows the redirects to
// the provider and back up to, not into, Bunting's callback, whose URL it
// returns.
func (b *browser) startSSO(workspace, next string) *url.URL {
	b.t.Helper()
	b.get("/login?next=" + url.QueryEscape(next)).status(http.StatusOK).must("sso-login-form")
	b.client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == "/sso/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}
	defer func() { b.client.CheckRedirect = nil }()
	form := url.Values{"next": {next}}
	if workspace != "" {
		form.Set("workspace", workspace)
	}
	p := b.post("/sso/start", form)
	if p.code != http.StatusFound {
		b.t.Fatalf("starting SSO ended at %s with %d, want the provider's redirect; body:\n%s", p.url, p.code, p.body)
	}
	back, err := url.Parse(p.header.Get("Location"))
	must(b.t, err)
	if back.Path != "/sso/callback" {
		b.t.Fatalf("the provider sent the browser to %s", back)
	}
	return back
}

// ssoSignIn goes through the whole flow and returns the page it lands on.
func (b *browser) ssoSignIn(next string) *page {
	b.t.Helper()
	return b.get(b.startSSO("", next).RequestURI())
}

// signedOut fails unless the browser holds no session: no session cookie,
// and a page sends it to sign in.
func (b *browser) signedOut() {
	b.t.Helper()
	base, _ := url.Parse(b.app.srv.URL)
	for _, c := range b.client.Jar.Cookies(base) {
		if c.Name == "bunting_session" {
			b.t.Errorf("a session cookie was set after a refused sign-in")
		}
	}
	if p := b.get("/projects"); p.url.Path != "/login" {
		b.t.Errorf("after a refused sign-in /projects opened %s, want the sign-in page", p.url)
	}
}

// rows counts what a sign-in may create.
func (a *app) rows() string {
	a.t.Helper()
	var users, wsUsers, orgUsers, policies, audits, contexts int
	must(a.t, a.pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM users), (SELECT count(*) FROM workspace_users), (SELECT count(*) FROM organization_users),
		(SELECT count(*) FROM member_policies), (SELECT count(*) FROM audit_logs), (SELECT count(*) FROM user_contexts)`).
		Scan(&users, &wsUsers, &orgUsers, &policies, &audits, &contexts))
	return fmt.Sprintf("users=%d workspace_users=%d organization_users=%d member_policies=%d audit_logs=%d user_contexts=%d",
		users, wsUsers, orgUsers, policies, audits, contexts)
}

// TestSSOSignIn drives the whole redirect flow with a cookie jar: a new
// person is created without a password, joins the workspace and its default
// organization with the default permissions, lands where they were going,
// and signs in again later as the same user.
func TestSSOSignIn(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretBasic, true)
	before := a.rows()

	b := a.browser()
	landed := b.ssoSignIn("/access-tokens").status(http.StatusOK).at("/access-tokens")
	if got := landed.text("flash-success"); !strings.Contains(got, "created through single sign-on") {
		t.Errorf("first sign-in message %q", got)
	}

	// The authorization request: code flow with PKCE S256, state, nonce, the
	// documented redirect URI and the configured scope.
	prov.Mu.Lock()
	auth := prov.Authorizations[0]
	prov.Mu.Unlock()
	if got, want := auth.Get("redirect_uri"), a.srv.URL+"/sso/callback"; got != want {
		t.Errorf("redirect_uri %q, want %q", got, want)
	}
	if auth.Get("code_challenge_method") != "S256" || len(auth.Get("code_challenge")) != 43 || auth.Get("scope") != "openid email profile" {
		t.Errorf("authorization request %v", auth)
	}

	user, err := a.q.GetUserByEmail(t.Context(), prov.Email)
	must(t, err)
	if user.PasswordHash != nil || user.InitialPassword != nil || user.Name != prov.Name {
		t.Errorf("new user %+v, want no password and the provider's name", user)
	}
	member, err := a.q.GetMember(t.Context(), db.GetMemberParams{OrganizationID: a.orgID, UserID: user.ID})
	must(t, err)
	if member.InvitorID != nil {
		t.Errorf("invitor %v, want none", member.InvitorID)
	}
	policies, err := a.q.ListMemberPolicyIDs(t.Context(), db.ListMemberPolicyIDsParams{OrganizationID: a.orgID, UserID: user.ID})
	must(t, err)
	if len(policies) != 1 || policies[0] != core.DeveloperPolicyID {
		t.Errorf("policies %v, want the organization's default (Developer)", policies)
	}
	var comment, creator string
	must(t, a.pool.QueryRow(t.Context(), `SELECT comment, creator_id::text FROM audit_logs WHERE ref_type = 'Member' AND ref_id = $1`,
		user.ID.String()).Scan(&comment, &creator))
	if comment != "Joined through single sign-on" || creator != user.ID.String() {
		t.Errorf("audit entry %q by %s", comment, creator)
	}
	if left := b.ssoAttempts(); len(left) != 0 {
		t.Errorf("the browser keeps %v after the callback, want its attempt consumed", left)
	}
	if logs.mentions(prov.Secret) {
		t.Errorf("the client secret reached the log")
	}

	// Signing out and in again: the same user, nothing new.
	b.post("/logout", nil)
	b.signedOut()
	after := a.rows()
	if after == before {
		t.Fatalf("the first sign-in created nothing")
	}
	landed = b.ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	if landed.has("flash-success") {
		t.Errorf("a later sign-in says %q", landed.text("flash-success"))
	}
	if got := a.rows(); got != after {
		t.Errorf("a second sign-in changed %s into %s", after, got)
	}
	// A session started by SSO is an ordinary session.
	b.get("/profile").status(http.StatusOK).at("/profile")
	if got := len(logs.reasons()); got != 0 {
		t.Errorf("refusals logged: %v", logs.reasons())
	}
}

// TestSSOClientAuthentication signs in with each client authentication
// method, and proves the setting is what is sent: a provider expecting the
// other method refuses the exchange.
func TestSSOClientAuthentication(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "")
	for _, method := range []string{iam.ClientSecretBasic, iam.ClientSecretPost} {
		t.Run(method, func(t *testing.T) {
			prov.Set(func(p *oidcProvider) { p.Method = method; p.Email = "auth-" + method + "@example.com" })
			a.useProvider(prov, method, false) // no issuer: discovery next to the endpoints
			b := a.browser()
			b.ssoSignIn("/profile").status(http.StatusOK).at("/profile")

			other := iam.ClientSecretPost
			if method == other {
				other = iam.ClientSecretBasic
			}
			prov.Set(func(p *oidcProvider) { p.Method = other; p.Email = "refused-" + method + "@example.com" })
			before := a.rows()
			b2 := a.browser()
			b2.ssoSignIn("/profile").status(http.StatusBadGateway)
			b2.signedOut()
			if got := a.rows(); got != before {
				t.Errorf("a refused exchange changed %s into %s", before, got)
			}
			if r := logs.reasons(); len(r) == 0 || r[len(r)-1] != "token_exchange_failed" {
				t.Errorf("logged reasons %v, want token_exchange_failed last", r)
			}
		})
	}
}

// TestSSOFailures proves each refusal shows a page that leads back to sign
// in, is logged with its reason, starts no session and stores nothing.
func TestSSOFailures(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretPost, true)
	prov.Set(func(p *oidcProvider) { p.Method = iam.ClientSecretPost })
	outer := prov

	// callback reaches Bunting's callback as each case says; by default as the provider sent it.
	type callback func(t *testing.T, b *browser, back *url.URL) *page
	plain := func(t *testing.T, b *browser, back *url.URL) *page { return b.get(back.RequestURI()) }
	withQuery := func(change func(q url.Values)) callback {
		return func(t *testing.T, b *browser, back *url.URL) *page {
			q := back.Query()
			change(q)
			back.RawQuery = q.Encode()
			return b.get(back.RequestURI())
		}
	}
	cases := []struct {
		name     string
		knobs    func(p *oidcProvider)
		callback callback
		status   int
		reason   string
		// cold cases need a provider Bunting has not read yet: one it has
		// read is kept, discovery and keys (sso_providers.go).
		cold bool
	}{
		{name: "provider error", knobs: func(p *oidcProvider) { p.AuthorizeError = "access_denied" },
			status: http.StatusUnauthorized, reason: "provider_error"},
		{name: "state missing", callback: withQuery(func(q url.Values) { q.Del("state") }),
			status: http.StatusBadRequest, reason: "state_missing"},
		{name: "state tampered", callback: withQuery(func(q url.Values) {
			s := q.Get("state")
			q.Set("state", s[:len(s)-1]+map[bool]string{true: "A", false: "B"}[s[len(s)-1] != 'A'])
		}), status: http.StatusBadRequest, reason: "state_invalid"},
		{name: "state from another browser", callback: func(t *testing.T, b *browser, back *url.URL) *page {
			// Another browser that began an attempt of its own, so it has a binding too.
			other := b.app.browser()
			other.startSSO("", "/")
			p := other.get(back.RequestURI())
			other.signedOut()
			return p
		}, status: http.StatusBadRequest, reason: "state_invalid"},
		{name: "state expired", callback: func(t *testing.T, b *browser, back *url.URL) *page {
			b.app.skew.Store(int64(sso.SSOStateTTL))
			defer b.app.skew.Store(0)
			return b.get(back.RequestURI())
		}, status: http.StatusBadRequest, reason: "state_expired"},
		{name: "token exchange refused", knobs: func(p *oidcProvider) { p.TokenStatus = http.StatusBadRequest },
			status: http.StatusBadGateway, reason: "token_exchange_failed"},
		{name: "no signing keys", knobs: func(p *oidcProvider) { p.KeysStatus = http.StatusInternalServerError },
			status: http.StatusBadGateway, reason: "no_keys", cold: true},
		{name: "no discovery", knobs: func(p *oidcProvider) { p.NoDiscovery = true },
			status: http.StatusBadGateway, reason: "no_keys", cold: true},
		{name: "signed by another key", knobs: func(p *oidcProvider) { p.Signer = p.OtherKey },
			status: http.StatusUnauthorized, reason: "id_token_invalid"},
		{name: "wrong audience", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["aud"] = "another-client" }
		}, status: http.StatusUnauthorized, reason: "id_token_invalid"},
		{name: "wrong issuer", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["iss"] = "https://impostor.example.com" }
		}, status: http.StatusUnauthorized, reason: "id_token_invalid"},
		{name: "expired id token", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) {
				c["iat"], c["exp"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-time.Minute).Unix()
			}
		}, status: http.StatusUnauthorized, reason: "id_token_expired"},
		{name: "wrong nonce", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["nonce"] = "not-this-sign-in" }
		}, status: http.StatusUnauthorized, reason: "nonce_mismatch"},
		{name: "no nonce", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { delete(c, "nonce") }
		}, status: http.StatusUnauthorized, reason: "nonce_mismatch"},
		{name: "email unverified", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["email_verified"] = false }
		}, status: http.StatusForbidden, reason: "email_unverified"},
		{name: "email unverified as text", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["email_verified"] = "false" }
		}, status: http.StatusForbidden, reason: "email_unverified"},
		{name: "email missing", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { delete(c, "email") }
		}, status: http.StatusForbidden, reason: "email_missing"},
		{name: "email not an address", knobs: func(p *oidcProvider) {
			p.Tweak = func(c map[string]any) { c["email"] = "not an email" }
		}, status: http.StatusForbidden, reason: "email_missing"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prov := prov
			if tc.cold {
				prov = newOIDCProvider(t, "127.0.0.1", "/realms/cold")
				prov.Set(func(p *oidcProvider) { p.Method = iam.ClientSecretPost })
				a.useProvider(prov, iam.ClientSecretPost, true)
				defer a.useProvider(outer, iam.ClientSecretPost, true)
			}
			prov.Reset()
			email := fmt.Sprintf("failure-%d@example.com", i)
			prov.Set(func(p *oidcProvider) {
				p.Email = email
				if tc.knobs != nil {
					tc.knobs(p)
				}
			})
			before := a.rows()
			refusals := len(logs.reasons())
			b := a.browser()
			back := b.startSSO("", "/projects")
			cb := tc.callback
			if cb == nil {
				cb = plain
			}
			p := cb(t, b, back).status(tc.status)
			if p.url.Path != "/sso/callback" || !p.has("error-heading") || !strings.Contains(p.body, `href="/login"`) {
				t.Errorf("failure page at %s, want an explanation leading to /login; body:\n%s", p.url, p.body)
			}
			if got := logs.reasons(); len(got) != refusals+1 || got[len(got)-1] != tc.reason {
				t.Errorf("logged reasons %v, want %s last", got[refusals:], tc.reason)
			}
			b.signedOut()
			if got := a.rows(); got != before {
				t.Errorf("a refused sign-in changed %s into %s", before, got)
			}
			if _, err := a.q.GetUserByEmail(t.Context(), email); err == nil {
				t.Errorf("user %s was created", email)
			}
		})
	}
	if logs.mentions(prov.Secret) {
		t.Errorf("the client secret reached the log")
	}

	t.Run("state replayed", func(t *testing.T) {
		prov.Reset()
		prov.Set(func(p *oidcProvider) { p.Email = "replay@example.com" })
		b := a.browser()
		back := b.startSSO("", "/projects")
		b.get(back.RequestURI()).status(http.StatusOK).at("/projects")
		b.post("/logout", nil)
		before := a.rows()
		p := b.get(back.RequestURI()).status(http.StatusBadRequest)
		if !strings.Contains(p.text("error-text"), "already used") {
			t.Errorf("replay explained as %q", p.text("error-text"))
		}
		b.signedOut()
		if got := a.rows(); got != before {
			t.Errorf("a replayed state changed %s into %s", before, got)
		}
		prov.Mu.Lock()
		defer prov.Mu.Unlock()
		if prov.TokenRequests == 0 {
			t.Errorf("the provider was never asked for a token")
		}
	})
}

// TestSSOMatchesExistingUsers: an existing member is matched by email
// case-insensitively and keeps their password and access; an existing user
// of no organization here joins the workspace's default (oldest) organization.
func TestSSOMatchesExistingUsers(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "")
	a.useProvider(prov, iam.ClientSecretBasic, false)
	createOrganization(t, a, "Newer", "newer", true) // not the default: it is younger

	alice := a.addMember("Alice@Example.COM", core.OwnerPolicyID)
	prov.Set(func(p *oidcProvider) { p.Email = "alice@example.com" })
	before := a.rows()
	b := a.browser()
	b.ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	if got := a.rows(); got != before {
		t.Errorf("signing in an existing member changed %s into %s", before, got)
	}
	if got := b.get("/members").status(http.StatusOK).text("user-email"); got != "Alice@Example.COM" { // Alice acts as herself
		t.Errorf("signed in as %q, want Alice", got)
	}
	u, err := a.q.GetUser(t.Context(), alice)
	must(t, err)
	if u.PasswordHash == nil {
		t.Errorf("the member's password was dropped")
	}
	b.post("/logout", nil)
	a.signedIn("alice@example.com", memberPassword) // the password still works

	// A user who exists but belongs to no organization of this workspace.
	hash := "x"
	loner, err := a.q.CreateUser(t.Context(), db.CreateUserParams{Email: "loner@example.com", Name: "Loner", PasswordHash: &hash})
	must(t, err)
	prov.Set(func(p *oidcProvider) { p.Email = "LONER@example.com" })
	b = a.browser()
	b.ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	orgs, err := a.q.ListUserOrganizations(t.Context(), db.ListUserOrganizationsParams{WorkspaceID: a.wsID, UserID: loner.ID})
	must(t, err)
	if len(orgs) != 1 || orgs[0].ID != a.orgID {
		t.Errorf("joined %v, want only the default organization %s", orgs, a.orgID)
	}
	if uc, err := a.st.IAM().UserContext(t.Context(), loner.ID); err != nil || uc.OrganizationID != a.orgID {
		t.Errorf("lands in %+v (%v), want the default organization", uc, err)
	}
}

// TestSSOSignInPage: the sign-in page offers SSO only when a workspace has
// settings, asks for the workspace key when there are several, and lets its
// form lead to the provider (Content-Security-Policy form-action).
func TestSSOSignInPage(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	b := a.browser()
	if p := b.get("/login").status(http.StatusOK); p.has("sso-login") {
		t.Errorf("SSO offered with no settings")
	}
	prov := newOIDCProvider(t, "127.0.0.1", "")
	a.useProvider(prov, iam.ClientSecretBasic, true)
	p := b.get("/login?next=%2Faccess-tokens").status(http.StatusOK)
	form := p.must("sso-login-form")
	if input(form, "workspace") != nil {
		t.Errorf("a single workspace asks for its key")
	}
	if got := attr(input(form, "next"), "value"); got != "/access-tokens" {
		t.Errorf("next %q", got)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+prov.Srv.URL+";") {
		t.Errorf("CSP %q does not let the form lead to %s", csp, prov.Srv.URL)
	}

	// Several workspaces: the person names theirs.
	other, err := a.q.CreateWorkspace(t.Context(), db.CreateWorkspaceParams{Name: "Other", Key: "other"})
	must(t, err)
	_, err = a.q.CreateOrganization(t.Context(), db.CreateOrganizationParams{WorkspaceID: other.ID, Name: "Other org",
		Key: "other-org", DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(t, err)
	form = b.get("/login").must("sso-login-form")
	if input(form, "workspace") == nil {
		t.Fatalf("several workspaces and no workspace field")
	}
	for _, key := range []string{"", "no-such-workspace", "other"} {
		p := b.post("/sso/start", url.Values{"workspace": {key}, "next": {"/"}}).status(http.StatusBadRequest)
		if got := text(find(p.must("sso-login-form"), "error-workspace")); got == "" {
			t.Errorf("workspace %q: no problem shown next to the field", key)
		}
	}
	back := b.startSSO("DEFAULT-workspace", "/projects")
	b.get(back.RequestURI()).status(http.StatusOK).at("/projects")
}

// TestSSOTestConnection: the workspace page shows the redirect URI to
// register and tests the endpoints in the form: discovery and keys.
func TestSSOTestConnection(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/workspace").status(http.StatusOK)
	if got := attr(p.must("sso-redirect-uri"), "value"); got != a.srv.URL+"/sso/callback" {
		t.Errorf("redirect URI shown %q", got)
	}

	form := url.Values{"clientId": {"x"}, "clientSecret": {""}, "authorizationEndpoint": {prov.AuthEndpoint()},
		"tokenEndpoint": {prov.TokenEndpoint()}, "clientAuthenticationMethod": {iam.ClientSecretBasic},
		"scope": {"openid"}, "userEmailClaim": {"email"}, "issuer": {""}}
	p = b.post("/workspace/sso/test", form).status(http.StatusOK)
	if !p.has("sso-test-ok") || !strings.Contains(p.text("sso-test-facts"), oidctest.KeyID) ||
		!strings.Contains(p.text("sso-test-facts"), prov.Issuer+"/.well-known/openid-configuration") {
		t.Errorf("test result %q / %q", p.text("sso-test"), p.text("sso-test-facts"))
	}
	if got := attr(input(p.must("sso-form"), "authorizationEndpoint"), "value"); got != prov.AuthEndpoint() {
		t.Errorf("the form lost what was typed: %q", got)
	}
	if ws, err := a.st.IAM().GetWorkspace(t.Context(), a.ownerActor()); err != nil || ws.SSO != nil {
		t.Errorf("testing saved the settings: %+v %v", ws.SSO, err)
	}

	// htmx asks for the result region alone.
	form.Set("issuer", prov.Issuer)
	p = b.htmx("/workspace/sso/test", form).status(http.StatusOK)
	if !p.has("sso-test-ok") || p.has("sso-form") {
		t.Errorf("htmx answer %s", p.body)
	}
	prov.Set(func(p *oidcProvider) { p.KeysStatus = http.StatusNotFound })
	p = b.htmx("/workspace/sso/test", form).status(http.StatusOK)
	if !p.has("sso-test-failed") || !strings.Contains(p.text("sso-test"), "signing keys could not be read") {
		t.Errorf("answer without keys %q", p.text("sso-test"))
	}
	prov.Reset()
	form.Set("issuer", prov.Issuer+"/elsewhere")
	if p = b.htmx("/workspace/sso/test", form); !p.has("sso-test-failed") {
		t.Errorf("a wrong issuer passed: %q", p.text("sso-test"))
	}
	form.Set("issuer", "not a url")
	p = b.post("/workspace/sso/test", form).status(http.StatusBadRequest)
	if text(find(p.must("sso-form"), "error-issuer")) == "" || !p.has("sso-test-failed") {
		t.Errorf("an invalid issuer was not shown next to its field")
	}

	// Someone who may not change single sign-on may not test it either.
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	dev := a.signedIn("dev@example.com", memberPassword)
	dev.get("/workspace")
	dev.post("/workspace/sso/test", form).status(http.StatusForbidden)
}

// TestSSOBrowser signs in through single sign-on in headless Chromium, with
// the provider on another site (localhost against 127.0.0.1), so the browser
// applies its own rules: the page's Content-Security-Policy to the redirect
// after the form, and SameSite to the cookies on the way back. Then the owner
// tests the connection from the workspace page, in place with htmx.
func TestSSOBrowser(t *testing.T) {
	t.Parallel()
	a := newSSOApp(t, &logRecorder{})
	prov := newOIDCProvider(t, "localhost", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretBasic, true)

	// Launch flags and the console watch (CSP violations and script errors
	// fail the test) are headless's.
	ctx := headless(t, 90*time.Second).ctx
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	shoot := func(name string) {
		t.Helper()
		if overflow := eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
			t.Errorf("%s scrolls sideways", name)
		}
		if dir := os.Getenv("BUNTING_SCREENSHOTS"); dir != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
		}
	}

	for _, width := range []int64{390, 1280} {
		viewport := chromedp.EmulateViewport(width, 900)
		if width < 600 {
			viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		do("sign-in page", viewport, chromedp.Navigate(a.srv.URL+"/projects"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-login-submit]`)))
		shoot(fmt.Sprintf("sso-login-%d", width))
	}
	do("sign in with SSO",
		chromedp.Click(chromedp.CSS(`[data-testid=sso-login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)),
	)
	if got := eval(`location.href`); got != a.srv.URL+"/projects" {
		t.Errorf("landed on %s, want %s/projects", got, a.srv.URL)
	}
	if got := eval(`document.querySelector('[data-testid=user-email]').textContent`); got != prov.Email {
		t.Errorf("signed in as %q, want %q", got, prov.Email)
	}

	do("sign out and in as the owner",
		chromedp.Click(chromedp.CSS(`[data-testid=logout]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-email`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), ownerPassword),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-email]`)),
		chromedp.Navigate(a.srv.URL+"/workspace"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-test-submit]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=sso-test-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-test-ok]`)),
	)
	if got := eval(`location.pathname`); got != "/workspace" {
		t.Errorf("at %s after testing the connection, want /workspace (in place)", got)
	}
	for _, width := range []int64{390, 1280} {
		viewport := chromedp.EmulateViewport(width, 900)
		if width < 600 {
			viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		do("workspace page", viewport, chromedp.WaitVisible(chromedp.CSS(`[data-testid=sso-test-ok]`)))
		shoot(fmt.Sprintf("sso-workspace-%d", width))
	}

}
