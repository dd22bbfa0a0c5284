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
	for _, s := range []*Store{a, b} {
		watch, stop := context.WithCancel(ctx)
		go s.WatchAccessChanges(watch)
		t.Cleanup(stop)
	}
	waitFor(t, "both listeners", func() bool { return a.AccessGeneration() > 0 && b.AccessGeneration() > 0 })

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
	waitFor(t, "the notification on b", func() bool { return b.AccessGeneration() > before })
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

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
