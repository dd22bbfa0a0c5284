// Package governance is the store's seam of what governs flag changes
// beyond a single edit: reviewing, applying and deleting change requests
// (and the approver pickers), the choice the pages make between a change at
// once and a request for one, scheduled changes and their settling with
// their requests, triggers (a URL that turns a flag on or off) and the
// reviews inbox. The records it works on (a change request's type, making
// one, loading one, the approval rule every flag write asks) are in
// flagstore, below it, because a flag's creation and every flag write need
// them. It stands on the core and the flags seam; neither imports it.
package governance

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Governance is the governance seam over the core and the flags seam.
type Governance struct {
	core  *core.Core
	flags *flagstore.Flags
}

// New returns the seam over c and the flags seam f (built over the same c).
func New(c *core.Core, f *flagstore.Flags) *Governance { return &Governance{core: c, flags: f} }
