package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/outbound"
)

// Single sign-on through OpenID Connect, the authorization-code flow with
// PKCE. The store makes each attempt's state, nonce and verifier, sealed for
// the browser to keep (ten minutes, once; sso_attempt.go), and turns a
// verified identity into a session; this file speaks the protocol:
// redirect, code exchange (golang.org/x/oauth2), discovery and id-token
// verification (go-oidc).

const (
	ssoCallbackPath = "/sso/callback"
	// ssoRequestTimeout bounds each call to the provider, ssoFlowTimeout all
	// of them for one callback or connection test.
	ssoRequestTimeout = 10 * time.Second
	ssoFlowTimeout    = 30 * time.Second
	wellKnown         = "/.well-known/openid-configuration"
	// ssoTestKey carries a connection test's result to the workspace page.
	ssoTestKey = "ssoTest"
)

// ssoClient is what the single sign-on pages share: the redirect URI
// registered at providers and the HTTP client for calls to them.
type ssoClient struct {
	redirectURI string
	secure      bool
	// http is the outbound client; allowHTTP (with private networks
	// allowed) lets discovered key sets be plain http, as in tests.
	http      *http.Client
	allowHTTP bool
	// providers keeps what discovery and the key sets said (sso_providers.go).
	providers *providerCache
}

func newSSOClient(base *url.URL, allowPrivate bool) *ssoClient {
	return &ssoClient{
		redirectURI: strings.TrimSuffix(base.String(), "/") + ssoCallbackPath,
		secure:      base.Scheme == "https",
		http:        outbound.NewClient(outbound.Options{AllowPrivate: allowPrivate, Timeout: ssoRequestTimeout}),
		allowHTTP:   allowPrivate,
		providers:   newProviderCache(),
	}
}

// ssoOffer is the sign-in page's single sign-on form, or nil when no
// workspace has OIDC settings. The page's Content-Security-Policy then lets
// its forms lead to the providers' authorization endpoints: browsers apply
// form-action to the redirect that follows the form's post.
func (p *pages) ssoOffer(c echo.Context, next string, posted *views.Form) (*views.LoginSSO, error) {
	offer, err := p.store.SSOOffer(c.Request().Context())
	if err != nil || !offer.Enabled {
		return nil, err
	}
	var origins []string
	for _, e := range offer.AuthorizationEndpoints {
		if u, err := url.Parse(e); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			origins = append(origins, u.Scheme+"://"+u.Host)
		}
	}
	slices.Sort(origins)
	if origins = slices.Compact(origins); len(origins) > 0 {
		c.Response().Header().Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy,
			"form-action 'self'", "form-action 'self' "+strings.Join(origins, " "), 1))
	}
	s := views.LoginSSO{AskWorkspace: offer.AskWorkspace}
	if posted != nil {
		s.Form = *posted
	} else {
		s.Form = p.form(c, "sso", "/sso/start", map[string]string{"next": next})
	}
	return &s, nil
}

// startSSO begins an attempt in the named workspace and sends the browser to
// the workspace's provider.
func (p *pages) startSSO(c echo.Context) error {
	var posted ssoStartForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.SSOStartInput(posted)
	in.Next = localPath(in.Next)
	var login iam.SSOLogin
	var err error
	if p.limits.AllowSSOStart(c.RealIP()) {
		login, err = p.store.BeginSSO(c.Request().Context(), in)
	} else {
		err = core.ErrTooManyRequests
	}
	if err != nil {
		f := p.form(c, "sso", "/sso/start", map[string]string{"next": in.Next, "workspace": in.Workspace})
		status, err := formProblems(err, &f, "workspace")
		if err != nil {
			return err
		}
		if f.Errors["workspace"] != "" && in.Workspace != "" {
			f.Errors["workspace"] = "No workspace with this key signs in with SSO."
		}
		return p.renderLogin(c, status, p.form(c, "login", "/login", map[string]string{"next": in.Next}), &f)
	}
	p.keepSSOAttempt(c, login)
	to := oauthConfig(login.Client, p.sso.redirectURI).AuthCodeURL(login.State,
		oidc.Nonce(login.Nonce), oauth2.S256ChallengeOption(login.Verifier))
	return c.Redirect(http.StatusSeeOther, to)
}

func oauthConfig(c iam.SSOClient, redirectURI string) *oauth2.Config {
	style := oauth2.AuthStyleInHeader
	if c.ClientAuthenticationMethod == iam.ClientSecretPost {
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthorizationEndpoint, TokenURL: c.TokenEndpoint, AuthStyle: style},
		RedirectURL:  redirectURI,
		Scopes:       strings.Fields(c.Scope),
	}
}

// Why a single sign-on failed: each reason is logged and explained.
const (
	ssoProviderError   = "provider_error"
	ssoStateMissing    = "state_missing"
	ssoStateInvalid    = "state_invalid"
	ssoStateExpired    = "state_expired"
	ssoNotConfigured   = "not_configured"
	ssoNoKeys          = "no_keys"
	ssoExchangeFailed  = "token_exchange_failed"
	ssoTokenInvalid    = "id_token_invalid"
	ssoTokenExpired    = "id_token_expired"
	ssoNonceMismatch   = "nonce_mismatch"
	ssoEmailMissing    = "email_missing"
	ssoEmailUnverified = "email_unverified"
	ssoInternal        = "internal"
)

// ssoFailures are what the person is told for each reason. The store's
// classification decides the status of the reasons it names (status 0 here).
var ssoFailures = map[string]pageError{
	ssoProviderError: {http.StatusUnauthorized, "Sign-in refused",
		"Your identity provider did not sign you in."},
	ssoStateMissing: {http.StatusBadRequest, "Sign-in link incomplete",
		"This sign-in answer carries no state. Start again from the sign-in page."},
	ssoStateInvalid: {0, "Sign-in link not valid",
		"This sign-in link was already used, was changed, or was started in another browser. Start again from the sign-in page."},
	ssoStateExpired: {0, "Sign-in took too long",
		"Single sign-on must be finished within ten minutes. Start again from the sign-in page."},
	ssoNotConfigured: {0, "Single sign-on is off",
		"This workspace does not sign in with SSO any more. Sign in with your email and password, or ask your administrator."},
	ssoNoKeys: {http.StatusBadGateway, "Identity provider unreachable",
		"Bunting could not read your identity provider's signing keys, so it cannot check who you are. Tell your administrator."},
	ssoExchangeFailed: {http.StatusBadGateway, "Sign-in not completed",
		"Your identity provider did not complete the sign-in. Try again; if it keeps failing, tell your administrator."},
	ssoTokenInvalid: {http.StatusUnauthorized, "Identity not confirmed",
		"Your identity provider's answer could not be verified, so you were not signed in. Tell your administrator."},
	ssoTokenExpired: {http.StatusUnauthorized, "Identity not confirmed",
		"Your identity provider's answer had expired. Start again from the sign-in page; if it keeps failing, the clocks may disagree."},
	ssoNonceMismatch: {http.StatusUnauthorized, "Identity not confirmed",
		"Your identity provider's answer does not belong to this sign-in. Start again from the sign-in page."},
	ssoEmailMissing: {0, "No email address",
		"Your identity provider did not tell Bunting your email address. Tell your administrator."},
	ssoEmailUnverified: {0, "Email not verified",
		"Your identity provider has not verified your email address. Verify it there, then sign in again."},
	ssoInternal: {http.StatusInternalServerError, "Sign-in failed",
		"Bunting could not finish signing you in. Try again; if it keeps failing, tell your administrator."},
}

// ssoError is a failed callback: why, and the underlying error for the log.
type ssoError struct {
	reason string
	err    error
}

func (e *ssoError) Error() string { return e.reason + ": " + fmt.Sprint(e.err) }
func (e *ssoError) Unwrap() error { return e.err }

func ssoFail(reason string, err error) error { return &ssoError{reason: reason, err: err} }

// ssoCallback is where the provider sends the browser back: it consumes the
// attempt, exchanges the code, verifies the id token, and signs the person in.
func (p *pages) ssoCallback(c echo.Context) error {
	login, claims, err := p.ssoIdentity(c)
	var session iam.Session
	if err == nil {
		session, err = p.store.SignInWithSSO(c.Request().Context(), login.Client.WorkspaceID, claims)
	}
	if err != nil {
		return p.ssoFailed(c, idString(login.Client.WorkspaceID), err)
	}
	if err := p.startSession(c, session); err != nil {
		return err
	}
	if session.IsSsoFirstLogin {
		p.keepFlash(c, "Welcome to Bunting. Your account was created through single sign-on.")
	}
	p.log.InfoContext(c.Request().Context(), "single sign-on", "workspace", login.Client.WorkspaceID, "user", session.UserID,
		"first", session.IsSsoFirstLogin)
	return c.Redirect(http.StatusSeeOther, localPath(login.Next))
}

// ssoIdentity checks the provider's answer and returns the verified id
// token's claims; every failure is an *ssoError or one of the store's.
func (p *pages) ssoIdentity(c echo.Context) (iam.SSOLogin, map[string]any, error) {
	ctx, cancel := context.WithTimeout(c.Request().Context(), ssoFlowTimeout)
	defer cancel()
	q := c.QueryParams()
	if q.Get("state") == "" {
		return iam.SSOLogin{}, nil, ssoFail(ssoStateMissing, errors.New("no state parameter"))
	}
	sealed := p.takeSSOAttempt(c, q.Get("state"))
	login, err := p.store.FinishSSO(ctx, q.Get("state"), sealed)
	switch {
	case errors.Is(err, core.ErrSSOState) && sealed == "":
		return login, nil, fmt.Errorf("no attempt cookie for this state: %w", err)
	case err != nil:
		return login, nil, err
	}
	if e := q.Get("error"); e != "" {
		return login, nil, ssoFail(ssoProviderError, fmt.Errorf("provider answered error=%q error_description=%q", e, q.Get("error_description")))
	}
	if q.Get("code") == "" {
		return login, nil, ssoFail(ssoExchangeFailed, errors.New("no code parameter"))
	}

	ctx = oidc.ClientContext(ctx, p.sso.http) // oauth2's exchange uses it too
	provider, kept, err := p.sso.provider(ctx, login.Client.OIDCSettings, false)
	if err != nil {
		return login, nil, ssoFail(ssoNoKeys, err)
	}
	token, err := oauthConfig(login.Client, p.sso.redirectURI).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(login.Verifier))
	if err != nil {
		return login, nil, ssoFail(ssoExchangeFailed, exchangeProblem(login.Client.TokenEndpoint, err))
	}
	raw, _ := token.Extra("id_token").(string)
	if raw == "" {
		return login, nil, ssoFail(ssoExchangeFailed, errors.New("the token answer has no id_token"))
	}
	idToken, err := provider.verifier(login.Client.ClientID).Verify(ctx, raw)
	var expired *oidc.TokenExpiredError
	if err != nil && kept && !errors.As(err, &expired) {
		// The kept keys may be from before the provider rotated them.
		if provider, _, err = p.sso.provider(ctx, login.Client.OIDCSettings, true); err != nil {
			return login, nil, ssoFail(ssoNoKeys, err)
		}
		idToken, err = provider.verifier(login.Client.ClientID).Verify(ctx, raw)
	}
	switch {
	case errors.As(err, &expired):
		return login, nil, ssoFail(ssoTokenExpired, err)
	case err != nil:
		return login, nil, ssoFail(ssoTokenInvalid, err)
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(login.Nonce)) != 1 {
		return login, nil, ssoFail(ssoNonceMismatch, errors.New("the id token's nonce is not this attempt's"))
	}
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		return login, nil, ssoFail(ssoTokenInvalid, err)
	}
	return login, claims, nil
}

// ssoFailed logs why a sign-in failed and explains it on a page that leads
// back to sign-in. Nothing was stored: the store's sign-in is one transaction
// and it is not reached before every check passed.
func (p *pages) ssoFailed(c echo.Context, workspace string, err error) error {
	reason := ssoInternal
	var se *ssoError
	class := core.Classify(err)
	if errors.As(err, &se) {
		reason = se.reason
	} else if _, ok := ssoFailures[class.Code()]; ok {
		reason = class.Code()
	}
	e := ssoFailures[reason]
	if e.status == 0 {
		e.status = class.Status
	}
	requestID := c.Response().Header().Get(echo.HeaderXRequestID)
	log := p.log.WarnContext
	if reason == ssoInternal {
		log = p.log.ErrorContext
	}
	log(c.Request().Context(), "single sign-on refused", "reason", reason, "err", err, "workspace", workspace, "request_id", requestID)
	return render(c, e.status, views.ErrorPageView(views.ErrorPage{
		Doc:    views.Doc{Title: e.heading, Assets: p.assets.views()},
		Status: e.status, Heading: e.heading, Text: e.text + " (Reference " + requestID + ")",
		HomeHref: "/login", Home: "Back to sign in",
	}))
}

// discovery is what a provider's discovery document says.
type discovery struct {
	// URL is where the document was found.
	URL                   string   `json:"-"`
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	Algorithms            []string `json:"id_token_signing_alg_values_supported"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
}

// provider is what verifying a sign-in needs: the discovery document and
// the signing keys, both read through the outbound client. Keys are read
// here rather than by go-oidc, whose errors carry the answer's body.
type provider struct {
	discovery
	keys []jose.JSONWebKey
}

// verifier checks id tokens against the keys read, with the asymmetric
// algorithms the provider advertises (RS256 when it names none).
func (p provider) verifier(clientID string) *oidc.IDTokenVerifier {
	var algs []string
	for _, a := range p.Algorithms {
		if slices.Contains(signingAlgorithms, a) {
			algs = append(algs, a)
		}
	}
	keys := &oidc.StaticKeySet{}
	for _, k := range p.keys {
		keys.PublicKeys = append(keys.PublicKeys, k.Key)
	}
	return oidc.NewVerifier(p.Issuer, keys, &oidc.Config{ClientID: clientID, SupportedSigningAlgs: algs})
}

// signingAlgorithms are the asymmetric algorithms id tokens may be signed
// with; a shared-secret or "none" algorithm a provider advertises is ignored.
var signingAlgorithms = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// discover finds the provider's discovery document: at the issuer when one is
// set (the document must name that same issuer); otherwise next to the
// configured endpoints, at each parent path of the authorization and token
// endpoints in turn, accepting the first document that names one of them.
// No document, or one without a key set, and nobody can be verified. Every
// error's text is safe to show: it never carries what a server answered.
func (s *ssoClient) discover(ctx context.Context, o iam.OIDCSettings) (provider, error) {
	if o.Issuer != "" {
		d, err := s.fetchDiscovery(ctx, strings.TrimSuffix(o.Issuer, "/")+wellKnown)
		if err != nil {
			return provider{}, err
		}
		if d.Issuer != o.Issuer {
			return provider{}, fmt.Errorf("the discovery document at %s names another issuer (%s)", outbound.Where(d.URL), clip(d.Issuer))
		}
		return s.checkKeySet(d)
	}
	var problems []string
	for _, candidate := range discoveryCandidates(o.AuthorizationEndpoint, o.TokenEndpoint) {
		d, err := s.fetchDiscovery(ctx, candidate)
		if err != nil {
			problems = append(problems, err.Error())
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if d.AuthorizationEndpoint != o.AuthorizationEndpoint && d.TokenEndpoint != o.TokenEndpoint {
			problems = append(problems, outbound.Where(candidate)+" names other endpoints")
			continue
		}
		if d.Issuer == "" {
			return provider{}, fmt.Errorf("the discovery document at %s names no issuer", outbound.Where(candidate))
		}
		return s.checkKeySet(d)
	}
	return provider{}, fmt.Errorf("no discovery document next to the endpoints (set the issuer): %s", strings.Join(problems, "; "))
}

// checkKeySet refuses a document whose key set Bunting would not fetch.
func (s *ssoClient) checkKeySet(d discovery) (provider, error) {
	if d.JWKSURI == "" {
		return provider{}, fmt.Errorf("the discovery document at %s names no jwks_uri", outbound.Where(d.URL))
	}
	if u, err := url.Parse(d.JWKSURI); err != nil || u.Host == "" || u.User != nil ||
		(u.Scheme != "https" && (u.Scheme != "http" || !s.allowHTTP)) {
		return provider{}, fmt.Errorf("the discovery document at %s names a jwks_uri that is not an https URL", outbound.Where(d.URL))
	}
	return provider{discovery: d}, nil
}

// clip shortens a value a provider sent before it is shown or logged.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// discoveryCandidates lists the discovery URLs under each parent path of the
// endpoints, nearest first: for https://id.example.com/realms/a/protocol/openid-connect/auth
// that reaches https://id.example.com/realms/a/.well-known/openid-configuration.
func discoveryCandidates(endpoints ...string) []string {
	var out []string
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" {
			continue
		}
		path := strings.TrimSuffix(u.Path, "/")
		for {
			i := strings.LastIndex(path, "/")
			if i < 0 {
				break
			}
			path = path[:i]
			if c := u.Scheme + "://" + u.Host + path + wellKnown; !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out[:min(len(out), 8)]
}

func (s *ssoClient) fetchDiscovery(ctx context.Context, u string) (discovery, error) {
	var d discovery
	body, err := s.fetchJSON(ctx, u)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return d, fmt.Errorf("%s did not answer a discovery document", outbound.Where(u))
	}
	d.URL = u
	return d, nil
}

// fetchJSON reads a JSON document through the outbound client, which bounds
// its size; an error says what went wrong, never what was answered.
func (s *ssoClient) fetchJSON(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL Bunting can request", outbound.Where(u))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, errors.New(outbound.Describe(u, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(outbound.Describe(u, &outbound.StatusError{URL: u, Code: resp.StatusCode}))
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, errors.New(outbound.Describe(u, err))
	}
	return body, nil
}

// oauthErrorCodes are the token endpoint's error codes (RFC 6749 §5.2): the
// one part of its answer worth logging, and only when it is one of these.
var oauthErrorCodes = []string{"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
	"unsupported_grant_type", "invalid_scope"}

// exchangeProblem describes a failed token exchange without the answer's text.
func exchangeProblem(tokenURL string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		msg := outbound.Describe(tokenURL, &outbound.StatusError{URL: tokenURL, Code: re.Response.StatusCode})
		if slices.Contains(oauthErrorCodes, re.ErrorCode) {
			msg += " (" + re.ErrorCode + ")"
		}
		return errors.New(msg)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return errors.New(outbound.Describe(tokenURL, err))
	}
	return fmt.Errorf("%s did not answer a usable token", outbound.Where(tokenURL))
}

// testWorkspaceSSO checks the endpoints in the single sign-on form against
// the provider: discovery, then its signing keys; nothing is saved.
func (p *pages) testWorkspaceSSO(c echo.Context) error {
	var posted oidcForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := posted.input()
	checked, err := p.store.CheckOIDCEndpoints(c.Request().Context(), actor(c), in)
	f := p.form(c, "sso", "/workspace/sso", typedOIDCValues(in))
	status, err := formProblems(err, &f, "authorizationEndpoint", "tokenEndpoint", "issuer")
	if err != nil {
		return err
	}
	var result *views.SSOTest
	if status == http.StatusOK {
		result = p.probeProvider(c.Request().Context(), checked)
	} else {
		result = &views.SSOTest{Summary: "Fix the endpoints first."}
		for _, name := range []string{"authorizationEndpoint", "tokenEndpoint", "issuer"} {
			if msg := f.Errors[name]; msg != "" {
				result.Facts = append(result.Facts, views.SSOFact{Label: ssoFieldLabels[name], Value: msg, Warn: true})
			}
		}
	}
	if isHTMX(c) {
		return render(c, status, views.SSOTestView(result))
	}
	c.Set(ssoTestKey, result)
	return p.workspacePage(c, status, nil, &f)
}

var ssoFieldLabels = map[string]string{
	"authorizationEndpoint": "Authorization endpoint", "tokenEndpoint": "Token endpoint", "issuer": "Issuer",
}

// probeProvider reports what discovery and the key set say, as sign-in would find them.
func (p *pages) probeProvider(ctx context.Context, o iam.OIDCSettings) *views.SSOTest {
	ctx, cancel := context.WithTimeout(ctx, ssoFlowTimeout)
	defer cancel()
	d, err := p.sso.discover(ctx, o)
	if err != nil {
		p.log.InfoContext(ctx, "single sign-on connection test failed", "err", err)
		return &views.SSOTest{Summary: "Discovery failed: " + err.Error()}
	}
	t := &views.SSOTest{Facts: []views.SSOFact{
		{Label: "Discovery document", Value: outbound.Where(d.URL)},
		{Label: "Issuer", Value: clip(d.Issuer)},
		endpointFact("Authorization endpoint", o.AuthorizationEndpoint, d.AuthorizationEndpoint),
		endpointFact("Token endpoint", o.TokenEndpoint, d.TokenEndpoint),
		{Label: "Key set", Value: clip(d.JWKSURI)},
	}}
	if slices.Contains(d.CodeChallengeMethods, "S256") {
		t.Facts = append(t.Facts, views.SSOFact{Label: "PKCE", Value: "S256 supported"})
	} else {
		t.Facts = append(t.Facts, views.SSOFact{Label: "PKCE", Value: "S256 not advertised; Bunting sends it anyway", Warn: true})
	}
	found, err := p.sso.signingKeys(ctx, d.JWKSURI)
	if err != nil {
		p.log.InfoContext(ctx, "single sign-on connection test failed", "err", err)
		t.Summary = "Discovery works, but the signing keys could not be read: " + err.Error()
		return t
	}
	if len(found) == 0 {
		t.Summary = "Discovery works, but the key set has no signing keys: nobody could sign in."
		return t
	}
	var keys []string
	for _, k := range found {
		keys = append(keys, clip(orNone(k.KeyID, "(no kid)")+" ("+orNone(k.Algorithm, keyType(k))+")"))
	}
	t.Facts = append(t.Facts, views.SSOFact{Label: "Signing keys", Value: strings.Join(keys, ", ")})
	t.OK = true
	t.Summary = fmt.Sprintf("Connection works: discovery answered and %d signing key(s) were found.", len(keys))
	return t
}

func endpointFact(label, configured, discovered string) views.SSOFact {
	if configured == discovered {
		return views.SSOFact{Label: label, Value: "matches discovery"}
	}
	return views.SSOFact{Label: label, Value: "discovery names " + orNone(clip(discovered), "none") + "; Bunting uses the one configured", Warn: true}
}

// keyType names a key's kind when it names no algorithm.
func keyType(k jose.JSONWebKey) string {
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "EC"
	case ed25519.PublicKey:
		return "OKP"
	}
	return "unknown"
}

func orNone(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// signingKeys reads a key set and keeps its signing keys: the public keys
// Go can verify with, not those marked for encryption.
func (s *ssoClient) signingKeys(ctx context.Context, jwksURI string) ([]jose.JSONWebKey, error) {
	body, err := s.fetchJSON(ctx, jwksURI)
	if err != nil {
		return nil, err
	}
	// Key by key, so one key of a kind go-jose does not know spoils nothing.
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("%s did not answer a key set", outbound.Where(jwksURI))
	}
	var out []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) != nil || k.Use == "enc" || !k.IsPublic() {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}
