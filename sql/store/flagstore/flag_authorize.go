package flagstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// What creating a flag or segment requires whatever its input says (see
// AuthorizeIAM).

// AuthorizeFlagCreation checks what creating a flag in an environment
// requires before its key and tags are known.
func (s *Flags) AuthorizeFlagCreation(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return MayCreateFlag(a, env)
}

// AuthorizeSegmentCreation checks what creating a segment in an
// environment requires before its key and tags are known.
func (s *Flags) AuthorizeSegmentCreation(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return MayCreateSegment(a, env)
}
