package flagstore

import (
	"context"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// A search by part of a name or key has two ways to its page.
//
// In a small table (at most smallFlagTable flags in every environment) it
// takes one statement with a cached plan, FlagSearchItems, which always
// reads the matches from the trigram index. In a table that small that plan
// costs about what the plan made for the pattern does, even for a pattern
// every flag matches (at 10,000 flags, "experiment": 135 ms against 126 ms).
// Planning this statement with its pattern would cost PostgreSQL 1.3-2 ms a
// search, its page's joins planned each time; two statements cost a round
// trip more and still plan the search (0.2 ms).
//
// In a bigger table a cached plan cannot know how many flags a pattern
// matches: the trigram index is the right way for a rare pattern and the
// wrong one for a broad or short one (at 100,000 flags, "experiment", which
// they all match, took 460 ms on the index against 80 ms scanning the
// environment), so there the search keeps its statement planned with its
// pattern (FlagSearch, searchPlans) and reads its page with FlagListItems.
// So does a pattern with no three letters or digits in a row, from which
// the trigram index can take nothing and would be read whole.

// smallFlagTable is the most flags, in every environment, for which a search
// takes FlagSearchItems: as many as a list counts.
const smallFlagTable = MaxExactFlagCount

// flagTableSize holds the planner's estimate of feature_flags' rows, read
// again once a minute (FlagTableRows, a catalog read), so it follows the
// table as ANALYZE and autovacuum count it.
type flagTableSize struct {
	rows atomic.Int64 // -1: not analyzed yet
	read atomic.Int64 // when, in Unix nanoseconds; 0: never
}

// small tells whether feature_flags is small enough for FlagSearchItems. A
// table not analyzed yet, or an error reading the catalog, counts as big:
// the search then takes the statements that are right at any size.
func (t *flagTableSize) small(ctx context.Context, q *db.Queries) bool {
	if read := t.read.Load(); read == 0 || time.Since(time.Unix(0, read)) > time.Minute {
		rows, err := q.FlagTableRows(ctx)
		if err != nil {
			rows = -1
		}
		t.rows.Store(rows)
		t.read.Store(time.Now().UnixNano())
	}
	rows := t.rows.Load()
	return rows >= 0 && rows <= smallFlagTable
}

// searchPage answers a search's page in one statement (FlagSearchItems),
// when it can: found is false when the table is big or the pattern short
// (above), when the page is empty past the first one (the count then needs
// FlagSearch), or when the search matched more flags than a list counts
// (the page then needs FlagSearchPage); the caller then takes flagPage's
// two statements.
func (s *Flags) searchPage(ctx context.Context, orgID, envID uuid.UUID, f FlagFilter) (env db.FlagListByCreatedRow, rows []db.FlagListItemsRow, found bool, err error) {
	if !hasTrigram(f.Name) || !s.flagTable.small(ctx, s.core.Q) {
		return env, nil, false, nil
	}
	page, err := s.core.Q.FlagSearchItems(ctx, db.FlagSearchItemsParams{OrganizationID: orgID, EnvID: envID, IsArchived: f.IsArchived,
		Pattern: "%" + core.EscapeLike(strings.ToLower(f.Name)) + "%", Tags: f.Tags, IsEnabled: f.IsEnabled, SortBy: f.SortBy, Descending: f.descending,
		CountLimit: MaxExactFlagCount + 1, PageOffset: f.Page.Offset(), PageSize: f.Page.Limit()})
	if err != nil || len(page) == 0 && f.Page.Offset() > 0 || len(page) > 0 && page[0].Total > MaxExactFlagCount {
		return env, nil, false, err
	}
	rows = make([]db.FlagListItemsRow, len(page))
	for i, r := range page {
		rows[i] = listItemOf(r)
	}
	if len(rows) > 0 {
		// An empty first page has a total of 0; flagPage names the environment.
		env.Total, env.ProjectKey, env.EnvKey = page[0].Total, rows[0].ProjectKey, rows[0].EnvKey
	}
	return env, rows, true, nil
}

// hasTrigram tells whether a search text holds three letters or digits in a
// row, from which pg_trgm takes at least one trigram to look up.
func hasTrigram(text string) bool {
	run := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if run++; run == 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// listItemOf is a row of FlagSearchItems as one of FlagListItems.
func listItemOf(r db.FlagSearchItemsRow) db.FlagListItemsRow {
	return db.FlagListItemsRow{ID: r.ID, Name: r.Name, Key: r.Key, Description: r.Description, VariationType: r.VariationType,
		Variations: r.Variations, IsEnabled: r.IsEnabled, IsArchived: r.IsArchived, Tags: r.Tags, Revision: r.Revision,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CreatorID: r.CreatorID, DisabledVariationID: r.DisabledVariationID,
		TargetedVariations: r.TargetedVariations, Fallthrough: r.Fallthrough, RuleNames: r.RuleNames, RuleVariations: r.RuleVariations, ProjectKey: r.ProjectKey,
		EnvKey: r.EnvKey, Changed: r.Changed, ChangedAt: r.ChangedAt, ChangeComment: r.ChangeComment, ChangedBy: r.ChangedBy,
		CreatorFound: r.CreatorFound, CreatorName: r.CreatorName, CreatorEmail: r.CreatorEmail, ChangerFound: r.ChangerFound,
		ChangerName: r.ChangerName, ChangerEmail: r.ChangerEmail, Evaluated: r.Evaluated, LastEvaluatedAt: r.LastEvaluatedAt,
		Evaluations: r.Evaluations}
}
