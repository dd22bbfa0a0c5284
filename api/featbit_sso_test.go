package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/oidcflow/oidctest"
)

// uiLogin is FeatBit's sign-in page, where the provider sends the browser
// back; FeatBit's UI sends it unescaped in the authorize URL's query.
const uiLogin = "http://ui.example/login?sso-logged-in=true"

// ssoServer is a server whose workspace signs in through a real OIDC
// provider on loopback (the one the pages' SSO tests use).
func ssoServer(t *testing.T) (*server, *oidctest.Provider) {
	t.Helper()
	s := newServerWith(t, core.Options{AllowPrivateNetworks: true})
	prov := oidctest.New(t, "127.0.0.1", "/realms/acme")
	s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, map[string]string{"clientId": prov.ClientID, "clientSecret": prov.Secret,
		"authorizationEndpoint": prov.AuthEndpoint(), "tokenEndpoint": prov.TokenEndpoint(), "issuer": prov.Issuer,
		"clientAuthenticationMethod": iam.ClientSecretBasic, "scope": "openid email profile", "userEmailClaim": "email"}).ok(t)
	return s, prov
}

// ssoAttempt begins single sign-on as FeatBit's UI does and follows the
// browser to the provider and back to the UI: it returns the code and state
// the UI receives, and the attempt's cookie.
func (s *server) ssoAttempt(query string) (code, state string, attempt *http.Cookie) {
	s.t.Helper()
	rec := s.raw("GET", "/api/v1/sso/oidc-authorize-url?"+query)
	if rec.Code != http.StatusFound {
		s.t.Fatalf("authorize URL answered %d %s, want 302", rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if strings.HasPrefix(c.Name, "bunting_api_sso_") {
			attempt = c
		}
	}
	if attempt == nil || !attempt.HttpOnly || attempt.Path != "/api/v1/sso/" || attempt.MaxAge != 600 {
		s.t.Fatalf("attempt cookie %+v, want HttpOnly, Path /api/v1/sso/, 10 minutes", attempt)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(rec.Header().Get("Location"))
	must(s.t, err)
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	must(s.t, err)
	if res.StatusCode != http.StatusFound || back.Host != "ui.example" || back.Query().Get("sso-logged-in") != "true" {
		s.t.Fatalf("the provider answered %d to %s, want the UI's sign-in page", res.StatusCode, back)
	}
	return back.Query().Get("code"), back.Query().Get("state"), attempt
}

// TestAppSSO: FeatBit's UI signs in through the workspace's OIDC provider:
// authorize URL, provider, code posted back, session and refresh cookie,
// then joining the organization.
func TestAppSSO(t *testing.T) {
	t.Parallel()
	s, prov := ssoServer(t)
	code, state, attempt := s.ssoAttempt("redirect_uri=" + uiLogin + "&workspace_key=default-workspace")
	login := map[string]string{"code": code, "redirectUri": uiLogin, "workspaceKey": state}
	withAttempt := []string{"Cookie", attempt.Name + "=" + attempt.Value}
	r := s.do("POST", "/api/v1/sso/oidc/login", "", login, withAttempt...).ok(t)
	session := decode[iam.Session](t, r)
	if !session.IsSsoFirstLogin || session.Token == "" {
		t.Fatalf("sign-in %+v, want a first sign-in with a token", session)
	}
	if ck := cookie(r, "refresh-token"); ck == nil || !ck.HttpOnly || ck.Path != "/api/v1/identity" {
		t.Fatalf("refresh cookie %+v", ck)
	}
	if del := cookie(r, attempt.Name); del == nil || del.MaxAge >= 0 {
		t.Fatalf("the attempt cookie is not deleted: %+v", del)
	}
	me := bearer(session.Token)
	profile := decode[iam.Profile](t, s.do("GET", "/api/v1/user/profile", me, nil).ok(t))
	if profile.Email != prov.Email {
		t.Fatalf("signed in as %s, want %s", profile.Email, prov.Email)
	}
	s.do("POST", "/api/v1/user/join-organization", me, map[string]any{}).ok(t)

	// The attempt is used once: the browser's cookie is gone, and a copy of
	// it replayed reaches the provider, which takes its code once.
	s.do("POST", "/api/v1/sso/oidc/login", "", login, withAttempt...).fails(t, http.StatusBadGateway, "token_exchange_failed")
	if n := s.count(`SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1`, prov.Email); n != 1 {
		t.Fatalf("%d sessions of the person, want the one signed in", n)
	}
	// Without the attempt's cookie (another browser), the state is unknown.
	code, state, _ = s.ssoAttempt("redirect_uri=" + uiLogin + "&workspace_key=default-workspace")
	s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{"code": code, "redirectUri": uiLogin, "workspaceKey": state}).
		fails(t, http.StatusBadRequest, "state_invalid")
	// Another redirect URI than the attempt's.
	code, state, attempt = s.ssoAttempt("redirect_uri=" + uiLogin + "&workspace_key=default-workspace")
	s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{"code": code, "redirectUri": "http://evil.example/", "workspaceKey": state},
		"Cookie", attempt.Name+"="+attempt.Value).fails(t, http.StatusBadRequest, "redirectUri_is_invalid")
	// The second sign-in of the same person is not a first one; the workspace key may be left out.
	code, state, attempt = s.ssoAttempt("redirect_uri=" + uiLogin)
	again := decode[iam.Session](t, s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{"code": code, "redirectUri": uiLogin, "workspaceKey": state},
		"Cookie", attempt.Name+"="+attempt.Value).ok(t))
	if again.IsSsoFirstLogin {
		t.Fatal("a second sign-in says it is the first")
	}
	// The provider refuses the code: its fault.
	prov.Set(func(p *oidctest.Provider) { p.TokenStatus = http.StatusBadRequest })
	code, state, attempt = s.ssoAttempt("redirect_uri=" + uiLogin)
	s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{"code": code, "redirectUri": uiLogin, "workspaceKey": state},
		"Cookie", attempt.Name+"="+attempt.Value).fails(t, http.StatusBadGateway, "token_exchange_failed")
	prov.Reset()
	// An id token signed by another key does not sign anyone in.
	prov.Set(func(p *oidctest.Provider) { p.Signer = p.OtherKey })
	code, state, attempt = s.ssoAttempt("redirect_uri=" + uiLogin)
	s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{"code": code, "redirectUri": uiLogin, "workspaceKey": state},
		"Cookie", attempt.Name+"="+attempt.Value).fails(t, http.StatusUnauthorized, "id_token_invalid")
	prov.Reset()

	s.do("POST", "/api/v1/sso/oidc/login", "", map[string]string{}).
		fails(t, http.StatusBadRequest, "code_is_required", "redirectUri_is_required", "workspaceKey_is_required")
	s.do("POST", "/api/v1/sso/oidc/login", "", `[]`).fails(t, http.StatusBadRequest, "body_is_invalid")
}

// TestAppSSOAuthorizeURLRefusals: the authorize URL names its bad input.
func TestAppSSOAuthorizeURLRefusals(t *testing.T) {
	t.Parallel()
	s, _ := ssoServer(t)
	for query, code := range map[string]string{
		"workspace_key=default-workspace":                                  "redirect_uri_is_required",
		"redirect_uri=/login&workspace_key=default-workspace":              "redirect_uri_is_invalid",
		"redirect_uri=javascript:alert(1)":                                 "redirect_uri_is_invalid",
		"redirect_uri=" + url.QueryEscape(uiLogin) + "&workspace_key=nope": "workspace_key_is_invalid",
	} {
		rec := s.raw("GET", "/api/v1/sso/oidc-authorize-url?"+query)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"errors":["`+code+`"]`) {
			t.Errorf("%s: got %d %s, want 400 %s", query, rec.Code, rec.Body, code)
		}
	}
}
