package iam

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Credentials are what a request presents: the Authorization header and the
// optional Organization and Workspace headers.
type Credentials struct {
	Authorization string
	Organization  string
	Workspace     string
	// Address is the client's network address.
	Address string
}

// AccessTokenPrefix starts every access token.
const AccessTokenPrefix = "api-"

// Bearer returns the token credentials present, and whether it is an access
// token, checked as far as it can be without the database: a session
// token's signature and expiry. Nothing usable is ErrUnauthenticated.
// Whether a session has ended, or a token still acts, is the database's
// (Authenticate) or a cache's answer.
func (s *IAM) Bearer(c Credentials) (token string, accessToken bool, err error) {
	token = strings.TrimSpace(c.Authorization)
	if rest, ok := cutPrefixFold(token, "Bearer "); ok {
		token = strings.TrimSpace(rest)
	}
	if token == "" {
		return "", false, core.ErrUnauthenticated
	}
	accessToken = strings.HasPrefix(token, AccessTokenPrefix)
	if !accessToken {
		if _, _, ok := s.verifySessionToken(token); !ok {
			return "", false, core.ErrUnauthenticated
		}
	}
	return token, accessToken, nil
}

// Authenticate resolves credentials to an Actor from the database. Access
// tokens carry their own workspace and organization (headers are ignored); a
// signed-in user's headers select the context, which must be one the user
// belongs to.
func (s *IAM) Authenticate(ctx context.Context, c Credentials) (*core.Actor, error) {
	token, accessToken, err := s.Bearer(c)
	if err != nil {
		return nil, err
	}
	var a *core.Actor
	if accessToken {
		a, err = s.tokenActor(ctx, token)
	} else {
		a, err = s.SessionActor(ctx, token, c.Workspace, c.Organization)
	}
	if err != nil {
		return nil, err
	}
	a.Address = c.Address
	return a, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// SessionActor returns the Actor of the session a session token names, in
// the workspace and organization the (optional) headers name:
// ErrUnauthenticated unless the session is live (signed, not expired, not
// ended by signing out or a password change).
func (s *IAM) SessionActor(ctx context.Context, token, workspace, organization string) (*core.Actor, error) {
	sessionID, userID, ok := s.verifySessionToken(token)
	if !ok {
		return nil, core.ErrUnauthenticated
	}
	user, err := s.core.Q.GetSessionUser(ctx, db.GetSessionUserParams{ID: sessionID, UserID: userID})
	if err != nil {
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			return nil, core.ErrUnauthenticated
		}
		return nil, err
	}
	a, err := s.userActor(ctx, user, workspace, organization)
	if err != nil {
		return nil, err
	}
	a.SessionID = sessionID
	return a, nil
}

// UserActor returns the Actor for a user, in the workspace and organization
// the (optional) headers name, for callers that authenticated the user
// already.
func (s *IAM) UserActor(ctx context.Context, userID uuid.UUID, workspace, organization string) (*core.Actor, error) {
	user, err := s.core.Q.GetUser(ctx, userID)
	if err != nil {
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			return nil, core.ErrUnauthenticated
		}
		return nil, err
	}
	return s.userActor(ctx, user, workspace, organization)
}

func (s *IAM) userActor(ctx context.Context, user db.User, workspace, organization string) (*core.Actor, error) {
	a := &core.Actor{UserID: user.ID}

	workspaces, err := s.core.Q.ListUserWorkspaces(ctx, user.ID)
	if err != nil {
		return nil, core.Translate(err)
	}
	wsID, err := pick(workspace, len(workspaces), func(i int) uuid.UUID { return workspaces[i].ID })
	if err != nil || wsID == uuid.Nil {
		return a, err
	}
	a.WorkspaceID = wsID

	orgs, err := s.core.Q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: user.ID})
	if err != nil {
		return nil, core.Translate(err)
	}
	orgID, err := pick(organization, len(orgs), func(i int) uuid.UUID { return orgs[i].ID })
	if err != nil || orgID == uuid.Nil {
		return a, err
	}
	for _, o := range orgs {
		if o.ID == orgID {
			a.OrgKey = o.Key
		}
	}
	a.OrgID = orgID
	a.Granted, err = s.core.MemberStatements(ctx, s.core.Q, orgID, user.ID)
	return a, err
}

// pick chooses the context named by header among the caller's n memberships:
// the named one (403 when the caller is not in it), else the only one, else
// none (uuid.Nil) and the operations that need one say so.
func pick(header string, n int, id func(int) uuid.UUID) (uuid.UUID, error) {
	if header = strings.TrimSpace(header); header != "" {
		want, err := uuid.Parse(header)
		if err != nil {
			return uuid.Nil, core.ErrForbidden
		}
		for i := range n {
			if id(i) == want {
				return want, nil
			}
		}
		return uuid.Nil, core.ErrForbidden
	}
	if n == 1 {
		return id(0), nil
	}
	return uuid.Nil, nil
}

func (s *IAM) tokenActor(ctx context.Context, token string) (*core.Actor, error) {
	sum := sha256.Sum256([]byte(token))
	t, err := s.core.Q.GetAccessTokenByHash(ctx, sum[:])
	if err != nil {
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			return nil, core.ErrUnauthenticated
		}
		return nil, err
	}
	// The lookup is by hash; compare again in constant time so no timing of
	// the index walk tells anything about near misses.
	if subtle.ConstantTimeCompare(t.TokenHash, sum[:]) != 1 {
		return nil, core.ErrUnauthenticated
	}
	org, err := s.core.Q.GetOrganization(ctx, t.OrganizationID)
	if err != nil {
		return nil, core.Translate(err)
	}
	a := &core.Actor{UserID: t.CreatorID, TokenID: t.ID, WorkspaceID: org.WorkspaceID, OrgID: org.ID, OrgKey: org.Key, ServiceToken: t.Type == core.TokenService}
	if a.Granted, err = s.core.TokenStatements(ctx, t); err != nil {
		return nil, err
	}
	if err := s.core.Q.TouchAccessToken(ctx, t.ID); err != nil {
		return nil, core.Translate(err)
	}
	return a, nil
}

// Session tokens are base64url(session id | user id | expiry | HMAC-SHA256
// of those). The signature and expiry are checked without the database; the
// session id names a row of table sessions, which exists while the session
// has not ended.

const sessionPayloadLen = 16 + 16 + 8

func (s *IAM) issueSessionToken(sessionID, userID uuid.UUID, expires time.Time) string {
	buf := make([]byte, sessionPayloadLen, sessionPayloadLen+sha256.Size)
	copy(buf, sessionID[:])
	copy(buf[16:], userID[:])
	binary.BigEndian.PutUint64(buf[32:], uint64(expires.Unix()))
	mac := hmac.New(sha256.New, s.core.ServerKeys.Session)
	mac.Write(buf)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(buf))
}

func (s *IAM) verifySessionToken(token string) (sessionID, userID uuid.UUID, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != sessionPayloadLen+sha256.Size {
		return uuid.Nil, uuid.Nil, false
	}
	mac := hmac.New(sha256.New, s.core.ServerKeys.Session)
	mac.Write(raw[:sessionPayloadLen])
	if !hmac.Equal(mac.Sum(nil), raw[sessionPayloadLen:]) {
		return uuid.Nil, uuid.Nil, false
	}
	if time.Now().Unix() >= int64(binary.BigEndian.Uint64(raw[32:40])) {
		return uuid.Nil, uuid.Nil, false
	}
	return uuid.UUID(raw[:16]), uuid.UUID(raw[16:32]), true
}

// Session is a started session.
type Session struct {
	Token           string    `json:"token"`
	IsSsoFirstLogin bool      `json:"isSsoFirstLogin"`
	UserID          uuid.UUID `json:"-"`
	// ID is the session's row, which a refresh token issued with it ends.
	ID uuid.UUID `json:"-"`
}

// newSession records a session of the user (in q's transaction, if any)
// and returns its token; recording it also sweeps a few expired sessions, so
// the table stays the size of the live ones.
func (s *IAM) newSession(ctx context.Context, q *db.Queries, userID uuid.UUID) (Session, error) {
	id := uuid.New() // version 4: 122 random bits, never guessed
	expires := time.Now().Add(s.core.SessionTTL).Truncate(time.Second)
	if err := q.CreateSession(ctx, db.CreateSessionParams{ID: id, UserID: userID, ExpiresAt: expires}); err != nil {
		return Session{}, core.Translate(err)
	}
	return Session{Token: s.issueSessionToken(id, userID, expires), UserID: userID, ID: id}, nil
}

// Logout ends the caller's session, on every instance at once. An access
// token has no session to end: ErrForbidden.
func (s *IAM) Logout(ctx context.Context, a *core.Actor) error {
	if a.SessionID == uuid.Nil {
		return core.ErrForbidden
	}
	return s.endSession(ctx, a.SessionID, a.UserID)
}

// EndSession ends the session of a token, whatever state it is in: signing
// out of the pages works even when the session has already ended.
func (s *IAM) EndSession(ctx context.Context, token string) error {
	sessionID, userID, ok := s.verifySessionToken(token)
	if !ok {
		return nil // expired or not ours: nothing can use it
	}
	return s.endSession(ctx, sessionID, userID)
}

// endSession ends a session and revokes the refresh tokens issued with it,
// so a refresh-token cookie kept beside a bearer token signed out without it
// stops working too.
func (s *IAM) endSession(ctx context.Context, sessionID, userID uuid.UUID) error {
	return s.core.InTx(ctx, func(q *db.Queries) error {
		s.core.AccessChanged() // the trigger tells every other instance
		if _, err := q.DeleteSession(ctx, db.DeleteSessionParams{ID: sessionID, UserID: userID}); err != nil {
			return err
		}
		return q.RevokeSessionRefreshTokens(ctx, db.RevokeSessionRefreshTokensParams{SessionID: sessionID, UserID: userID})
	})
}

// RefreshSession replaces the caller's session with a new one that lasts
// the full lifetime again; the old token stops working, as FeatBit revokes
// the refresh token it replaces. An access token has no session: ErrForbidden.
func (s *IAM) RefreshSession(ctx context.Context, a *core.Actor) (Session, error) {
	if a.SessionID == uuid.Nil {
		return Session{}, core.ErrForbidden
	}
	var session Session
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		s.core.AccessChanged()
		n, err := q.DeleteSession(ctx, db.DeleteSessionParams{ID: a.SessionID, UserID: a.UserID})
		if err != nil {
			return err
		}
		if n == 0 { // ended meanwhile, by a sign-out or another refresh
			return core.ErrUnauthenticated
		}
		if session, err = s.newSession(ctx, q, a.UserID); err != nil {
			return err
		}
		// The refresh token issued with the old session belongs to the new
		// one, so signing out with the new bearer token revokes it.
		return q.MoveSessionRefreshTokens(ctx, db.MoveSessionRefreshTokensParams{NewSessionID: session.ID,
			SessionID: a.SessionID, UserID: a.UserID})
	})
	return session, err
}

// Sign-in throttling. Each attempt is counted before the password is
// compared, in one statement per attempt (table login_failures, shared by
// every instance), so concurrent attempts cannot all slip under a limit:
//   - per email and address: loginPairLimit attempts in a window, then 429;
//   - per address, whatever the email: loginAddrLimit, then 429;
//   - per email, from any address: never refused, only slowed, so that nobody
//     can lock a person out by failing to sign in as them.
//
// A successful sign-in clears its email's and pair's counts and takes back
// its own attempt from the address's. Until it does, it counts: the address
// limit is set well above how many people sign in at the same instant from
// one address (an office, a load test), and only the email's and the pair's
// counts slow an attempt down, so a busy address is not slowed.
const (
	loginWindow    = 15 * time.Minute
	loginPairLimit = 10  // attempts for one email from one address
	loginAddrLimit = 100 // attempts from one address, for any emails
	loginSlowAfter = 3   // earlier attempts (per subject) after which each waits
	loginMaxDelay  = 12  // most steps an attempt waits
	emailSubject   = "email:"
	addrSubject    = "addr:"
	pairSubject    = "pair:"
)

// Lengths a new password may have; MaxPasswordLen is bcrypt's limit, in bytes.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72
)

// LoginInput is the body of a sign-in by email and password.
type LoginInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Login checks an email and password and starts a session. A wrong email and
// a wrong password answer the same, in the same time.
func (s *IAM) Login(ctx context.Context, in LoginInput, addr string) (Session, error) {
	userID, err := s.checkLogin(ctx, in, addr)
	if err != nil {
		return Session{}, err
	}
	return s.newSession(ctx, s.core.Q, userID)
}

// checkLogin checks an email and password, throttled, and returns the user
// they sign in.
func (s *IAM) checkLogin(ctx context.Context, in LoginInput, addr string) (uuid.UUID, error) {
	var v core.Validator
	if strings.TrimSpace(in.Email) == "" {
		v.Add("email", "required")
	}
	if in.Password == "" {
		v.Add("password", "required")
	}
	if err := v.Err(); err != nil {
		return uuid.Nil, err
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if err := s.reserveLogin(ctx, email, addr); err != nil {
		return uuid.Nil, err
	}
	user, err := s.core.Q.GetUserByEmail(ctx, email)
	if err != nil && !errors.Is(core.Translate(err), core.ErrNotFound) {
		return uuid.Nil, core.Translate(err)
	}
	hash := s.dummyHash()
	if err == nil && user.PasswordHash != nil {
		hash = *user.PasswordHash
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(in.Password)) != nil || err != nil || user.PasswordHash == nil {
		return uuid.Nil, core.ErrBadCredentials // the attempt stays counted
	}
	err = s.core.Q.SettleLoginSuccess(ctx, db.SettleLoginSuccessParams{
		Cleared:  []string{emailSubject + email, pairSubject + email + " " + addr},
		Released: addrSubject + addr,
	})
	if err != nil {
		return uuid.Nil, core.Translate(err)
	}
	return user.ID, nil
}

// reserveLogin counts an attempt for the email, the address and the pair,
// refuses it past a hard limit, and otherwise delays it by how many came
// before it in the window.
func (s *IAM) reserveLogin(ctx context.Context, email, addr string) error {
	since := time.Now().Add(-loginWindow)
	rows, err := s.core.Q.ReserveLoginAttempts(ctx, db.ReserveLoginAttemptsParams{
		Subjects: []string{addrSubject + addr, emailSubject + email, pairSubject + email + " " + addr},
		Since:    since,
	})
	if err != nil {
		return core.Translate(err)
	}
	earlier := int32(0)
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.Subject, pairSubject) && r.Failures > loginPairLimit,
			strings.HasPrefix(r.Subject, addrSubject) && r.Failures > loginAddrLimit:
			return core.ErrTooManyRequests
		case !strings.HasPrefix(r.Subject, addrSubject):
			earlier = max(earlier, r.Failures-1)
		}
	}
	if earlier >= loginSlowAfter {
		steps := min(earlier-loginSlowAfter+1, loginMaxDelay)
		select {
		case <-time.After(time.Duration(steps) * s.core.LoginDelayStep):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// dummyHash is compared against when the email is unknown, so both failures take as long.
func (s *IAM) dummyHash() string {
	s.core.DummyOnce.Do(func() {
		h, _ := bcrypt.GenerateFromPassword([]byte(rand.Text()), s.core.PasswordCost)
		s.core.Dummy = string(h)
	})
	return s.core.Dummy
}

func (s *IAM) hashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), s.core.PasswordCost)
	return string(h), err
}

// ResetPasswordInput changes the caller's password.
type ResetPasswordInput struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// ResetPassword changes the signed-in user's password, which ends every
// session of the user, and returns a fresh session for the caller.
func (s *IAM) ResetPassword(ctx context.Context, a *core.Actor, in ResetPasswordInput) (Session, error) {
	if a.IsToken() {
		return Session{}, core.ErrForbidden
	}
	var v core.Validator
	if in.NewPassword == "" {
		v.Add("newPassword", "required")
	} else if len([]rune(in.NewPassword)) < MinPasswordLen || len(in.NewPassword) > MaxPasswordLen {
		v.Add("newPassword", "invalid")
	}
	if err := v.Err(); err != nil {
		return Session{}, err
	}
	var session Session
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		user, err := q.GetUser(ctx, a.UserID)
		if err != nil {
			return err
		}
		// An SSO user without a password may set one; everyone else proves the current one.
		if user.PasswordHash != nil && bcrypt.CompareHashAndPassword([]byte(*user.PasswordHash), []byte(in.CurrentPassword)) != nil {
			return core.ErrEmailPasswordMismatch
		}
		hash, err := s.hashPassword(in.NewPassword)
		if err != nil {
			return err
		}
		if _, err = q.UpdateUserPassword(ctx, db.UpdateUserPasswordParams{ID: user.ID, PasswordHash: &hash}); err != nil {
			return err
		}
		s.core.AccessChanged() // every earlier session of the user ends now
		if err := q.DeleteUserSessions(ctx, user.ID); err != nil {
			return err
		}
		if err := q.DeleteUserRefreshTokens(ctx, user.ID); err != nil {
			return err
		}
		session, err = s.newSession(ctx, q, user.ID)
		return err
	})
	return session, err
}

// PasswordReset is the answer to a password change: FeatBit's
// ResetPasswordResult, and the caller's new session token, since the change
// ends every earlier session of the user.
type PasswordReset struct {
	Success bool   `json:"success"`
	Reason  string `json:"reason"`
	Token   string `json:"token"`
}
