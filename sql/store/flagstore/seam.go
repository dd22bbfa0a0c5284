// Package flagstore is the store's seam of flags, segments and their
// governance: flags and their changes, drafts, schedules, comparison and
// copying, segments, triggers, approvals and change requests, history, and
// webhooks (whose deliveries every flag and segment change queues through
// the core's audit entry, see core.SetWebhooks). It stands on the core and
// on no other seam.
package flagstore

import (
	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Flags is the flags, segments and governance seam over the core.
type Flags struct {
	core *core.Core

	// flagTable is the size of feature_flags, by which a search picks its
	// statements (flag_search.go).
	flagTable flagTableSize

	// listed keeps what lists show of each flag's stored JSON, by flag and
	// revision (listedFlag).
	listed *lru.Cache[[2]uuid.UUID, listedParts]
}

// New returns the seam over c.
func New(c *core.Core) *Flags {
	listed, err := lru.New[[2]uuid.UUID, listedParts](maxListedParts)
	if err != nil {
		panic(err) // only for a size below one
	}
	return &Flags{core: c, listed: listed}
}
