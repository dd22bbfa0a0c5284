package flagstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestSmallTableSearchIsOneCachedStatement: in a table of at most
// flagstore's small-table bound of flags a search answers from one statement with a cached
// plan (FlagSearchItems), the same page and total as the statements a bigger
// table takes, for rare, broad and short patterns, both orders and past the
// last page; and the plan it keeps reads the trigram index.
func TestSmallTableSearchIsOneCachedStatement(t *testing.T) {
	_, a, pool, envID := scaleFixture(t, 2_000)
	ctx := context.Background()
	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	s := store.New(one, storetest.Keys(t), slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	twoStatements := store.New(pool, storetest.Keys(t), slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	twoStatements.Flags().PretendFlagTableIsBig()
	for _, name := range []string{"experiment 4", "experiment 1999", "EXPERIMENT", "payments", "flag-00001", "nothing like it", "xp", "4"} {
		for _, sort := range [][2]string{{"createdAt", ""}, {"key", ""}, {"name", "desc"}, {"updatedAt", "asc"}, {"lastEvaluatedAt", ""}} {
			for _, page := range []core.Page{{Size: 10}, {Index: 1, Size: 10}, {Index: 500, Size: 10}} {
				f := flagstore.FlagFilter{Name: name, SortBy: sort[0], Order: sort[1], Page: page}
				got, err := s.Flags().ListFlags(ctx, a, envID, f)
				if err != nil {
					t.Fatalf("%+v: %v", f, err)
				}
				want, err := twoStatements.Flags().ListFlags(ctx, a, envID, f)
				if err != nil {
					t.Fatalf("%+v: %v", f, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%+v: one statement found %d of %d, two found %d of %d", f, len(got.Items), got.TotalCount, len(want.Items), want.TotalCount)
				}
			}
		}
	}
	var name, statement string
	storetest.Must(t, one.QueryRow(ctx, `SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE '%% LIKE %%'`,
		pgx.QueryExecModeSimpleProtocol).Scan(&name, &statement))
	if !strings.HasPrefix(statement, "-- name: FlagSearchItems ") {
		t.Fatalf("the search kept a plan for %.60q, want FlagSearchItems", statement)
	}
	conn, err := one.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var org, env string
	storetest.Must(t, conn.QueryRow(ctx, `SELECT $1::text, $2::text`, a.OrgID, envID).Scan(&org, &env))
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(`EXPLAIN EXECUTE %s('%s', true, 'createdAt', '%s', false, '%%experiment 1999%%', '{}', NULL, 10001, 0, 10)`,
		pgx.Identifier{name}.Sanitize(), org, env), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var line string
		storetest.Must(t, rows.Scan(&line))
		lines = append(lines, line)
	}
	storetest.Must(t, rows.Err())
	if text := strings.Join(lines, "\n"); !strings.Contains(text, "Bitmap Index Scan on feature_flags_search") || strings.Contains(text, "Seq Scan on feature_flags") {
		t.Errorf("the generic plan of FlagSearchItems does not search the trigram index:\n%s", text)
	}
}
