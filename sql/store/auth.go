package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/db"
)

// Actor is who makes a request and the workspace and organization it is made in.
type Actor struct {
	UserID uuid.UUID
	// TokenID is the access token that authenticated the request, or uuid.Nil
	// for a signed-in user.
	TokenID uuid.UUID
	// WorkspaceID and OrgID are the request's context; uuid.Nil when the
	// caller belongs to several and the request named none.
	WorkspaceID uuid.UUID
	OrgID       uuid.UUID
	// Address is the client's network address, for rate limits; may be empty.
	Address    string
	statements []Statement
}

// Can reports whether the actor may perform action on the resource named rn.
func (a *Actor) Can(action, rn string) bool { return allows(a.statements, action, rn) }

// Statements returns the statements the actor acts with.
func (a *Actor) Statements() []Statement { return a.statements }

// IsToken reports whether an access token authenticated the actor.
func (a *Actor) IsToken() bool { return a.TokenID != uuid.Nil }

// require returns ErrForbidden unless the actor may perform action on rn.
func (a *Actor) require(action, rn string) error {
	if !a.Can(action, rn) {
		return ErrForbidden
	}
	return nil
}

// org returns the actor's organization, or a validation error when the
// request must name one.
func (a *Actor) org() (uuid.UUID, error) {
	if a.OrgID == uuid.Nil {
		return uuid.Nil, Invalid("organization_is_required")
	}
	return a.OrgID, nil
}

func (a *Actor) workspace() (uuid.UUID, error) {
	if a.WorkspaceID == uuid.Nil {
		return uuid.Nil, Invalid("workspace_is_required")
	}
	return a.WorkspaceID, nil
}

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

// Authenticate resolves credentials to an Actor. Access tokens carry their own
// workspace and organization (headers are ignored); a signed-in user's headers
// select the context, which must be one the user belongs to.
func (s *Store) Authenticate(ctx context.Context, c Credentials) (*Actor, error) {
	token := strings.TrimSpace(c.Authorization)
	if rest, ok := cutPrefixFold(token, "Bearer "); ok {
		token = strings.TrimSpace(rest)
	}
	if token == "" {
		return nil, ErrUnauthenticated
	}
	isToken := strings.HasPrefix(token, AccessTokenPrefix)
	userID, epoch, ok := s.verifySessionToken(token) // checks signature and expiry without the database
	if !isToken && !ok {
		return nil, ErrUnauthenticated
	}
	key := cacheKey(c, token)
	if e, hit := s.auth.get(key); hit {
		a := *e.actor
		a.Address = c.Address
		if isToken {
			if err := s.touchToken(ctx, e, a.TokenID); err != nil {
				return nil, err
			}
		}
		return &a, nil
	}
	var a *Actor
	var err error
	if isToken {
		a, err = s.tokenActor(ctx, token)
	} else {
		a, err = s.UserActor(ctx, userID, epoch, c.Workspace, c.Organization)
	}
	if err != nil {
		return nil, err
	}
	s.auth.put(key, a)
	cached := *a
	cached.Address = c.Address
	return &cached, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// UserActor returns the Actor for a signed-in user whose session carries
// epoch, in the workspace and organization the (optional) headers name.
func (s *Store) UserActor(ctx context.Context, userID uuid.UUID, epoch int32, workspace, organization string) (*Actor, error) {
	user, err := s.q.GetUser(ctx, userID)
	if err != nil {
		if err = translate(err); errors.Is(err, ErrNotFound) {
			return nil, ErrUnauthenticated
		}
		return nil, err
	}
	if user.SessionEpoch != epoch {
		return nil, ErrUnauthenticated
	}
	a := &Actor{UserID: user.ID}

	workspaces, err := s.q.ListUserWorkspaces(ctx, user.ID)
	if err != nil {
		return nil, translate(err)
	}
	wsID, err := pick(workspace, len(workspaces), func(i int) uuid.UUID { return workspaces[i].ID })
	if err != nil || wsID == uuid.Nil {
		return a, err
	}
	a.WorkspaceID = wsID

	orgs, err := s.q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: user.ID})
	if err != nil {
		return nil, translate(err)
	}
	orgID, err := pick(organization, len(orgs), func(i int) uuid.UUID { return orgs[i].ID })
	if err != nil || orgID == uuid.Nil {
		return a, err
	}
	a.OrgID = orgID
	a.statements, err = s.memberStatements(ctx, s.q, orgID, user.ID)
	return a, err
}

// pick chooses the context named by header among the caller's n memberships:
// the named one (403 when the caller is not in it), else the only one, else
// none (uuid.Nil) and the operations that need one say so.
func pick(header string, n int, id func(int) uuid.UUID) (uuid.UUID, error) {
	if header = strings.TrimSpace(header); header != "" {
		want, err := uuid.Parse(header)
		if err != nil {
			return uuid.Nil, ErrForbidden
		}
		for i := range n {
			if id(i) == want {
				return want, nil
			}
		}
		return uuid.Nil, ErrForbidden
	}
	if n == 1 {
		return id(0), nil
	}
	return uuid.Nil, nil
}

// memberStatements returns a member's statements in an organization, from
// direct policies and from groups.
func (s *Store) memberStatements(ctx context.Context, q *db.Queries, orgID, userID uuid.UUID) ([]Statement, error) {
	rows, err := q.ListMemberStatements(ctx, db.ListMemberStatementsParams{OrganizationID: orgID, UserID: userID})
	if err != nil {
		return nil, translate(err)
	}
	var all []Statement
	for _, raw := range rows {
		var sts []Statement
		if err := json.Unmarshal(raw, &sts); err != nil {
			return nil, err
		}
		all = append(all, sts...)
	}
	return all, nil
}

func (s *Store) tokenActor(ctx context.Context, token string) (*Actor, error) {
	sum := sha256.Sum256([]byte(token))
	t, err := s.q.GetAccessTokenByHash(ctx, sum[:])
	if err != nil {
		if err = translate(err); errors.Is(err, ErrNotFound) {
			return nil, ErrUnauthenticated
		}
		return nil, err
	}
	// The lookup is by hash; compare again in constant time so no timing of
	// the index walk tells anything about near misses.
	if subtle.ConstantTimeCompare(t.TokenHash, sum[:]) != 1 || t.Status != "Active" {
		return nil, ErrUnauthenticated
	}
	org, err := s.q.GetOrganization(ctx, t.OrganizationID)
	if err != nil {
		return nil, translate(err)
	}
	member, err := s.q.IsOrganizationUser(ctx, db.IsOrganizationUserParams{OrganizationID: org.ID, UserID: t.CreatorID})
	if err != nil {
		return nil, translate(err)
	}
	if !member { // a token dies with its creator's membership
		return nil, ErrUnauthenticated
	}
	a := &Actor{UserID: t.CreatorID, TokenID: t.ID, WorkspaceID: org.WorkspaceID, OrgID: org.ID}
	if t.Type == TokenService {
		if err := json.Unmarshal(t.Permissions, &a.statements); err != nil {
			return nil, err
		}
	} else if a.statements, err = s.memberStatements(ctx, s.q, org.ID, t.CreatorID); err != nil {
		return nil, err
	}
	if err := s.q.TouchAccessToken(ctx, t.ID); err != nil {
		return nil, translate(err)
	}
	return a, nil
}

// Session tokens are base64url(user id | epoch | expiry | HMAC-SHA256 of those).

const sessionPayloadLen = 16 + 4 + 8

func (s *Store) issueSessionToken(userID uuid.UUID, epoch int32) string {
	buf := make([]byte, sessionPayloadLen, sessionPayloadLen+sha256.Size)
	copy(buf, userID[:])
	binary.BigEndian.PutUint32(buf[16:], uint32(epoch))
	binary.BigEndian.PutUint64(buf[20:], uint64(time.Now().Add(s.sessionTTL).Unix()))
	mac := hmac.New(sha256.New, s.keys.Session)
	mac.Write(buf)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(buf))
}

func (s *Store) verifySessionToken(token string) (uuid.UUID, int32, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != sessionPayloadLen+sha256.Size {
		return uuid.Nil, 0, false
	}
	mac := hmac.New(sha256.New, s.keys.Session)
	mac.Write(raw[:sessionPayloadLen])
	if !hmac.Equal(mac.Sum(nil), raw[sessionPayloadLen:]) {
		return uuid.Nil, 0, false
	}
	if time.Now().Unix() >= int64(binary.BigEndian.Uint64(raw[20:28])) {
		return uuid.Nil, 0, false
	}
	return uuid.UUID(raw[:16]), int32(binary.BigEndian.Uint32(raw[16:20])), true
}

// Sign-in throttling: failures are counted per email and per client address
// over a window shared by every instance (table login_failures).
const (
	loginWindow     = 15 * time.Minute
	loginSlowAfter  = 3  // failures after which each attempt is delayed
	loginBlockAfter = 10 // failures after which attempts are refused with 429
	maxPasswordLen  = 72 // bcrypt's limit, in bytes
	minPasswordLen  = 8
)

// LoginInput is the body of a sign-in by email and password.
type LoginInput struct {
	Email    string `json:"email" form:"email"`
	Password string `json:"password" form:"password"`
}

// Session is a started session.
type Session struct {
	Token           string    `json:"token"`
	IsSsoFirstLogin bool      `json:"isSsoFirstLogin"`
	UserID          uuid.UUID `json:"-"`
	Epoch           int32     `json:"-"`
}

// Login checks an email and password and starts a session. A wrong email and
// a wrong password answer the same, in the same time.
func (s *Store) Login(ctx context.Context, in LoginInput, addr string) (Session, error) {
	var v validator
	if strings.TrimSpace(in.Email) == "" {
		v.add("email", "required")
	}
	if in.Password == "" {
		v.add("password", "required")
	}
	if err := v.err(); err != nil {
		return Session{}, err
	}
	subjects := []string{"email:" + strings.ToLower(strings.TrimSpace(in.Email)), "addr:" + addr}
	if err := s.throttle(ctx, subjects); err != nil {
		return Session{}, err
	}
	user, err := s.q.GetUserByEmail(ctx, strings.TrimSpace(in.Email))
	if err != nil && !errors.Is(translate(err), ErrNotFound) {
		return Session{}, translate(err)
	}
	hash := s.dummyHash()
	if err == nil && user.PasswordHash != nil {
		hash = *user.PasswordHash
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(in.Password)) != nil || err != nil || user.PasswordHash == nil {
		for _, subject := range subjects {
			if err := s.q.RecordLoginFailure(ctx, db.RecordLoginFailureParams{Subject: subject, Since: time.Now().Add(-loginWindow)}); err != nil {
				return Session{}, translate(err)
			}
		}
		return Session{}, ErrBadCredentials
	}
	if err := s.q.ClearLoginFailures(ctx, subjects[0]); err != nil {
		return Session{}, translate(err)
	}
	return s.newSession(user.ID, user.SessionEpoch), nil
}

func (s *Store) newSession(userID uuid.UUID, epoch int32) Session {
	return Session{Token: s.issueSessionToken(userID, epoch), UserID: userID, Epoch: epoch}
}

// throttle delays an attempt after a few recent failures and refuses it after many.
func (s *Store) throttle(ctx context.Context, subjects []string) error {
	rows, err := s.q.GetLoginFailures(ctx, db.GetLoginFailuresParams{Subjects: subjects, Since: time.Now().Add(-loginWindow)})
	if err != nil {
		return translate(err)
	}
	worst := int32(0)
	for _, r := range rows {
		worst = max(worst, r.Failures)
	}
	if worst >= loginBlockAfter {
		return ErrTooManyRequests
	}
	if worst >= loginSlowAfter {
		select {
		case <-time.After(time.Duration(worst-loginSlowAfter+1) * s.loginDelayStep):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// dummyHash is compared against when the email is unknown, so both failures take as long.
func (s *Store) dummyHash() string {
	s.dummyOnce.Do(func() {
		h, _ := bcrypt.GenerateFromPassword([]byte(rand.Text()), s.passwordCost)
		s.dummy = string(h)
	})
	return s.dummy
}

func (s *Store) hashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), s.passwordCost)
	return string(h), err
}

// ResetPasswordInput changes the caller's password.
type ResetPasswordInput struct {
	CurrentPassword string `json:"currentPassword" form:"currentPassword"`
	NewPassword     string `json:"newPassword" form:"newPassword"`
}

// ResetPassword changes the signed-in user's password, which ends every other
// session, and returns a fresh session for the caller.
func (s *Store) ResetPassword(ctx context.Context, a *Actor, in ResetPasswordInput) (Session, error) {
	if a.IsToken() {
		return Session{}, ErrForbidden
	}
	var v validator
	if in.NewPassword == "" {
		v.add("newPassword", "required")
	} else if len([]rune(in.NewPassword)) < minPasswordLen || len(in.NewPassword) > maxPasswordLen {
		v.add("newPassword", "invalid")
	}
	if err := v.err(); err != nil {
		return Session{}, err
	}
	var session Session
	err := s.inTx(ctx, func(q *db.Queries) error {
		user, err := q.GetUser(ctx, a.UserID)
		if err != nil {
			return err
		}
		// An SSO user without a password may set one; everyone else proves the current one.
		if user.PasswordHash != nil && bcrypt.CompareHashAndPassword([]byte(*user.PasswordHash), []byte(in.CurrentPassword)) != nil {
			return ErrEmailPasswordMismatch
		}
		hash, err := s.hashPassword(in.NewPassword)
		if err != nil {
			return err
		}
		user, err = q.UpdateUserPassword(ctx, db.UpdateUserPasswordParams{ID: user.ID, PasswordHash: &hash})
		if err != nil {
			return err
		}
		s.accessChanged() // every earlier session of the user ends now
		session = s.newSession(user.ID, user.SessionEpoch)
		return nil
	})
	return session, err
}
