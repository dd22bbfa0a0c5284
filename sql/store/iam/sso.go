package iam

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Single sign-on through OpenID Connect. The store makes each attempt
// (state, nonce and PKCE verifier, sealed for the browser that began it to
// keep, expiring; see sso_attempt.go), checks it at the callback, and turns
// a verified identity into a user, membership and session in one
// transaction. The protocol itself (redirects, token exchange, id-token
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
func (s *IAM) SSOOffer(ctx context.Context) (SSOOffer, error) {
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
	OIDCSettings
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
func (s *IAM) BeginSSO(ctx context.Context, in SSOStartInput) (SSOLogin, error) {
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
func (s *IAM) FinishSSO(ctx context.Context, state, sealed string) (SSOLogin, error) {
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
func (s *IAM) ssoClient(ws db.Workspace) (SSOClient, error) {
	o, err := oidcSettings(ws)
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

// oidcSettings reads a workspace's OIDC settings, the client secret still sealed.
func oidcSettings(ws db.Workspace) (OIDCSettings, error) {
	var o OIDCSettings
	if ws.SsoOidc == nil {
		return o, core.ErrSSONotConfigured
	}
	if err := json.Unmarshal(ws.SsoOidc, &o); err != nil {
		return o, err
	}
	if o.UserEmailClaim == "" {
		o.UserEmailClaim = "email"
	}
	return o, nil
}

// SignInWithSSO signs in the person a verified id token of the workspace's
// provider names. The email comes from the workspace's email claim; an
// email_verified claim that is false refuses the sign-in. The user is
// matched by email case-insensitively or created without a password; a
// user with no organization in the workspace joins it and its default
// (oldest) organization with that organization's default permissions. All of
// it, with its audit entry, is one transaction; nothing is kept on failure.
func (s *IAM) SignInWithSSO(ctx context.Context, wsID uuid.UUID, claims map[string]any) (Session, error) {
	return s.signInWithSSO(ctx, wsID, claims, nil)
}

// signInWithSSO is SignInWithSSO; also, when given, in the sign-in's
// transaction, with the session made.
func (s *IAM) signInWithSSO(ctx context.Context, wsID uuid.UUID, claims map[string]any, also func(*db.Queries, Session) error) (Session, error) {
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return Session{}, core.Translate(err)
	}
	settings, err := oidcSettings(ws)
	if err != nil {
		return Session{}, err
	}
	email, _ := claims[settings.UserEmailClaim].(string)
	email = strings.TrimSpace(email)
	var v core.Validator
	if checkEmail(&v, "email", email); v.Err() != nil {
		return Session{}, core.ErrSSOEmailMissing
	}
	if !emailVerified(claims["email_verified"]) {
		return Session{}, core.ErrSSOEmailUnverified
	}
	name, _ := claims["name"].(string)
	if name = strings.TrimSpace(name); name == "" || len([]rune(name)) > core.MaxNameLen {
		name = emailName(email)
	}
	// Two first sign-ins of one new email at once: the loser of the insert
	// race finds the winner's user on its second try.
	for try := 0; ; try++ {
		session, err := s.ssoSignIn(ctx, wsID, email, name, also)
		if try == 0 && errors.Is(err, core.ErrKeyUsed) {
			continue
		}
		return session, err
	}
}

// emailVerified is false only for a claim that says so, as a boolean or,
// from some providers, a string.
func emailVerified(claim any) bool {
	switch v := claim.(type) {
	case bool:
		return v
	case string:
		return !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return true
}

func (s *IAM) ssoSignIn(ctx context.Context, wsID uuid.UUID, email, name string, also func(*db.Queries, Session) error) (Session, error) {
	var session Session
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		user, err := q.GetUserByEmail(ctx, email)
		created := false
		if errors.Is(core.Translate(err), core.ErrNotFound) {
			user, err = q.CreateUser(ctx, db.CreateUserParams{Email: email, Name: name})
			created = true
		}
		if err != nil {
			return err
		}
		orgs, err := q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: user.ID})
		if err != nil {
			return err
		}
		var orgID uuid.UUID
		if len(orgs) > 0 {
			orgID = orgs[0].ID
		} else if orgID, err = s.joinDefaultOrganization(ctx, q, wsID, user.ID); err != nil {
			return err
		}
		// Land in the workspace signed in to, unless already working there.
		uc, err := q.GetUserContext(ctx, user.ID)
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) || (err == nil && uc.WorkspaceID != wsID) {
			err = q.SetUserContext(ctx, db.SetUserContextParams{UserID: user.ID, OrganizationID: orgID})
		}
		if err != nil {
			return err
		}
		session, err = s.newSession(ctx, q, user.ID)
		session.IsSsoFirstLogin = created
		if err != nil || also == nil {
			return err
		}
		return also(q, session)
	})
	return session, err
}

// joinDefaultOrganization makes a user a member of the workspace and of its
// default organization with that organization's default permissions, and
// records it as the user's own doing.
func (s *IAM) joinDefaultOrganization(ctx context.Context, q *db.Queries, wsID, userID uuid.UUID) (uuid.UUID, error) {
	org, err := q.GetDefaultOrganization(ctx, wsID)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, core.ErrSSONotConfigured
	} else if err != nil {
		return uuid.Nil, err
	}
	if err := q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: wsID, UserID: userID}); err != nil {
		return uuid.Nil, err
	}
	if added, err := q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: org.ID, UserID: userID}); err != nil || added == 0 {
		return org.ID, err // added == 0: a sign-in at the same moment made them a member
	}
	if err := q.AddMemberPolicies(ctx, db.AddMemberPoliciesParams{OrganizationID: org.ID, UserID: userID, Ids: org.DefaultPolicyIds}); err != nil {
		return uuid.Nil, err
	}
	if err := q.AddMemberGroups(ctx, db.AddMemberGroupsParams{OrganizationID: org.ID, UserID: userID, Ids: org.DefaultGroupIds}); err != nil {
		return uuid.Nil, err
	}
	r, err := q.GetMember(ctx, db.GetMemberParams{OrganizationID: org.ID, UserID: userID})
	if err != nil {
		return uuid.Nil, err
	}
	access, err := accessOf(ctx, q, org.ID, memberRow(r))
	if err != nil {
		return uuid.Nil, err
	}
	self := &core.Actor{UserID: userID, WorkspaceID: wsID, OrgID: org.ID}
	err = s.core.Audit(ctx, q, self, core.Change{RefType: "Member", RefID: userID.String(), Keyword: r.Email,
		Operation: core.OpCreate, Current: access, Comment: "Joined through single sign-on"})
	return org.ID, err
}

// CheckOIDCEndpoints checks the endpoints of OIDC settings about to be
// tested from the workspace page, for those allowed to change them.
func (s *IAM) CheckOIDCEndpoints(ctx context.Context, a *core.Actor, in OIDCSettings) (OIDCSettings, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return OIDCSettings{}, err
	}
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return OIDCSettings{}, core.Translate(err)
	}
	if err := s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceSSOSettings, ws); err != nil {
		return OIDCSettings{}, err
	}
	in.AuthorizationEndpoint = strings.TrimSpace(in.AuthorizationEndpoint)
	in.TokenEndpoint = strings.TrimSpace(in.TokenEndpoint)
	in.Issuer = strings.TrimSpace(in.Issuer)
	var v core.Validator
	s.checkOIDCURLs(&v, in)
	return in, v.Err()
}
