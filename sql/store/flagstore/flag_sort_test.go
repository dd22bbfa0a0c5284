package flagstore_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestFlagListSorts pages a list in each of its orders, both ways, with and
// without a search and a filter of several tags, and compares it with the
// same flags sorted here: names (case-insensitive, ties by id), keys,
// creation, last change and last evaluation (flags never evaluated count as
// evaluated longest ago).
func TestFlagListSorts(t *testing.T) {
	s, a, pool, envID := scaleFixture(t, 24)
	ctx := context.Background()
	// Names of letters and digits only sort the same in every collation; two
	// differ by case alone. Every third flag was never evaluated.
	_, err := pool.Exec(ctx, `
		WITH f AS (SELECT id, key, row_number() OVER (ORDER BY key) AS i FROM feature_flags WHERE env_id = $1)
		UPDATE feature_flags t SET
			name = CASE WHEN f.i IN (3, 4) THEN (ARRAY['dup', 'DUP'])[f.i - 2] ELSE 'n' || lpad(((f.i * 7) % 24)::text, 2, '0') END,
			updated_at = now() - make_interval(mins => ((f.i * 5) % 24)::int),
			tags = CASE WHEN f.i % 2 = 0 THEN ARRAY['even', 'team'] ELSE ARRAY['team'] END
		FROM f WHERE t.id = f.id`, envID)
	storetest.Must(t, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO flag_evaluations (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at)
		SELECT id, 'on', 1, now() - interval '1 day', now() - make_interval(secs => (row_number() OVER (ORDER BY key) * 11 % 24)::int)
		FROM feature_flags WHERE env_id = $1 AND right(key, 1)::int % 3 <> 0`, envID)
	storetest.Must(t, err)
	type flag struct {
		id               uuid.UUID
		name, key        string
		created, updated time.Time
		evaluated        *time.Time
	}
	rows, err := pool.Query(ctx, `
		SELECT f.id, f.name, f.key, f.created_at, f.updated_at, (SELECT max(last_evaluated_at) FROM flag_evaluations WHERE flag_id = f.id)
		FROM feature_flags f WHERE env_id = $1`, envID)
	storetest.Must(t, err)
	var all []flag
	for rows.Next() {
		var f flag
		storetest.Must(t, rows.Scan(&f.id, &f.name, &f.key, &f.created, &f.updated, &f.evaluated))
		all = append(all, f)
	}
	storetest.Must(t, rows.Err())
	var evens []flag
	tagged, err := pool.Query(ctx, `SELECT id FROM feature_flags WHERE env_id = $1 AND tags @> ARRAY['even', 'team']`, envID)
	storetest.Must(t, err)
	evenIDs, err := pgx.CollectRows(tagged, pgx.RowTo[uuid.UUID])
	storetest.Must(t, err)
	for _, f := range all {
		if slices.Contains(evenIDs, f.id) {
			evens = append(evens, f)
		}
	}
	byTime := func(a, b *time.Time) int { // nil is longest ago
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		case b == nil:
			return 1
		}
		return a.Compare(*b)
	}
	compare := map[string]func(a, b flag) int{
		"name":            func(a, b flag) int { return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)) },
		"key":             func(a, b flag) int { return strings.Compare(a.key, b.key) },
		"createdAt":       func(a, b flag) int { return a.created.Compare(b.created) },
		"updatedAt":       func(a, b flag) int { return a.updated.Compare(b.updated) },
		"lastEvaluatedAt": func(a, b flag) int { return byTime(a.evaluated, b.evaluated) },
	}
	for _, k := range flagstore.SortKeys {
		for _, order := range []string{"asc", "desc"} {
			for _, tc := range []struct {
				name   string
				filter flagstore.FlagFilter
				flags  []flag
			}{
				{"list", flagstore.FlagFilter{}, all},
				{"search", flagstore.FlagFilter{Name: "flag-0"}, all},
				{"two tags", flagstore.FlagFilter{Tags: []string{"team", "even"}}, evens},
				{"search and two tags", flagstore.FlagFilter{Name: "flag-0", Tags: []string{"even", "team"}}, evens},
			} {
				want := slices.Clone(tc.flags)
				slices.SortFunc(want, func(a, b flag) int {
					c := compare[k.Key](a, b)
					if order == "desc" {
						c = -c
					}
					if c == 0 {
						c = bytes.Compare(a.id[:], b.id[:])
					}
					return c
				})
				var got []string
				for index := 0; ; index++ {
					f := tc.filter
					f.SortBy, f.Order, f.Page = k.Key, order, core.Page{Index: index, Size: 5}
					page, err := s.Flags().ListFlags(ctx, a, envID, f)
					storetest.Must(t, err)
					if page.TotalCount != int64(len(want)) {
						t.Fatalf("%s by %s %s: total %d, want %d", tc.name, k.Key, order, page.TotalCount, len(want))
					}
					for _, it := range page.Items {
						got = append(got, it.Key)
					}
					if len(page.Items) < 5 {
						break
					}
				}
				var wantKeys []string
				for _, f := range want {
					wantKeys = append(wantKeys, f.key)
				}
				if !slices.Equal(got, wantKeys) {
					t.Errorf("%s by %s %s:\n got %v\nwant %v", tc.name, k.Key, order, got, wantKeys)
				}
			}
		}
	}
	// The default is each key's own direction; an unknown key or direction
	// is refused.
	first, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{SortBy: "name", Page: core.Page{Size: 1}})
	storetest.Must(t, err)
	if first.Items[0].Name != "dup" && first.Items[0].Name != "DUP" {
		t.Errorf("by name: first %q, want A to Z", first.Items[0].Name)
	}
	for _, f := range []flagstore.FlagFilter{{SortBy: "evaluations"}, {SortBy: "name", Order: "up"}} {
		f.Page.Size = 5
		if _, err := s.Flags().ListFlags(ctx, a, envID, f); err == nil {
			t.Errorf("%+v: no error, want a validation error", f)
		}
	}
}
