// Package oidcflow speaks OpenID Connect's authorization-code flow for single
// sign-on, for the pages (web's /sso/ routes) and the API (FeatBit's /sso/
// routes) alike: the authorization URL, the code exchange
// (golang.org/x/oauth2), discovery and the provider's signing keys read
// through the outbound client, and id-token verification (go-oidc). The
// store makes and checks each attempt (state, nonce, PKCE verifier) and
// turns a verified identity into a session; this package makes the network
// calls the store must not.
package oidcflow

import (
	"context"
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
	"golang.org/x/oauth2"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/bunting-flags/bunting/web/outbound"
)

const (
	// RequestTimeout bounds each call to the provider, FlowTimeout all of
	// them for one sign-in or connection test.
	RequestTimeout = 10 * time.Second
	FlowTimeout    = 30 * time.Second
	wellKnown      = "/.well-known/openid-configuration"
)

// Client calls providers: the outbound HTTP client and what discovery and
// the key sets said (providers.go).
type Client struct {
	// http is the outbound client; allowHTTP (with private networks
	// allowed) lets discovered key sets be plain http, as in tests.
	http      *http.Client
	allowHTTP bool
	providers *providerCache
}

// New returns a client; allowPrivate lets it reach providers on loopback
// and private networks (and their key sets over plain http).
func New(allowPrivate bool) *Client {
	return &Client{
		http:      outbound.NewClient(outbound.Options{AllowPrivate: allowPrivate, Timeout: RequestTimeout}),
		allowHTTP: allowPrivate,
		providers: newProviderCache(),
	}
}

// OAuthConfig is the oauth2 configuration of a workspace's client, with the
// redirect URI the attempt began with.
func OAuthConfig(c sso.SSOClient, redirectURI string) *oauth2.Config {
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

// AuthCodeURL is where to send the browser to begin the attempt: the
// provider's authorization endpoint with the state, the nonce and the PKCE
// challenge.
func AuthCodeURL(login sso.SSOLogin, redirectURI string) string {
	return OAuthConfig(login.Client, redirectURI).AuthCodeURL(login.State,
		oidc.Nonce(login.Nonce), oauth2.S256ChallengeOption(login.Verifier))
}

// Why a sign-in failed at the provider's end, as Failure reports it.
const (
	ReasonNoKeys         = "no_keys"
	ReasonExchangeFailed = "token_exchange_failed"
	ReasonTokenInvalid   = "id_token_invalid"
	ReasonTokenExpired   = "id_token_expired"
	ReasonNonceMismatch  = "nonce_mismatch"
)

// Failure is a sign-in the provider's answer did not complete: why (a
// Reason…), and the underlying error for the log, whose text never carries
// what a server answered.
type Failure struct {
	Reason string
	Err    error
}

func (e *Failure) Error() string { return e.Reason + ": " + fmt.Sprint(e.Err) }
func (e *Failure) Unwrap() error { return e.Err }

func fail(reason string, err error) error { return &Failure{Reason: reason, Err: err} }

// Identity completes an attempt the store checked (FinishSSO): it exchanges
// the code (with the PKCE verifier, at the redirect URI the attempt began
// with), verifies the id token against the provider's keys (read again once
// when the kept ones do not verify it: providers rotate keys) and its nonce,
// and returns its claims. Every failure is a *Failure.
func (s *Client) Identity(ctx context.Context, login sso.SSOLogin, redirectURI, code string) (map[string]any, error) {
	ctx = oidc.ClientContext(ctx, s.http) // oauth2's exchange uses it too
	provider, kept, err := s.provider(ctx, login.Client.OIDCSettings, false)
	if err != nil {
		return nil, fail(ReasonNoKeys, err)
	}
	token, err := OAuthConfig(login.Client, redirectURI).Exchange(ctx, code, oauth2.VerifierOption(login.Verifier))
	if err != nil {
		return nil, fail(ReasonExchangeFailed, exchangeProblem(login.Client.TokenEndpoint, err))
	}
	raw, _ := token.Extra("id_token").(string)
	if raw == "" {
		return nil, fail(ReasonExchangeFailed, errors.New("the token answer has no id_token"))
	}
	idToken, err := provider.verifier(login.Client.ClientID).Verify(ctx, raw)
	var expired *oidc.TokenExpiredError
	if err != nil && kept && !errors.As(err, &expired) {
		// The kept keys may be from before the provider rotated them.
		if provider, _, err = s.provider(ctx, login.Client.OIDCSettings, true); err != nil {
			return nil, fail(ReasonNoKeys, err)
		}
		idToken, err = provider.verifier(login.Client.ClientID).Verify(ctx, raw)
	}
	switch {
	case errors.As(err, &expired):
		return nil, fail(ReasonTokenExpired, err)
	case err != nil:
		return nil, fail(ReasonTokenInvalid, err)
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(login.Nonce)) != 1 {
		return nil, fail(ReasonNonceMismatch, errors.New("the id token's nonce is not this attempt's"))
	}
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		return nil, fail(ReasonTokenInvalid, err)
	}
	return claims, nil
}

// Discovery is what a provider's discovery document says.
type Discovery struct {
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
	Discovery
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
func (s *Client) discover(ctx context.Context, o iam.OIDCSettings) (provider, error) {
	if o.Issuer != "" {
		d, err := s.fetchDiscovery(ctx, strings.TrimSuffix(o.Issuer, "/")+wellKnown)
		if err != nil {
			return provider{}, err
		}
		if d.Issuer != o.Issuer {
			return provider{}, fmt.Errorf("the discovery document at %s names another issuer (%s)", outbound.Where(d.URL), Clip(d.Issuer))
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

// Discover reads what the provider's discovery document says, as a sign-in
// would find it (discover), for the workspace page's connection test.
func (s *Client) Discover(ctx context.Context, o iam.OIDCSettings) (Discovery, error) {
	p, err := s.discover(ctx, o)
	return p.Discovery, err
}

// checkKeySet refuses a document whose key set Bunting would not fetch.
func (s *Client) checkKeySet(d Discovery) (provider, error) {
	if d.JWKSURI == "" {
		return provider{}, fmt.Errorf("the discovery document at %s names no jwks_uri", outbound.Where(d.URL))
	}
	if u, err := url.Parse(d.JWKSURI); err != nil || u.Host == "" || u.User != nil ||
		(u.Scheme != "https" && (u.Scheme != "http" || !s.allowHTTP)) {
		return provider{}, fmt.Errorf("the discovery document at %s names a jwks_uri that is not an https URL", outbound.Where(d.URL))
	}
	return provider{Discovery: d}, nil
}

// Clip shortens a value a provider sent before it is shown or logged.
func Clip(s string) string {
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

func (s *Client) fetchDiscovery(ctx context.Context, u string) (Discovery, error) {
	var d Discovery
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
func (s *Client) fetchJSON(ctx context.Context, u string) ([]byte, error) {
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

// SigningKeys reads a key set and keeps its signing keys: the public keys
// Go can verify with, not those marked for encryption.
func (s *Client) SigningKeys(ctx context.Context, jwksURI string) ([]jose.JSONWebKey, error) {
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

// Classify answers a *Failure for the API, beside core.Classify: the
// provider unreachable or refusing the code is its fault (502), an id token
// that does not verify is the sign-in's (401). The code is the reason.
func Classify(err error) (core.Class, bool) {
	var f *Failure
	if !errors.As(err, &f) {
		return core.Class{}, false
	}
	status := http.StatusUnauthorized
	if f.Reason == ReasonNoKeys || f.Reason == ReasonExchangeFailed {
		status = http.StatusBadGateway
	}
	return core.Class{Status: status, Codes: []string{f.Reason}}, true
}
