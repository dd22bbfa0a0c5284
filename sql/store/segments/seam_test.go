package segments

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
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// testStore is the segments seam (over the flags seam) on a fresh database
// with its owner signed in, for the tests that need the seam's internals;
// the others use sql/store/storetest, which this package's own tests cannot
// import (it imports this package).
func testStore(t testing.TB) (*Segments, *core.Actor, *pgxpool.Pool) {
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
	// without the webhooks, which sit above this package
	return New(c, flagstore.New(c)), a, pool
}
