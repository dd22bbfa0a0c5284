// Package flagsascode is the store's seam of flags as code: an
// environment's or a project's flags and segments exported as one JSON or
// YAML document, and such a document imported back, checked whole before
// any of it is written, creating and changing flags and segments with the
// rights (and the approvals) of doing so by hand. It stands on the core and
// the flags seam, whose operations it uses; nothing below imports it.
package flagsascode

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// FlagsAsCode is the flags as code seam over the core and the flags seam.
type FlagsAsCode struct {
	core  *core.Core
	flags *flagstore.Flags
	segs  *segments.Segments
}

// New returns the seam over c, the flags seam f and the segments seam sg
// (built over the same c).
func New(c *core.Core, f *flagstore.Flags, sg *segments.Segments) *FlagsAsCode {
	return &FlagsAsCode{core: c, flags: f, segs: sg}
}
