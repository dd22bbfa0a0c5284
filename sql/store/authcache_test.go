package store

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestAccessChangesReachEveryInstance runs two stores (two Bunting
// instances) on one database: repeated requests are authorized from memory,
// and a token revoked or a permission removed through one instance is refused
// by the other once the database's notification arrives.
func TestAccessChangesReachEveryInstance(t *testing.T) {
	ctx := context.Background()
	a, owner, pool := testStore(t)
	b := New(pool, a.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: 4})
	listen(t, a)
	listen(t, b)

	tok, err := a.CreateAccessToken(ctx, owner, AccessTokenInput{Name: "ci", Type: TokenPersonal})
	if err != nil {
		t.Fatal(err)
	}
	creds := Credentials{Authorization: tok.Token}
	for range 3 {
		if _, err := b.Authenticate(ctx, creds); err != nil {
			t.Fatal(err)
		}
	}
	if hits := b.AuthCacheHits(); hits != 2 {
		t.Fatalf("%d of 3 requests came from the cache, want 2 (all but the first)", hits)
	}

	// Revoked on instance a, refused on instance b.
	before := b.AccessGeneration()
	if _, err := a.ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	settle(t, b)
	if b.AccessGeneration() == before {
		t.Fatal("revoking a token sent b no notification")
	}
	if _, err := b.Authenticate(ctx, creds); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("revoked token on the other instance: %v, want ErrUnauthenticated", err)
	}
	// On the instance that made the change it is refused at once, with no wait.
	if _, err := a.ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, creds); err != nil {
		t.Fatalf("reactivated token on the same instance: %v", err)
	}
	if _, err := a.ToggleAccessToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, creds); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("revoked token on the same instance: %v, want ErrUnauthenticated", err)
	}
}

// TestSignOutReachesEveryInstance: a session authorized from the cache of
// another instance is refused there once it signs out, and a refreshed
// session's old token too; expired sessions are swept as new ones start.
func TestSignOutReachesEveryInstance(t *testing.T) {
	ctx := context.Background()
	a, _, pool := testStore(t)
	b := New(pool, a.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: 4})
	listen(t, a)
	listen(t, b)

	signIn := func() Credentials {
		t.Helper()
		session, err := a.Login(ctx, LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
		must(t, err)
		return Credentials{Authorization: "Bearer " + session.Token}
	}
	cached := func(creds Credentials) *Actor {
		t.Helper()
		var actor *Actor
		for range 2 {
			var err error
			actor, err = b.Authenticate(ctx, creds)
			must(t, err)
		}
		return actor
	}
	for name, end := range map[string]func(*Actor) error{
		"logout":  func(actor *Actor) error { return a.Logout(ctx, actor) },
		"refresh": func(actor *Actor) error { _, err := a.RefreshSession(ctx, actor); return err },
	} {
		creds := signIn()
		hits := b.AuthCacheHits()
		actor := cached(creds)
		if b.AuthCacheHits() != hits+1 {
			t.Fatalf("%s: the second request did not come from the cache", name)
		}
		before := b.AccessGeneration()
		must(t, end(actor))
		settle(t, b)
		if b.AccessGeneration() == before {
			t.Fatalf("%s: ending a session sent b no notification", name)
		}
		if _, err := b.Authenticate(ctx, creds); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("%s: the ended session on the other instance: %v, want ErrUnauthenticated", name, err)
		}
		if _, err := a.Authenticate(ctx, creds); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("%s: the ended session on the same instance: %v, want ErrUnauthenticated", name, err)
		}
	}

	// Expired sessions and stale sign-in counts are swept, without ending
	// anyone's live session (no notification for expired rows).
	live := signIn()
	cached(live)
	short := New(pool, a.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: 4, SessionTTL: -time.Minute})
	for range 3 { // each sweeps the expired sessions made before it
		_, err := short.Login(ctx, LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
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
	settle(t, b) // a notification of the sweep, which must not come, would have arrived
	hits := b.AuthCacheHits()
	cached(live)
	if b.AuthCacheHits() != hits+2 {
		t.Error("sweeping expired sessions emptied the cache; it must not")
	}
}
