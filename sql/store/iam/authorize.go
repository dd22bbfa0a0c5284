package iam

import (
	"github.com/bunting-flags/bunting/sql/store/core"
)

// What an operation requires whatever its input says, for the API to
// refuse a caller before reading a body it would never act on: reading and
// decoding a body costs memory, and a caller who may not make the request
// should cost nothing. Each is the very check the operations it stands for
// make first, not a rule of its own; the operations still make it.

// AuthorizeIAM checks what every identity and access management operation
// requires: the caller's organization, and CanManageIAM.
func (s *IAM) AuthorizeIAM(a *core.Actor) error {
	_, err := a.IAMOrg(&core.Validator{})
	return err
}
