package sdkdata_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestEndUserSearchMatchesAnyPart: with 100,000 end users in an
// environment, a search finds those whose key or name contains the text,
// in any case ("002" finds user-0020), takes % and _ literally, pages
// within its bound, and is planned on the trigram indexes rather than a
// scan of the environment's users.
func TestEndUserSearchMatchesAnyPart(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 end users")
	}
	t.Parallel()
	s, a, pool := storetest.New(t)
	ctx := context.Background()
	p, err := s.Projects().CreateProject(ctx, a, core.ProjectInput{Name: "Big", Key: "big"})
	if err != nil {
		t.Fatal(err)
	}
	envID := p.Environments[0].ID
	// user-0000000 … user-0099999, named "Person N"; one with a % in its key.
	if _, err := pool.Exec(ctx, `INSERT INTO end_users (env_id, key_id, name, created_at, updated_at)
		SELECT $1, 'user-' || lpad(i::text, 7, '0'), 'Person ' || i, now(), now() - i * interval '1 second'
		FROM generate_series(0, 99999) i`, envID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO end_users (env_id, key_id, name, created_at, updated_at)
		VALUES ($1, 'promo-50%-off', 'Sale', now(), now() - interval '1 day')`, envID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE end_users`); err != nil {
		t.Fatal(err)
	}

	keys := func(text string, size int) []string {
		t.Helper()
		page, err := s.SDK().ListEndUsers(ctx, a, envID, sdkdata.EndUserFilter{SearchText: text, PageSize: size})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range page.Items {
			out = append(out, u.KeyID)
		}
		return out
	}
	for _, tc := range []struct {
		text string
		want string
	}{
		{"0042424", "user-0042424"},                 // the end of a key
		{"ERSON 4242", "user-0004242,user-0042420"}, // inside a name, any case, most recently seen first
		{"50%", "promo-50%-off"},                    // % is a character, not a wildcard
		{"r_00", ""},                                // and so is _
		{"user-0099999 ", "user-0099999"},           // surrounding space is ignored
		{"nobody", ""},                              // no match
		{"-00000", "user-0000000,user-0000001"},     // first page of many: the bound holds
	} {
		if got := strings.Join(keys(tc.text, 2), ","); got != tc.want {
			t.Errorf("search %q found %q, want %q", tc.text, got, tc.want)
		}
	}
	if got := keys("002", 100); len(got) == 0 || !contains(got, "user-0000020") {
		t.Errorf("search 002 does not find user-0000020 (found %d)", len(got))
	}

	// A selective search is planned on the trigram indexes, even for a
	// name ANALYZE happened to keep in its histogram (which made the planner
	// expect a hundredth of the users to match, one run in a hundred).
	var sampled string
	if err := pool.QueryRow(ctx, `SELECT (histogram_bounds::text::text[])[50] FROM pg_stats WHERE tablename = 'end_users_name_trgm'`).
		Scan(&sampled); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"%0042424%", "%erson 4242%", "%" + strings.TrimPrefix(sampled, "p") + "%"} {
		var plan []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+db.EndUsersBefore, envID, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
			"ffffffff-ffff-ffff-ffff-ffffffffffff", pattern, 26).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if text := string(plan); strings.Contains(text, `"Seq Scan"`) || !strings.Contains(text, "_trgm") {
			t.Errorf("a search for %s is not planned on the trigram indexes:\n%s", pattern, text)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
