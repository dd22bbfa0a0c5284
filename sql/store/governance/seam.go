// Package governance is the store's seam of what governs flag changes from
// outside a single edit: triggers (a URL that turns a flag on or off) and
// the reviews inbox (the change requests waiting for a person's review).
// Change requests, schedules, approvals and history are still in flagstore,
// whose flag writes need them (see sql/README.md). It stands on the core and
// the flags seam; the flags seam does not import it.
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
