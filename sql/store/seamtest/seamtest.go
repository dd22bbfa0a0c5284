// Package seamtest is for the tests of the seams below sql/store that need
// an owner signed in (accesstokens, sso, segments): one core over a fresh
// database (sql/dbtest), the identity seam over it, and its owner signed
// in. The seams' own tests cannot use sql/store/storetest, which imports
// them through sql/store.
package seamtest

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
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Owner returns a core on a fresh database, the identity seam over it, the
// first account (owner@example.com) signed in, and the database's pool.
func Owner(t testing.TB) (*core.Core, *iam.IAM, *core.Actor, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("store-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	ids := iam.New(c)
	if _, err := ids.Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"}); err != nil {
		t.Fatal(err)
	}
	session, err := ids.Login(ctx, iam.LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ids.Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
	if err != nil {
		t.Fatal(err)
	}
	return c, ids, a, pool
}

// Must fails the test on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
