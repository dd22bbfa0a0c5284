package accesstokens

import (
	"github.com/bunting-flags/bunting/sql/store/core"
)

// TokenRights tells what a person may do with access tokens of one type.
type TokenRights struct {
	// Create is creating one; a Service token also needs managing IAM, as
	// it is created with permissions.
	Create bool
	// SetPermissions is changing a Service token's permissions.
	SetPermissions bool
}

// AccessTokenRights answers what a person may do with tokens of type typ;
// AccessTokenAccess what they may do with one of them.
func AccessTokenRights(a *core.Actor, typ string) TokenRights {
	return TokenRights{Create: mayCreateToken(a, typ) == nil, SetPermissions: maySetTokenPermissions(a) == nil}
}
