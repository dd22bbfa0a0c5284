package accesstokens

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// What a token operation requires whatever its input says, for the API to
// refuse a caller before reading a body it would never act on (see the
// identity seam's authorize.go): each is the check the operation makes first.

// AuthorizeAccessTokenCreation checks what creating an access token of
// either type requires: managing tokens of that type. Which type is in the
// body; whoever may manage neither is refused whatever it says.
func (s *Tokens) AuthorizeAccessTokenCreation(a *core.Actor) error {
	if _, err := a.Org(); err != nil {
		return err
	}
	if mayManageToken(a, core.TokenPersonal) != nil && mayManageToken(a, core.TokenService) != nil {
		return core.ErrForbidden
	}
	return nil
}

// AuthorizeAccessTokenUpdate checks what renaming a token requires
// (UpdateAccessToken): editing it (AccessTokenAccess).
func (s *Tokens) AuthorizeAccessTokenUpdate(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	t, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return err
	}
	if !AccessTokenAccess(a, t).Edit {
		return core.ErrForbidden
	}
	return nil
}

// AuthorizeAccessTokenToggle checks what turning a token off, or on again,
// requires (ToggleAccessToken): which way is the token's status.
func (s *Tokens) AuthorizeAccessTokenToggle(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	t, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return err
	}
	may := AccessTokenAccess(a, t)
	if t.Status == core.TokenInactive && !may.Enable || t.Status != core.TokenInactive && !may.Disable {
		return core.ErrForbidden
	}
	return nil
}

// AuthorizeAccessTokenDeletion checks what deleting a token requires.
func (s *Tokens) AuthorizeAccessTokenDeletion(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	t, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return err
	}
	if !AccessTokenAccess(a, t).Delete {
		return core.ErrForbidden
	}
	return nil
}
