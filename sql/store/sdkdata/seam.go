// Package sdkdata is the store's seam of what SDKs read and report: the
// payloads SDKs sync, evaluations, insights, end users and their
// properties, and the flag and segment documents. It stands on the core and
// on flagstore, since an SDK payload is built from flag and segment
// internals.
package sdkdata

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// SDK is the SDK data and end users seam over the core and the flags seam.
type SDK struct {
	core  *core.Core
	flags *flagstore.Flags
	segs  *segments.Segments
}

// New returns the seam over c, the flags seam f and the segments seam sg
// (built over the same c).
func New(c *core.Core, f *flagstore.Flags, sg *segments.Segments) *SDK {
	return &SDK{core: c, flags: f, segs: sg}
}
