package sso

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Single sign-on through OpenID Connect. The store makes each attempt
// (state, nonce and PKCE verifier, sealed for the browser that began it to
// keep, expiring; see attempt.go) and checks it at the callback; the
// identity seam turns a verified identity into a user, membership and
// session in one transaction (iam.SignInWithSSO). The protocol itself (redirects, token exchange, id-token
// verification) and the cookie are web's.

// SSOStateTTL is how long a begun single sign-on attempt may be completed.
const SSOStateTTL = 10 * time.Minute

// SSOOffer tells the sign-in page whether to offer single sign-on.
type SSOOffer struct {
	// Enabled: at least one workspace has OIDC settings.
	Enabled bool
	// AskWorkspace: there are several workspaces, so the person names theirs.
	AskWorkspace bool
	// AuthorizationEndpoints are where the page may send browsers.
	AuthorizationEndpoints []string
}

// SSOOffer reports whether and how the sign-in page offers single sign-on.
func (s *SSO) SSOOffer(ctx context.Context) (SSOOffer, error) {
	n, err := s.core.Q.CountWorkspacesWithSSO(ctx)
	if err != nil || n.WithSso == 0 {
		return SSOOffer{}, core.Translate(err)
	}
	endpoints, err := s.core.Q.ListSSOAuthorizationEndpoints(ctx)
	if err != nil {
		return SSOOffer{}, core.Translate(err)
	}
	return SSOOffer{Enabled: true, AskWorkspace: n.Workspaces > 1, AuthorizationEndpoints: endpoints}, nil
}

// SSOClient is a workspace's OIDC client: its settings with the client
// secret in clear, for the token exchange only. It logs with the secret masked.
type SSOClient struct {
	WorkspaceID uuid.UUID
	iam.OIDCSettings
}

// LogValue keeps the client secret out of logs.
func (c SSOClient) LogValue() slog.Value {
	return slog.GroupValue(slog.String("workspace", c.WorkspaceID.String()), slog.String("clientId", c.ClientID),
		slog.String("authorizationEndpoint", c.AuthorizationEndpoint), slog.String("tokenEndpoint", c.TokenEndpoint),
		slog.String("issuer", c.Issuer))
}

// SSOLogin is one single sign-on attempt.
type SSOLogin struct {
	// State and Nonce go to the provider; Verifier is the PKCE code verifier.
	State, Nonce, Verifier string
	// Next is the local path to land on after signing in.
	Next   string
	Client SSOClient
	// Sealed is the attempt as the browser that began it keeps it until
	// the callback, opaque to it (BeginSSO's answer only).
	Sealed string
}

// SSOStartInput begins a single sign-on: the workspace key (needed when
// there are several workspaces) and the page to come back to.
type SSOStartInput struct {
	Workspace string
	Next      string
}

// BeginSSO starts a single sign-on attempt in the workspace named by in
// (or the only one). Anyone may begin one, and nothing is stored, so it
// cannot fill anything: the attempt is Sealed for the browser to keep, and
// FinishSSO takes it back. How often one address may begin is the pages'
// limit (web/limit).
func (s *SSO) BeginSSO(ctx context.Context, in SSOStartInput) (SSOLogin, error) {
	key := strings.TrimSpace(in.Workspace)
	var ws db.Workspace
	var err error
	if key == "" {
		if ws, err = s.core.Q.GetOnlyWorkspace(ctx); errors.Is(core.Translate(err), core.ErrNotFound) {
			return SSOLogin{}, core.Invalid("workspace_is_required")
		}
	} else {
		ws, err = s.core.Q.GetWorkspaceByKey(ctx, key)
	}
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) || (err == nil && ws.SsoOidc == nil) {
		return SSOLogin{}, core.Invalid("workspace_is_invalid")
	} else if err != nil {
		return SSOLogin{}, err
	}
	client, err := s.ssoClient(ws)
	if err != nil {
		return SSOLogin{}, err
	}
	// The PKCE verifier, 52 characters of 256 random bits, is within RFC
	// 7636's 43 to 128 unreserved ones.
	a := ssoAttempt{Workspace: ws.ID, State: rand.Text() + rand.Text(), Nonce: rand.Text() + rand.Text(),
		Verifier: rand.Text() + rand.Text(), Next: in.Next, Expires: s.core.Now().Add(SSOStateTTL).UnixMilli()}
	return SSOLogin{State: a.State, Nonce: a.Nonce, Verifier: a.Verifier, Next: a.Next, Client: client,
		Sealed: sealAttempt(s.core.ServerKeys, a)}, nil
}

// FinishSSO checks the attempt the browser kept (sealed) against the state
// the provider sent back: it must be one BeginSSO sealed, for this state,
// within SSOStateTTL. It returns the attempt with the workspace's current
// settings. Using an attempt once is the caller's part: it deletes what the
// browser kept.
func (s *SSO) FinishSSO(ctx context.Context, state, sealed string) (SSOLogin, error) {
	a, ok := openAttempt(s.core.ServerKeys, sealed)
	if state == "" || !ok || subtle.ConstantTimeCompare([]byte(a.State), []byte(state)) != 1 {
		return SSOLogin{}, core.ErrSSOState
	}
	if !s.core.Now().Before(time.UnixMilli(a.Expires)) {
		return SSOLogin{}, core.ErrSSOStateExpired
	}
	ws, err := s.core.Q.GetWorkspace(ctx, a.Workspace)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return SSOLogin{}, core.ErrSSONotConfigured
	} else if err != nil {
		return SSOLogin{}, err
	}
	client, err := s.ssoClient(ws)
	if err != nil {
		return SSOLogin{}, err
	}
	return SSOLogin{State: state, Nonce: a.Nonce, Verifier: a.Verifier, Next: a.Next, Client: client}, nil
}

// ssoClient reads a workspace's OIDC settings and opens the client secret.
func (s *SSO) ssoClient(ws db.Workspace) (SSOClient, error) {
	o, err := iam.OIDCSettingsOf(ws)
	if err != nil {
		return SSOClient{}, err
	}
	secret, err := s.core.ServerKeys.Open(o.ClientSecret)
	if err != nil { // sealed under another server key
		return SSOClient{}, fmt.Errorf("open the OIDC client secret of workspace %s: %w", ws.ID, err)
	}
	o.ClientSecret = secret
	return SSOClient{WorkspaceID: ws.ID, OIDCSettings: o}, nil
}

// CheckOIDCEndpoints checks the endpoints of OIDC settings about to be
// tested from the workspace page, for those allowed to change them.
func (s *SSO) CheckOIDCEndpoints(ctx context.Context, a *core.Actor, in iam.OIDCSettings) (iam.OIDCSettings, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return iam.OIDCSettings{}, err
	}
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return iam.OIDCSettings{}, core.Translate(err)
	}
	if err := s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceSSOSettings, ws); err != nil {
		return iam.OIDCSettings{}, err
	}
	in.AuthorizationEndpoint = strings.TrimSpace(in.AuthorizationEndpoint)
	in.TokenEndpoint = strings.TrimSpace(in.TokenEndpoint)
	in.Issuer = strings.TrimSpace(in.Issuer)
	var v core.Validator
	iam.CheckOIDCURLs(&v, in, s.core.SSOPrivateNetworks)
	return in, v.Err()
}

// SSOPreCheck is FeatBit's answer to its sign-in page: whether single
// sign-on is offered, and the workspace key to fill in when the
// installation has exactly one workspace ("" otherwise, so the person types
// theirs).
type SSOPreCheck struct {
	IsEnabled    bool   `json:"isEnabled"`
	WorkspaceKey string `json:"workspaceKey"`
}

// SSOPreCheck reports whether any workspace signs in through OIDC, as the
// pages' sign-in form decides (SSOOffer), and the only workspace's key.
// FeatBit's SSOEnabled is a server setting; Bunting's is having OIDC settings.
func (s *SSO) SSOPreCheck(ctx context.Context) (SSOPreCheck, error) {
	offer, err := s.SSOOffer(ctx)
	if err != nil {
		return SSOPreCheck{}, err
	}
	out := SSOPreCheck{IsEnabled: offer.Enabled}
	ws, err := s.core.Q.GetOnlyWorkspace(ctx)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return out, nil
	} else if err != nil {
		return SSOPreCheck{}, err
	}
	out.WorkspaceKey = ws.Key
	return out, nil
}
