package sdk_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestWritesLimitedPerSecret: with a secret allowed 5 new end users a
// minute and 10 evaluations a second (bursts of 20), a burst of 50 new
// users' evaluations through one client secret stores 5 end users and 20
// evaluations, answers 200 all the same, and counts the rest as dropped;
// another client secret of the same environment keeps its own allowance,
// and users already kept never count.
func TestWritesLimitedPerSecret(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	m := metrics.New()
	limits := sdk.DefaultLimits
	limits.EndUsersPerSecret, limits.EvaluationsPerSecret = 5, 10
	in := newInstanceWith(t, dbURL, sdk.Options{Limits: limits, Metrics: m}, slog.New(slog.DiscardHandler))
	prod, _ := in.project("web")
	fx := seed(prod)
	on := variationID(fx.flags["ft-bool"], "true")
	ctx := context.Background()
	second, err := in.store.Projects().CreateSecret(ctx, prod.owner, prod.id, core.SecretInput{Name: "Second", Type: core.SecretClient})
	must(t, err)

	db, err := pgx.Connect(ctx, in.dbURL)
	must(t, err)
	defer db.Close(ctx)
	stored := func() (users, evaluations int) {
		t.Helper()
		must(t, db.QueryRow(ctx, `SELECT count(*) FROM end_users WHERE env_id = $1`, prod.id).Scan(&users))
		must(t, db.QueryRow(ctx, `SELECT coalesce(sum(e.count), 0) FROM flag_evaluations e JOIN feature_flags f ON f.id = e.flag_id
			WHERE f.env_id = $1`, prod.id).Scan(&evaluations))
		return users, evaluations
	}
	dropped := func(what string) int {
		t.Helper()
		families, err := m.Registry().Gather()
		must(t, err)
		for _, f := range families {
			if f.GetName() != "bunting_sdk_writes_dropped_total" {
				continue
			}
			for _, c := range f.GetMetric() {
				if l := c.GetLabel(); len(l) == 1 && l[0].GetValue() == what {
					return int(c.GetCounter().GetValue())
				}
			}
		}
		t.Fatalf("no bunting_sdk_writes_dropped_total{what=%q}", what)
		return 0
	}

	sendReports(t, in, prod.client, [][]byte{report("ft-bool", on, 50, func(i int) string { return fmt.Sprintf("burst-%d", i) })}, 1)
	sendReports(t, in, second.Value, [][]byte{report("ft-bool", on, 3, func(i int) string { return fmt.Sprintf("other-%d", i) })}, 1)
	must(t, in.endUsers.Flush(ctx))
	// The first secret: 5 of 50 users, 20 of 50 evaluations; the second: all 3 and 3.
	if users, evaluations := stored(); users != 5+3 || evaluations != 20+3 {
		t.Fatalf("%d end users and %d evaluations stored, want 8 and 23", users, evaluations)
	}
	if d := dropped("end_users"); d != 45 {
		t.Errorf("%d end users counted as dropped, want 45", d)
	}
	if d := dropped("evaluations"); d != 30 {
		t.Errorf("%d evaluations counted as dropped, want 30", d)
	}
	var others int
	must(t, db.QueryRow(ctx, `SELECT count(*) FROM end_users WHERE env_id = $1 AND key_id LIKE 'other-%'`, prod.id).Scan(&others))
	if others != 3 {
		t.Errorf("%d of the second secret's 3 users stored", others)
	}

	// The users kept come back through the exhausted secret: known, they
	// are not held back, and nothing more is dropped.
	rows, err := db.Query(ctx, `SELECT key_id FROM end_users WHERE env_id = $1 AND key_id LIKE 'burst-%'`, prod.id)
	must(t, err)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	must(t, err)
	res, _ := in.request("POST", "/api/public/sdk/client/latest-all?timestamp=0", `{"keyId":"`+keys[0]+`","name":"Back"}`,
		"Authorization", prod.client)
	if res.StatusCode != 200 {
		t.Fatalf("client latest-all through the exhausted secret: %d", res.StatusCode)
	}
	must(t, in.endUsers.Flush(ctx))
	var name string
	must(t, db.QueryRow(ctx, `SELECT name FROM end_users WHERE env_id = $1 AND key_id = $2`, prod.id, keys[0]).Scan(&name))
	if users, _ := stored(); users != 8 || name != "Back" || dropped("end_users") != 45 {
		t.Errorf("a known user through the exhausted secret: %d end users, name %q, %d dropped; want 8, Back, 45", users, name, dropped("end_users"))
	}
	// A new one through the exhausted secret answers as usual and is dropped.
	res, _ = in.request("POST", "/api/public/sdk/client/latest-all?timestamp=0", `{"keyId":"late"}`, "Authorization", prod.client)
	if res.StatusCode != 200 {
		t.Fatalf("client latest-all of a new user through the exhausted secret: %d", res.StatusCode)
	}
	must(t, in.endUsers.Flush(ctx))
	if users, _ := stored(); users != 8 || dropped("end_users") != 46 {
		t.Errorf("a new user through the exhausted secret: %d end users, %d dropped; want 8 and 46", users, dropped("end_users"))
	}
}
