// Package workplace is the store's seam of where a signed-in person works
// in the admin pages: the environment they work in, what they may do there
// and in their organization (Place), and what frames every page (Frame). A
// page loads both in one statement, besides its session, in the common
// case. It stands above flagstore (approvals, a flag's rights) and iam (the
// session's profile and organizations).
package workplace

import "github.com/bunting-flags/bunting/sql/store/core"

// Workplaces is the seam over the core.
type Workplaces struct{ core *core.Core }

// New returns the seam over c.
func New(c *core.Core) *Workplaces { return &Workplaces{core: c} }
