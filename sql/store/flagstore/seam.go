// Package flagstore is the store's seam of flags and segments and of what
// every write of them asks: flags and their changes, drafts, schedules,
// comparison and copying, segments, the approval rule, change requests and
// history. It stands on the core and on no other seam; the seams above it
// (governance, webhooks, flagsascode, sdkdata) write through its exported
// change paths, and its own audit entries queue webhook deliveries through
// the core's hooks (core.SetWebhooks), so it imports none of them.
package flagstore

import (
	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Flags is the flags and segments seam over the core.
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
