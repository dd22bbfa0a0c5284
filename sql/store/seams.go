// Package store is the one domain layer both surfaces stand on: input types
// and their validation, permission checks, transactions, audit entries, and
// the translation of database errors into domain errors. api/ and web/ only
// decode, call the store and encode. What every seam stands on is in
// sql/store/core, below it.
package store

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Store is the domain layer over one PostgreSQL database.
type Store struct {
	*core.Core
	*iam.IAM
	*flagstore.Flags
}

// New returns a Store over pool using keys derived from the server secret.
func New(pool *pgxpool.Pool, keys core.Keys, log *slog.Logger, opts core.Options) *Store {
	c := core.New(pool, keys, log, opts)
	f := flagstore.New(c)
	s := &Store{Core: c, IAM: iam.New(c), Flags: f}
	// Every flag and segment change is audited in the core, and its
	// webhook deliveries queued there, in the same transaction: the core
	// is below the webhooks, so it is handed them.
	c.SetWebhooks(flagstore.ChangeWebhookEvents, f.QueueWebhooks)
	return s
}
