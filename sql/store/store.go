// Package store is the one domain layer both surfaces stand on: input types
// and their validation, permission checks, transactions, audit entries, and
// the translation of database errors into domain errors. api/ and web/ only
// decode, call the store and encode.
//
// The domain lives in packages along its seams, each holding the core:
// core (the actor, transactions, audit, errors, projects and environments),
// iam (identity and access), flagstore (flags, segments and governance) and
// sdkdata (SDK data and end users). Store embeds one of each, so a surface
// calls every operation on the one Store.
package store

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Store is the domain layer over one PostgreSQL database: every seam over
// one core. The core is embedded too, for its own operations (projects,
// environments, the change feed) and so that no method it shares with a
// seam is ambiguous.
type Store struct {
	*core.Core
	*iam.IAM
	*flagstore.Flags
	*sdkdata.SDK
}

// New returns a Store over pool using keys derived from the server secret.
func New(pool *pgxpool.Pool, keys core.Keys, log *slog.Logger, opts core.Options) *Store {
	c := core.New(pool, keys, log, opts)
	f := flagstore.New(c)
	// Every flag and segment change is audited in the core, and its
	// webhook deliveries queued there, in the same transaction: the core
	// is below the webhooks, so it is handed them.
	c.SetWebhooks(flagstore.ChangeWebhookEvents, f.QueueWebhooks)
	return &Store{Core: c, IAM: iam.New(c), Flags: f, SDK: sdkdata.New(c, f)}
}
