package flagstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestFlagSearchNamesItsEnvironment: a search reads the environment's keys
// with its page, or apart when it has nothing to show, so whether it finds
// anything or not it answers only for an environment of the caller's
// organization.
func TestFlagSearchNamesItsEnvironment(t *testing.T) {
	s, a, _, envID := scaleFixture(t, 50)
	ctx := context.Background()
	stranger := *a
	stranger.OrgID = uuid.New()
	for _, tc := range []struct {
		name  string
		actor *core.Actor
		total int64
		err   error
	}{
		{"experiment 4", a, 11, nil}, // 4 and 40-49
		{"nothing like it", a, 0, nil},
		{"experiment 4", &stranger, 0, core.ErrNotFound},
		{"nothing like it", &stranger, 0, core.ErrNotFound},
	} {
		page, err := s.Flags().ListFlags(ctx, tc.actor, envID, flagstore.FlagFilter{Name: tc.name, Page: core.Page{Size: 1}})
		if !errors.Is(err, tc.err) {
			t.Errorf("%q in organization %s: got %v, want %v", tc.name, tc.actor.OrgID, err, tc.err)
			continue
		}
		if err == nil && (page.TotalCount != tc.total || int64(len(page.Items)) != min(tc.total, 1)) {
			t.Errorf("%q: total %d with %d items, want %d", tc.name, page.TotalCount, len(page.Items), tc.total)
		}
	}
}
