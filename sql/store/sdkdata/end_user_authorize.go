package sdkdata

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// What an end-user operation requires whatever its input says (see
// AuthorizeIAM).

// AuthorizeEndUserReads checks what reading an environment's end users
// requires (searching, listing, looking up and downloading them,
// evaluating a flag for one): reading the environment.
func (s *SDK) AuthorizeEndUserReads(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	_, err := s.core.ReadableEnv(ctx, a, envID)
	return err
}

// AuthorizeEndUserChanges checks what changing an environment's end users
// and their properties requires (upserting, uploading a file, setting a
// property): see writableEnv.
func (s *SDK) AuthorizeEndUserChanges(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	_, err := s.writableEnv(ctx, a, envID)
	return err
}
