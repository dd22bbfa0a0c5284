package store

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
)

// testStore is a Store over a fresh database with its owner signed in.
func testStore(t testing.TB) (*Store, *Actor, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, ConfigurePool)
	keys, err := DeriveKeys(strings.Repeat("store-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	s := New(pool, keys, slog.New(slog.DiscardHandler), Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	if _, err := s.Bootstrap(ctx, Owner{Email: "owner@example.com", Password: "owner-password"}); err != nil {
		t.Fatal(err)
	}
	session, err := s.Login(ctx, LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Authenticate(ctx, Credentials{Authorization: "Bearer " + session.Token})
	if err != nil {
		t.Fatal(err)
	}
	return s, a, pool
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
