// Package segments is the store's seam of segments: creating, reading,
// listing and changing them, their keys unique wherever they are visible,
// and what a change of one may do to the flags that name it. What a flag's
// writes ask of a segment (the segments its rules may name, who may create
// one, the segment types and scopes, the description and tags inputs both
// change) is in flagstore, below it, so flags never import this package.
// It stands on the core and the flags seam; neither imports it.
package segments

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Segments is the segments seam over the core and the flags seam.
type Segments struct {
	core  *core.Core
	flags *flagstore.Flags
}

// New returns the seam over c and the flags seam f (built over the same c).
func New(c *core.Core, f *flagstore.Flags) *Segments { return &Segments{core: c, flags: f} }
