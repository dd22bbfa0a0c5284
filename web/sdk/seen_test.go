package sdk_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// An environment's first SDK request of any kind is recorded once (the
// first-run guide's live check reads it): a data-sync by polling in one
// environment, an OFREP evaluation in another; an unknown secret records
// nothing.
func TestFirstSDKRequestIsRecorded(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	conn, err := pgx.Connect(t.Context(), in.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	seen := func(env *env) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM env_sdk_activity WHERE env_id = $1`, env.id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if seen(prod) != 0 || seen(dev) != 0 {
		t.Fatal("seen before any request")
	}
	in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", core.NewSecretValue(prod.id))
	if seen(prod) != 0 {
		t.Error("an unknown secret was recorded")
	}
	in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server)
	in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server)
	if seen(prod) != 1 || seen(dev) != 0 {
		t.Errorf("after a data-sync: prod %d, dev %d", seen(prod), seen(dev))
	}
	if res, b := in.request("POST", "/ofrep/v1/evaluate/flags", `{"context":{"targetingKey":"u1"}}`, "Authorization", dev.client); res.StatusCode != 200 {
		t.Fatalf("ofrep: %d %s", res.StatusCode, b)
	}
	if seen(dev) != 1 {
		t.Error("an OFREP evaluation was not recorded")
	}
}
