package api_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

// signInWithCookie signs the owner in as FeatBit's UI does, returning the
// bearer token and the refresh-token cookie's value.
func (s *server) signInWithCookie() (string, string) {
	s.t.Helper()
	r := s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": ownerPassword}).ok(s.t)
	ck := cookie(r, "refresh-token")
	if ck == nil || ck.Value == "" {
		s.t.Fatalf("sign-in set no refresh cookie: %v", r.Header)
	}
	return bearer(decode[iam.Session](s.t, r).Token), ck.Value
}

// refreshWith trades a refresh-token cookie, as FeatBit's UI does.
func (s *server) refreshWith(refresh string) *reply {
	return s.do("POST", "/api/v1/identity/refresh-token", "", nil, "Cookie", "refresh-token="+refresh)
}

// TestLogoutRevokesRefreshToken: signing out by the bearer token alone (no
// cookie sent) revokes the refresh token issued with the session, and so does
// signing out after a bearer refresh replaced the session.
func TestLogoutRevokesRefreshToken(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	session, refresh := s.signInWithCookie()
	s.do("POST", "/api/v1/identity/logout", session, nil).ok(t)
	s.refreshWith(refresh).fails(t, http.StatusUnauthorized, "Unauthorized")

	// A refreshed session (by its bearer token) carries the cookie's token.
	session, refresh = s.signInWithCookie()
	fresh := bearer(decode[iam.Session](t, s.do("POST", "/api/v1/identity/refresh-token", session, nil).ok(t)).Token)
	s.do("POST", "/api/v1/identity/logout", fresh, nil).ok(t)
	s.refreshWith(refresh).fails(t, http.StatusUnauthorized, "Unauthorized")

	// A cookie refreshed, then signed out by the new bearer alone.
	_, refresh = s.signInWithCookie()
	r := s.refreshWith(refresh).ok(t)
	s.do("POST", "/api/v1/identity/logout", bearer(decode[iam.Session](t, r).Token), nil).ok(t)
	s.refreshWith(cookie(r, "refresh-token").Value).fails(t, http.StatusUnauthorized, "Unauthorized")

	// Another sign-in's cookie is untouched by these sign-outs.
	other, otherRefresh := s.signInWithCookie()
	session, _ = s.signInWithCookie()
	s.do("POST", "/api/v1/identity/logout", session, nil).ok(t)
	s.do("GET", "/api/v1/user/profile", other, nil).ok(t)
	s.refreshWith(otherRefresh).ok(t)
}

// TestRefreshTokenReuse: a spent refresh token presented again revokes every
// token descended from its sign-in, the newest included, and ends their
// sessions; another sign-in of the same person lives on.
func TestRefreshTokenReuse(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	other, otherRefresh := s.signInWithCookie()
	_, first := s.signInWithCookie()
	r := s.refreshWith(first).ok(t)
	second := cookie(r, "refresh-token").Value
	r = s.refreshWith(second).ok(t)
	third, session := cookie(r, "refresh-token").Value, bearer(decode[iam.Session](t, r).Token)
	s.do("GET", "/api/v1/user/profile", session, nil).ok(t)
	live := `SELECT count(*) FROM refresh_tokens WHERE revoked_at IS NULL`
	before := s.count(live)

	// The thief replays the first token: refused, and the chain is revoked.
	s.refreshWith(first).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.refreshWith(third).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", session, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	if n := s.count(live); n != before-1 {
		t.Fatalf("%d live refresh tokens, want %d: the chain's one revoked, the other sign-ins' live", n, before-1)
	}
	s.do("GET", "/api/v1/user/profile", other, nil).ok(t)
	s.refreshWith(otherRefresh).ok(t)

	// Spent and replayed after a sign-out with the cookie: still refused.
	session, refresh := s.signInWithCookie()
	s.do("POST", "/api/v1/identity/logout", session, nil, "Cookie", "refresh-token="+refresh).ok(t)
	s.refreshWith(refresh).fails(t, http.StatusUnauthorized, "Unauthorized")
}

// TestRefreshTokenConcurrentUse: two refreshes with one token at once; the
// row lock lets exactly one succeed, and the other, finding the token spent,
// revokes the chain, so the winner's new token and session stop working too.
func TestRefreshTokenConcurrentUse(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, refresh := s.signInWithCookie()
	var wg sync.WaitGroup
	start := make(chan struct{})
	replies := make([]*reply, 2)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			replies[i] = s.refreshWith(refresh)
		}()
	}
	close(start)
	wg.Wait()
	var won *reply
	for _, r := range replies {
		switch {
		case r == nil:
			t.Fatal("a refresh did not answer")
		case r.Status == http.StatusOK:
			if won != nil {
				t.Fatal("both refreshes with one token succeeded")
			}
			won = r
		default:
			r.fails(t, http.StatusUnauthorized, "Unauthorized")
		}
	}
	if won == nil {
		t.Fatal("neither refresh succeeded")
	}
	s.refreshWith(cookie(won, "refresh-token").Value).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("GET", "/api/v1/user/profile", bearer(decode[iam.Session](t, won).Token), nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}
