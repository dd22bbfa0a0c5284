// Package webhooks is the store's seam of webhooks: their settings and
// scopes, the deliveries every flag, segment and change request change
// queues (in the change's own transaction, through the core's audit entry:
// see core.SetWebhooks), their signed requests and Slack bodies, and the
// delivery log. It stands on the core and the flags seam; neither imports
// it, so the core is handed its queueing when the store is assembled.
package webhooks

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Webhooks is the webhooks seam over the core and the flags seam.
type Webhooks struct {
	core  *core.Core
	flags *flagstore.Flags
}

// New returns the seam over c and the flags seam f (built over the same c).
func New(c *core.Core, f *flagstore.Flags) *Webhooks { return &Webhooks{core: c, flags: f} }
