package flagstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// seedFlags inserts n flags with realistic targeting into an environment in
// one statement, then refreshes the planner's statistics.
func seedFlags(t testing.TB, pool *pgxpool.Pool, envID, creator uuid.UUID, n int) {
	t.Helper()
	ctx := context.Background()
	if err := seed.InsertFlags(ctx, pool, seed.Flags{EnvID: envID, Creator: creator, To: n}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE feature_flags`); err != nil {
		t.Fatal(err)
	}
}

// scaleFixture is an environment holding many flags.
func scaleFixture(t testing.TB, n int) (*store.Store, *core.Actor, *pgxpool.Pool, uuid.UUID) {
	t.Helper()
	s, a, pool := storetest.New(t)
	p, err := s.Projects().CreateProject(context.Background(), a, core.ProjectInput{Name: "Big", Key: "big"})
	if err != nil {
		t.Fatal(err)
	}
	envID := p.Environments[0].ID
	seedFlags(t, pool, envID, a.UserID, n)
	return s, a, pool, envID
}

// TestFlagQueriesAreIndexBacked proves that with 100,000 flags in one
// environment, reading by key, listing and searching by part of a name (both
// statements of a list: the environment with the count, and the page with
// what it shows of each flag) are planned on indexes: no sequential scan
// anywhere. Of the list's orders only the last evaluation's sorts the
// environment's flags (it is another table's): not among these.
func TestFlagQueriesAreIndexBacked(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 flags")
	}
	_, a, pool, envID := scaleFixture(t, 100_000)
	noTags := []string{}
	rows, _ := pool.Query(context.Background(), `SELECT id FROM feature_flags WHERE env_id = $1 ORDER BY key LIMIT 10`, envID)
	pageIDs, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"get by key", db.GetFlag, []any{envID, "flag-0042424"}},
		{"get by key with its names", db.GetFlagInOrganization, []any{a.OrgID, envID, "flag-0042424"}},
		{"list newest first", db.FlagListByCreated, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, 0, 10, a.OrgID, envID}},
		{"list by key", db.FlagListByKey, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, 0, 10, a.OrgID, envID}},
		{"list page 500", db.FlagListByCreated, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, 5000, 10, a.OrgID, envID}},
		{"list by tag", db.FlagListByCreated, []any{false, []string{"team-7"}, nil, flagstore.MaxExactFlagCount + 1, 0, 10, a.OrgID, envID}},
		{"search newest first", db.FlagSearch, []any{"createdAt", envID, false, "%experiment 4242%", noTags, nil, flagstore.MaxExactFlagCount + 1, true}},
		{"search by key", db.FlagSearch, []any{"key", envID, false, "%0042%", noTags, nil, flagstore.MaxExactFlagCount + 1, false}},
		{"search by last evaluation", db.FlagSearch, []any{"lastEvaluatedAt", envID, false, "%0042%", noTags, nil, flagstore.MaxExactFlagCount + 1, true}},
		{"a broad search's page by key", db.FlagSearchPage, []any{"key", envID, false, "%flag%", noTags, nil, false, 0, 10}},
		{"a broad search's page newest first", db.FlagSearchPage, []any{"createdAt", envID, false, "%flag%", noTags, nil, true, 0, 10}},
		{"list by name", db.FlagListSorted, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, "name", false, 0, 10, a.OrgID, envID}},
		{"list by name, Z to A", db.FlagListSorted, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, "name", true, 0, 10, a.OrgID, envID}},
		{"list by last change", db.FlagListSorted, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, "updatedAt", true, 0, 10, a.OrgID, envID}},
		{"list oldest first", db.FlagListSorted, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, "createdAt", false, 0, 10, a.OrgID, envID}},
		{"list by key, Z to A", db.FlagListSorted, []any{false, noTags, nil, flagstore.MaxExactFlagCount + 1, "key", true, 0, 10, a.OrgID, envID}},
		{"a page's items", db.FlagListItems, []any{pageIDs, envID, a.OrgID}},
		{"count by tag", db.CountFlags, []any{envID, false, []string{"team-7"}, nil}},
	} {
		var raw []byte
		if err := pool.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+q.sql, q.args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		text := string(raw)
		if strings.Contains(text, `"Seq Scan"`) || !strings.Contains(text, "Index") {
			t.Errorf("%s is not index-backed:\n%s", q.name, text)
		}
	}
}

// TestFlagListCountsUpToALimit pages a list longer than MaxExactFlagCount:
// its total is marked an estimate (at least that many), while a search
// with fewer matches is counted exactly, and each takes two statements.
func TestFlagListCountsUpToALimit(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 10,050 flags")
	}
	s, a, _, envID := scaleFixture(t, flagstore.MaxExactFlagCount+50)
	ctx := context.Background()
	for _, tc := range []struct {
		filter   flagstore.FlagFilter
		total    int64
		estimate bool
	}{
		{flagstore.FlagFilter{Page: core.Page{Size: 10}}, flagstore.MaxExactFlagCount, true},
		{flagstore.FlagFilter{Page: core.Page{Index: 1004, Size: 10}}, flagstore.MaxExactFlagCount, true},
		{flagstore.FlagFilter{Name: "experiment 1000", Page: core.Page{Size: 10}}, 11, false}, // 1000 and 10000-10009
		{flagstore.FlagFilter{Tags: []string{"team-7"}, Page: core.Page{Size: 10}}, 503, false},
	} {
		page, err := s.Flags().ListFlags(ctx, a, envID, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalCount != tc.total || page.TotalCountIsEstimate != tc.estimate {
			t.Errorf("%+v: total %d (estimate %v), want %d (%v)", tc.filter, page.TotalCount, page.TotalCountIsEstimate, tc.total, tc.estimate)
		}
		if len(page.Items) != 10 && tc.filter.Page.Index < 1000 {
			t.Errorf("%+v: %d items, want 10", tc.filter, len(page.Items))
		}
	}
	// A search matching more than a list counts pages among all its
	// matches: every flag here is an "experiment", so its pages are the
	// list's, in either order.
	for _, sortBy := range []string{"createdAt", "key"} {
		for _, index := range []int{0, 1003} {
			all, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{SortBy: sortBy, Page: core.Page{Index: index, Size: 10}})
			storetest.Must(t, err)
			found, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Name: "Experiment", SortBy: sortBy, Page: core.Page{Index: index, Size: 10}})
			storetest.Must(t, err)
			if !found.TotalCountIsEstimate || found.TotalCount != flagstore.MaxExactFlagCount || len(found.Items) != 10 {
				t.Errorf("broad search by %s, page %d: total %d (estimate %v), %d items", sortBy, index, found.TotalCount, found.TotalCountIsEstimate, len(found.Items))
			}
			for i := range min(len(all.Items), len(found.Items)) {
				if found.Items[i].ID != all.Items[i].ID {
					t.Errorf("broad search by %s, page %d, item %d: got %s, want %s", sortBy, index, i, found.Items[i].Key, all.Items[i].Key)
				}
			}
		}
	}
	// The last page past the count still answers the flags there are.
	page, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{SortBy: "key", Page: core.Page{Index: 1004, Size: 10}})
	if err != nil || len(page.Items) != 10 || page.Items[9].Key != seed.FlagKey(flagstore.MaxExactFlagCount+50) {
		t.Errorf("last page: %v, %d items", err, len(page.Items))
	}
}

// TestSearchesArePlannedWithTheirPattern guards searchPlans: after many
// executions of the cached statements, a rare search still answers from the
// trigram index. A search's own statement is never cached (it runs unnamed),
// so PostgreSQL never holds a generic plan for it.
func TestSearchesArePlannedWithTheirPattern(t *testing.T) {
	_, a, pool, envID := scaleFixture(t, 20_000)
	ctx := context.Background()
	// One connection, so what it has prepared is everything the store ran.
	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	s := store.New(one, storetest.Keys(t), slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4})
	for i := range 12 {
		page, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Name: fmt.Sprintf("experiment %d", 1000+i), Page: core.Page{Size: 10}})
		if err != nil || page.TotalCount == 0 {
			t.Fatalf("search %d: %v, %d found", i, err, page.TotalCount)
		}
		if _, err := s.Flags().GetFlag(ctx, a, envID, fmt.Sprintf("flag-%07d", 1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	var searches, reads int
	storetest.Must(t, one.QueryRow(ctx, `SELECT count(*) FILTER (WHERE statement LIKE '%% LIKE %%'),
		count(*) FILTER (WHERE statement LIKE '%%GetFlagInOrganization%%') FROM pg_prepared_statements`,
		pgx.QueryExecModeSimpleProtocol).Scan(&searches, &reads)) // this query itself must not be prepared
	if searches != 0 {
		t.Errorf("%d search statements are prepared and cached; each search must be planned with its pattern", searches)
	}
	if reads != 1 {
		t.Errorf("the flag read is prepared %d times, want once: ordinary statements reuse their plan", reads)
	}
}

// BenchmarkFlags100k measures the store's flag reads over 100,000 flags in one
// environment, with permission checks:
//
//	go test -run xxx -bench Flags100k -benchtime 2000x ./sql/store/
func BenchmarkFlags100k(b *testing.B) {
	s, a, _, envID := scaleFixture(b, 100_000)
	ctx := context.Background()
	b.Run("GetByKey", func(b *testing.B) {
		for i := range b.N {
			if _, err := s.Flags().GetFlag(ctx, a, envID, "flag-"+pad7(1+i%100_000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ListFirstPage", func(b *testing.B) {
		for range b.N {
			if _, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Page: core.Page{Size: 10}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SearchPartOfName", func(b *testing.B) {
		for i := range b.N {
			if _, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Name: "experiment " + pad7(1 + i%9000)[3:], Page: core.Page{Size: 10}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, sortBy := range []string{"name", "updatedAt", "lastEvaluatedAt"} {
		b.Run("ListBy_"+sortBy, func(b *testing.B) {
			for range b.N {
				if _, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{SortBy: sortBy, Page: core.Page{Size: 20}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("SearchByKeySorted", func(b *testing.B) {
		for range b.N {
			if _, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Name: "payments", SortBy: "key", Page: core.Page{Size: 10}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func pad7(i int) string { return fmt.Sprintf("%07d", i) }
