// Package flagcopy is the store's seam of comparing and copying flags
// between environments: a flag's settings side by side in two
// environments, the overview of a project's flags across them, copying a
// flag to another environment and copying chosen settings of one onto
// another. Every copy is written through the flags seam's change paths, so
// it is checked, approved and audited as a change by hand is. It stands on
// the core and the flags seam; neither imports it.
package flagcopy

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// FlagCopy is the comparing and copying seam over the core and the flags
// seam.
type FlagCopy struct {
	core  *core.Core
	flags *flagstore.Flags
}

// New returns the seam over c and the flags seam f (built over the same c).
func New(c *core.Core, f *flagstore.Flags) *FlagCopy { return &FlagCopy{core: c, flags: f} }
