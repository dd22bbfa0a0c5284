package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/oidcflow"
	"github.com/bunting-flags/bunting/web/outbound"
)

// Single sign-on through OpenID Connect, the authorization-code flow with
// PKCE. The store makes each attempt's state, nonce and verifier, sealed for
// the browser to keep (ten minutes, once; sso_attempt.go), and turns a
// verified identity into a session; web/oidcflow speaks the protocol
// (redirect, code exchange, discovery, id-token verification), shared with
// the API's FeatBit sign-in; this file is the pages around it.

const (
	ssoCallbackPath = "/sso/callback"
	// ssoTestKey carries a connection test's result to the workspace page.
	ssoTestKey = "ssoTest"
)

// ssoClient is what the single sign-on pages share: the redirect URI
// registered at providers and the client that calls them.
type ssoClient struct {
	redirectURI string
	secure      bool
	flow        *oidcflow.Client
}

func newSSOClient(base *url.URL, allowPrivate bool) *ssoClient {
	return &ssoClient{
		redirectURI: strings.TrimSuffix(base.String(), "/") + ssoCallbackPath,
		secure:      base.Scheme == "https",
		flow:        oidcflow.New(allowPrivate),
	}
}

// ssoOffer is the sign-in page's single sign-on form, or nil when no
// workspace has OIDC settings. The page's Content-Security-Policy then lets
// its forms lead to the providers' authorization endpoints: browsers apply
// form-action to the redirect that follows the form's post.
func (p *pages) ssoOffer(c echo.Context, next string, posted *views.Form) (*views.LoginSSO, error) {
	offer, err := p.store.SSO().SSOOffer(c.Request().Context())
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
	in := sso.SSOStartInput(posted)
	in.Next = localPath(in.Next)
	var login sso.SSOLogin
	var err error
	if p.limits.AllowSSOStart(c.RealIP()) {
		login, err = p.store.SSO().BeginSSO(c.Request().Context(), in)
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
	return c.Redirect(http.StatusSeeOther, oidcflow.AuthCodeURL(login, p.sso.redirectURI))
}

// Why a single sign-on failed: each reason is logged and explained.
const (
	ssoProviderError   = "provider_error"
	ssoStateMissing    = "state_missing"
	ssoStateInvalid    = "state_invalid"
	ssoStateExpired    = "state_expired"
	ssoNotConfigured   = "not_configured"
	ssoNoKeys          = oidcflow.ReasonNoKeys
	ssoExchangeFailed  = oidcflow.ReasonExchangeFailed
	ssoTokenInvalid    = oidcflow.ReasonTokenInvalid
	ssoTokenExpired    = oidcflow.ReasonTokenExpired
	ssoNonceMismatch   = oidcflow.ReasonNonceMismatch
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
		session, err = p.store.IAM().SignInWithSSO(c.Request().Context(), login.Client.WorkspaceID, claims)
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
func (p *pages) ssoIdentity(c echo.Context) (sso.SSOLogin, map[string]any, error) {
	ctx, cancel := context.WithTimeout(c.Request().Context(), oidcflow.FlowTimeout)
	defer cancel()
	q := c.QueryParams()
	if q.Get("state") == "" {
		return sso.SSOLogin{}, nil, ssoFail(ssoStateMissing, errors.New("no state parameter"))
	}
	sealed := p.takeSSOAttempt(c, q.Get("state"))
	login, err := p.store.SSO().FinishSSO(ctx, q.Get("state"), sealed)
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

	claims, err := p.sso.flow.Identity(ctx, login, p.sso.redirectURI, q.Get("code"))
	return login, claims, err
}

// ssoFailed logs why a sign-in failed and explains it on a page that leads
// back to sign-in. Nothing was stored: the store's sign-in is one transaction
// and it is not reached before every check passed.
func (p *pages) ssoFailed(c echo.Context, workspace string, err error) error {
	reason := ssoInternal
	var se *ssoError
	class := core.Classify(err)
	var fe *oidcflow.Failure
	if errors.As(err, &se) {
		reason = se.reason
	} else if errors.As(err, &fe) {
		reason = fe.Reason
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

// testWorkspaceSSO checks the endpoints in the single sign-on form against
// the provider: discovery, then its signing keys; nothing is saved.
func (p *pages) testWorkspaceSSO(c echo.Context) error {
	in, err := postedInput[oidcForm](c)
	if err != nil {
		return err
	}
	checked, err := p.store.SSO().CheckOIDCEndpoints(c.Request().Context(), actor(c), in)
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
	ctx, cancel := context.WithTimeout(ctx, oidcflow.FlowTimeout)
	defer cancel()
	d, err := p.sso.flow.Discover(ctx, o)
	if err != nil {
		p.log.InfoContext(ctx, "single sign-on connection test failed", "err", err)
		return &views.SSOTest{Summary: "Discovery failed: " + err.Error()}
	}
	t := &views.SSOTest{Facts: []views.SSOFact{
		{Label: "Discovery document", Value: outbound.Where(d.URL)},
		{Label: "Issuer", Value: oidcflow.Clip(d.Issuer)},
		endpointFact("Authorization endpoint", o.AuthorizationEndpoint, d.AuthorizationEndpoint),
		endpointFact("Token endpoint", o.TokenEndpoint, d.TokenEndpoint),
		{Label: "Key set", Value: oidcflow.Clip(d.JWKSURI)},
	}}
	if slices.Contains(d.CodeChallengeMethods, "S256") {
		t.Facts = append(t.Facts, views.SSOFact{Label: "PKCE", Value: "S256 supported"})
	} else {
		t.Facts = append(t.Facts, views.SSOFact{Label: "PKCE", Value: "S256 not advertised; Bunting sends it anyway", Warn: true})
	}
	found, err := p.sso.flow.SigningKeys(ctx, d.JWKSURI)
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
		keys = append(keys, oidcflow.Clip(orNone(k.KeyID, "(no kid)")+" ("+orNone(k.Algorithm, keyType(k))+")"))
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
	return views.SSOFact{Label: label, Value: "discovery names " + orNone(oidcflow.Clip(discovered), "none") + "; Bunting uses the one configured", Warn: true}
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
