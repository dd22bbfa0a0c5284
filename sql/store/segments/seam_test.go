package segments

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/seamtest"
)

// testStore is the segments seam (over the flags seam) on a fresh database
// with its owner signed in, for the tests that need the seam's internals;
// the others use sql/store/storetest, which this package's own tests cannot
// import (it imports this package).
func testStore(t testing.TB) (*Segments, *core.Actor, *pgxpool.Pool) {
	c, _, a, pool := seamtest.Owner(t)
	// without the webhooks, which sit above this package
	return New(c, flagstore.New(c)), a, pool
}
