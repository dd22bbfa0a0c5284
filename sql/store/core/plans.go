package core

import (
	"context"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bunting-flags/bunting/sql/db"
)

// searchPlans runs the statements that search by a pattern (LIKE) as unnamed
// statements, which PostgreSQL plans with the pattern in hand, and every
// other statement as a cached prepared one. A cached statement may switch to
// a generic plan after a few executions; for a search by part of a name that
// plan cannot know how rare the pattern is, ignores the trigram indexes and
// reads every row. Planning every statement instead would cost a few tenths
// of a millisecond of the database's CPU on each. A search's description
// (the types of its parameters and columns) is cached all the same, so it
// takes one round trip and reads binary results, as a cached statement does.
type searchPlans struct {
	db.DBTX
	searches sync.Map // statement → bool: does it search?
}

func (p *searchPlans) mode(sql string, args []any) []any {
	search, ok := p.searches.Load(sql)
	if !ok {
		search = strings.Contains(sql, " LIKE ") && !cachedSearch(sql) || orderedBy(sql)
		p.searches.Store(sql, search)
	}
	if search.(bool) {
		return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
	}
	return args
}

func (p *searchPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.DBTX.Query(ctx, sql, p.mode(sql, args)...)
}

func (p *searchPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.DBTX.QueryRow(ctx, sql, p.mode(sql, args)...)
}

func (p *searchPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.DBTX.Exec(ctx, sql, p.mode(sql, args)...)
}

// queries gives sqlc's queries over conn with search plans.
func Queries(conn db.DBTX) *db.Queries { return db.New(&searchPlans{DBTX: conn}) }

// cachedSearch tells searchPlans which statements search by a pattern and
// still keep a cached plan: FlagSearchItems, whose generic plan is the one
// every search it is given needs (searchPage).
func cachedSearch(sql string) bool {
	return strings.HasPrefix(sql, "-- name: FlagSearchItems ")
}

// orderedBy tells searchPlans which statements take their order as a
// parameter and are planned with it, as a search is with its pattern:
// FlagListSorted, whose generic plan would sort every flag of an environment
// where its planned one reads the index in that order (feature_flags_env_name,
// feature_flags_env_updated).
func orderedBy(sql string) bool {
	return strings.HasPrefix(sql, "-- name: FlagListSorted ")
}
