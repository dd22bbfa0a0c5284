package actorcache

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// testStore is a store over a fresh database with its owner signed in, and
// the keys another instance on that database needs.
func testStore(t *testing.T) (*store.Store, *core.Actor, *pgxpool.Pool, core.Keys) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("cache-test-", 4))
	must(t, err)
	s := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	_, err = s.IAM().Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"})
	must(t, err)
	session, err := s.IAM().Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	must(t, err)
	a, err := s.IAM().Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
	must(t, err)
	return s, a, pool, keys
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// listen runs the change listener of each store until the test ends, and
// waits until each listens.
func listen(t *testing.T, stores ...*store.Store) {
	t.Helper()
	for _, s := range stores {
		feedtest.Run(t, s.Projects().Feed())
	}
	waitFor(t, "the listeners", func() bool {
		for _, s := range stores {
			if _, watched := s.Projects().AccessVersion(); !watched {
				return false
			}
		}
		return true
	})
}

// settle waits until every notification committed so far has reached s's
// listener: PostgreSQL delivers them in commit order on its one
// connection, so once a change marker recorded now is read, everything
// before it has been heard.
func settle(t *testing.T, s *store.Store, pool *pgxpool.Pool) {
	t.Helper()
	feedtest.Settle(t, pool, s.Projects().Changes())
}

// version is a store's access version.
func version(s *store.Store) int64 {
	v, _ := s.Projects().AccessVersion()
	return v
}

// TestAccessChangesReachEveryInstance runs two stores (two Bunting
// instances) on one database: repeated requests are authorized from memory,
// and a token revoked or a permission removed through one instance is refused
// by the other once the database's notification arrives.
func TestAccessChangesReachEveryInstance(t *testing.T) {
	ctx := context.Background()
	a, owner, pool, keys := testStore(t)
	b := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	listen(t, a, b)
	ca, cb := New(a), New(b)

	tok, err := a.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "ci", Type: core.TokenPersonal})
	if err != nil {
		t.Fatal(err)
	}
	creds := iam.Credentials{Authorization: tok.Token}
	for range 3 {
		if _, err := cb.Authenticate(ctx, creds); err != nil {
			t.Fatal(err)
		}
	}
	if hits := cb.Hits(); hits != 2 {
		t.Fatalf("%d of 3 requests came from the cache, want 2 (all but the first)", hits)
	}

	// Revoked on instance a, refused on instance b.
	before := version(b)
	if _, err := a.Tokens().ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notification on b", func() bool { return version(b) > before })
	if _, err := cb.Authenticate(ctx, creds); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("revoked token on the other instance: %v, want ErrUnauthenticated", err)
	}
	// On the instance that made the change it is refused at once, with no wait.
	if _, err := a.Tokens().ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Authenticate(ctx, creds); err != nil {
		t.Fatalf("reactivated token on the same instance: %v", err)
	}
	if _, err := a.Tokens().ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Authenticate(ctx, creds); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("revoked token on the same instance: %v, want ErrUnauthenticated", err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSignOutReachesEveryInstance: a session authorized from the cache of
// another instance is refused there once it signs out, and a refreshed
// session's old token too; expired sessions are swept as new ones start.
func TestSignOutReachesEveryInstance(t *testing.T) {
	ctx := context.Background()
	a, _, pool, keys := testStore(t)
	b := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	listen(t, a, b)
	ca, cb := New(a), New(b)

	signIn := func() iam.Credentials {
		t.Helper()
		session, err := a.IAM().Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
		must(t, err)
		return iam.Credentials{Authorization: "Bearer " + session.Token}
	}
	cached := func(creds iam.Credentials) *core.Actor {
		t.Helper()
		var actor *core.Actor
		for range 2 {
			var err error
			actor, err = cb.Authenticate(ctx, creds)
			must(t, err)
		}
		return actor
	}
	for name, end := range map[string]func(*core.Actor) error{
		"logout":  func(actor *core.Actor) error { return a.IAM().Logout(ctx, actor) },
		"refresh": func(actor *core.Actor) error { _, err := a.IAM().RefreshSession(ctx, actor); return err },
	} {
		creds := signIn()
		hits := cb.Hits()
		actor := cached(creds)
		if cb.Hits() != hits+1 {
			t.Fatalf("%s: the second request did not come from the cache", name)
		}
		before := version(b)
		must(t, end(actor))
		waitFor(t, "the notification on b", func() bool { return version(b) > before })
		if _, err := cb.Authenticate(ctx, creds); !errors.Is(err, core.ErrUnauthenticated) {
			t.Fatalf("%s: the ended session on the other instance: %v, want ErrUnauthenticated", name, err)
		}
		if _, err := ca.Authenticate(ctx, creds); !errors.Is(err, core.ErrUnauthenticated) {
			t.Fatalf("%s: the ended session on the same instance: %v, want ErrUnauthenticated", name, err)
		}
	}

	// Expired sessions and stale sign-in counts are swept, without ending
	// anyone's live session (no notification for expired rows).
	live := signIn()
	cached(live)
	short := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4, SessionTTL: -time.Minute})
	for range 3 { // each sweeps the expired sessions made before it
		_, err := short.IAM().Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
		must(t, err)
	}
	_, err := pool.Exec(ctx, `INSERT INTO login_failures (subject, failures, window_start) VALUES ('email:old@example.com', 5, now() - interval '1 hour')`)
	must(t, err)
	signIn()
	count := func(query string) (n int) {
		must(t, pool.QueryRow(ctx, query).Scan(&n))
		return n
	}
	if n := count(`SELECT count(*) FROM sessions WHERE expires_at <= now()`); n != 0 {
		t.Errorf("%d expired sessions left after a sign-in, want them swept", n)
	}
	if n := count(`SELECT count(*) FROM login_failures WHERE window_start < now() - interval '15 minutes'`); n != 0 {
		t.Errorf("%d stale sign-in counts left after an attempt, want them swept", n)
	}
	settle(t, b, pool) // a notification of the sweep, which must not come, would have arrived
	hits := cb.Hits()
	cached(live)
	if cb.Hits() != hits+2 {
		t.Error("sweeping expired sessions emptied the cache; it must not")
	}
}

// TestPageSessionsFollowThePerson: a page's session, kept with where the
// person works, their profile and their organizations, is served from memory
// until one of those changes, through this instance or another; an access
// token is no page session.
func TestPageSessionsFollowThePerson(t *testing.T) {
	ctx := context.Background()
	a, owner, pool, keys := testStore(t)
	b := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	listen(t, a, b)
	cb := New(b)
	session, err := a.IAM().Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	must(t, err)
	signedIn := func() iam.PageSession {
		t.Helper()
		ps, err := cb.SignedIn(ctx, session.Token)
		must(t, err)
		return ps
	}
	first := signedIn()
	if first.Actor.OrgID != owner.OrgID || first.Profile.Email != "owner@example.com" || len(first.Organizations) != 1 {
		t.Fatalf("page session %+v, actor %+v: want the owner in their organization", first, first.Actor)
	}
	hits := cb.Hits()
	signedIn()
	if cb.Hits() != hits+1 {
		t.Fatal("the second request did not come from the cache")
	}

	// Each change, made on instance a, is what instance b serves next.
	project, err := a.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Shop", Key: "shop"})
	must(t, err)
	env := project.Environments[len(project.Environments)-1]
	for _, change := range []struct {
		name   string
		change func() error
		shows  func(iam.PageSession) bool
	}{
		{"where they work", func() error {
			_, err := a.IAM().SetUserContext(ctx, owner, core.UserContext{EnvID: env.ID})
			return err
		}, func(ps iam.PageSession) bool { return ps.Context.EnvID == env.ID && ps.Context.ProjectID == project.ID }},
		{"their profile", func() error {
			_, err := a.IAM().UpdateProfile(ctx, owner, iam.ProfileInput{Name: "Olga", Email: "olga@example.com"})
			return err
		}, func(ps iam.PageSession) bool {
			return ps.Profile.Email == "olga@example.com" && ps.Profile.Name == "Olga"
		}},
		{"their organization's name", func() error {
			_, err := a.IAM().UpdateOrganization(ctx, owner, iam.OrganizationInput{Name: "Renamed"})
			return err
		}, func(ps iam.PageSession) bool { return ps.Organizations[0].Name == "Renamed" }},
	} {
		if change.shows(signedIn()) {
			t.Fatalf("%s: shown before the change", change.name)
		}
		before := version(b)
		must(t, change.change())
		waitFor(t, "the notification on b", func() bool { return version(b) > before })
		if ps := signedIn(); !change.shows(ps) {
			t.Errorf("%s: the other instance serves %+v after the change", change.name, ps)
		}
	}

	tok, err := a.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "ci", Type: core.TokenPersonal})
	must(t, err)
	if _, err := cb.SignedIn(ctx, tok.Token); !errors.Is(err, core.ErrUnauthenticated) {
		t.Errorf("an access token as a page session: %v, want ErrUnauthenticated", err)
	}
}
