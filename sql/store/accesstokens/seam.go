// Package accesstokens is the store's access-token seam: the organization's API
// credentials (Personal tokens acting as their creator, Service tokens on
// their own statements), who may create, edit, turn off and delete each, and
// minting one for scripts. It stands on the core and on the identity seam
// (iam), which signs a token in.
package accesstokens

import (
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Tokens is the access-token seam over the core.
type Tokens struct {
	core *core.Core
	iam  *iam.IAM
}

// New returns the seam over c, signing tokens' creators in through i.
func New(c *core.Core, i *iam.IAM) *Tokens { return &Tokens{core: c, iam: i} }
