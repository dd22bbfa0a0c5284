package iam

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// testStore is the identity seam over a fresh database with its owner
// signed in, for the tests that need the seam's internals; the others use
// sql/store/storetest, which this package's own tests cannot import (it
// imports this package).
func testStore(t testing.TB) (*IAM, *core.Actor, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("store-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	s := New(core.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond}))
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
