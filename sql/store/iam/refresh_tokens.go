package iam

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Refresh tokens, as FeatBit's admin UI uses them: signing in gives the
// browser a session token (which the UI keeps and sends as a bearer token)
// and a refresh token in an HttpOnly cookie (the API's part), which the UI
// trades for a new session token once its own is refused. A refresh token is
// 32 random bytes; only its SHA-256 hash is kept (table refresh_tokens). It
// works once: the refresh revokes it, names its successor, and ends the
// session issued with it, as RefreshSession ends the session it replaces.
//
// A refresh token belongs to its session: ending the session (a sign-out by
// the bearer token alone, with the cookie, or the pages' sign-out) revokes
// it, and a password change deletes every refresh token of the user with the
// sessions. Every token descended from one sign-in shares a family; a spent
// token presented again means two holders of one chain (a copy taken from
// the browser), and nobody can tell which is rightful, so the whole family is
// revoked and its sessions end: both must sign in again. Two refreshes with
// one token at once are the same case: the row lock lets exactly one succeed,
// and the other, finding the token spent, revokes the chain, the winner's
// new token and session included. FeatBit's UI refreshes once at a time, so
// it never does this by itself.

// RefreshTokenTTL is how long a refresh token may be used: FeatBit's
// RefreshTokenConsts.ExpiryDays, and its cookie's max age.
const RefreshTokenTTL = 30 * 24 * time.Hour

// SignIn is a session begun for FeatBit's admin UI with the refresh token its
// cookie keeps; it answers as Session does.
type SignIn struct {
	Session
	// Refresh is the refresh token in clear, for the cookie only.
	Refresh string `json:"-"`
}

// LoginWithRefresh is Login that also issues a refresh token, in the same
// transaction as the session.
func (s *IAM) LoginWithRefresh(ctx context.Context, in LoginInput, addr string) (SignIn, error) {
	userID, err := s.checkLogin(ctx, in, addr)
	if err != nil {
		return SignIn{}, err
	}
	var out SignIn
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		session, err := s.newSession(ctx, q, userID)
		if err != nil {
			return err
		}
		out, err = s.withRefreshToken(ctx, q, session, addr)
		return err
	})
	return out, err
}

// SignInWithSSOAndRefresh is SignInWithSSO that also issues a refresh token,
// in the sign-in's transaction.
func (s *IAM) SignInWithSSOAndRefresh(ctx context.Context, wsID uuid.UUID, claims map[string]any, addr string) (SignIn, error) {
	var out SignIn
	_, err := s.signInWithSSO(ctx, wsID, claims, func(q *db.Queries, session Session) error {
		var err error
		out, err = s.withRefreshToken(ctx, q, session, addr)
		return err
	})
	return out, err
}

// RefreshWithToken trades a refresh token for a new session and refresh
// token: the one presented is revoked (and names its successor), and the
// session issued with it ends. An unknown, used, revoked or expired token,
// or one whose user is gone (its rows go with the user), is
// ErrUnauthenticated. A used or revoked one also revokes its whole family
// and ends its sessions, committed before the refusal.
func (s *IAM) RefreshWithToken(ctx context.Context, refresh, addr string) (SignIn, error) {
	if refresh == "" {
		return SignIn{}, core.ErrUnauthenticated
	}
	next := newRefreshToken()
	var out SignIn
	reused := false
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		nextHash := refreshHash(next)
		old, err := q.RevokeRefreshToken(ctx, db.RevokeRefreshTokenParams{TokenHash: refreshHash(refresh),
			RevokedByIp: &addr, ReplacedBy: nextHash})
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			// Not live: when it was spent, the chain is revoked in this
			// transaction, which then commits, and the caller is refused.
			reused, err = s.revokeSpentFamily(ctx, q, refresh, addr)
			return err
		} else if err != nil {
			return err
		}
		s.core.AccessChanged() // the replaced session ends on every instance
		if _, err := q.DeleteSession(ctx, db.DeleteSessionParams{ID: old.SessionID, UserID: old.UserID}); err != nil {
			return err
		}
		session, err := s.newSession(ctx, q, old.UserID)
		if err != nil {
			return err
		}
		out = SignIn{Session: session, Refresh: next}
		return q.CreateRefreshToken(ctx, db.CreateRefreshTokenParams{TokenHash: nextHash, UserID: old.UserID,
			SessionID: session.ID, FamilyID: old.FamilyID, CreatedByIp: addr, ExpiresAt: time.Now().Add(RefreshTokenTTL)})
	})
	if err != nil {
		return SignIn{}, err
	}
	if out.Token == "" {
		if reused {
			s.core.Log.WarnContext(ctx, "a used or revoked refresh token was presented again: its chain is revoked", "addr", addr)
		}
		return SignIn{}, core.ErrUnauthenticated
	}
	return out, nil
}

// revokeSpentFamily revokes the family of a refresh token already revoked,
// and ends its sessions, in q's transaction; it answers whether the token was
// one (an unknown or expired token changes nothing).
func (s *IAM) revokeSpentFamily(ctx context.Context, q *db.Queries, refresh, addr string) (bool, error) {
	spent, err := q.GetSpentRefreshToken(ctx, refreshHash(refresh))
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	s.core.AccessChanged() // the chain's sessions end on every instance
	_, err = q.RevokeRefreshFamily(ctx, db.RevokeRefreshFamilyParams{UserID: spent.UserID, FamilyID: spent.FamilyID, RevokedByIp: &addr})
	return true, err
}

// RevokeRefreshToken revokes a refresh token at sign-out, with every token of
// its family, and ends their sessions; an unknown one changes nothing.
func (s *IAM) RevokeRefreshToken(ctx context.Context, refresh, addr string) error {
	if refresh == "" {
		return nil
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		old, err := q.RevokeRefreshToken(ctx, db.RevokeRefreshTokenParams{TokenHash: refreshHash(refresh), RevokedByIp: &addr})
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			_, err = s.revokeSpentFamily(ctx, q, refresh, addr)
			return err
		} else if err != nil {
			return err
		}
		s.core.AccessChanged()
		_, err = q.RevokeRefreshFamily(ctx, db.RevokeRefreshFamilyParams{UserID: old.UserID, FamilyID: old.FamilyID, RevokedByIp: &addr})
		return err
	})
}

// withRefreshToken issues a refresh token with a session, the first of a
// new family, in q's transaction.
func (s *IAM) withRefreshToken(ctx context.Context, q *db.Queries, session Session, addr string) (SignIn, error) {
	raw := newRefreshToken()
	err := q.CreateRefreshToken(ctx, db.CreateRefreshTokenParams{TokenHash: refreshHash(raw), UserID: session.UserID,
		SessionID: session.ID, FamilyID: uuid.New(), CreatedByIp: addr, ExpiresAt: time.Now().Add(RefreshTokenTTL)})
	if err != nil {
		return SignIn{}, core.Translate(err)
	}
	return SignIn{Session: session, Refresh: raw}, nil
}

// newRefreshToken is 256 random bits, URL-safe (a cookie value needs no quoting).
func newRefreshToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func refreshHash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
