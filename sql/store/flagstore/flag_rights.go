package flagstore

import (
	"context"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// What a person may do in an environment and to its flags and segments,
// answered with the checks the operations make (see the core's rights).

// EnvRights tells what a person may create in an environment, and what they
// may do to its flags.
type EnvRights struct {
	CreateFlag    bool
	CreateSegment bool

	a   *core.Actor
	env core.EnvRow
}

// Permits tells whether the person holds action on the flag, whatever the
// flag's state: a confirmation page offers its button on this, so that a
// change the state refuses (deleting a live flag) is explained when tried.
func (r FlagRights) Permits(action access.Action) bool { return r.permits(action) }

// FlagRights tells which of a flag's controls a person may use. An archived
// flag is read-only: only restoring and deleting it are offered.
type FlagRights struct {
	Toggle       bool
	OffVariation bool
	// Targeting is any of individual targets, rules and the default rule:
	// the editor saves whole, and the store checks only the parts that change.
	Targeting   bool
	Variations  bool
	Name        bool
	Description bool
	Tags        bool
	// Clone needs cloning the flag and creating flags in its environment.
	Clone   bool
	Archive bool
	Restore bool
	Delete  bool

	permits func(action access.Action) bool
}

// EnvRights answers what a person may do in an environment of their organization.
func (s *Flags) EnvRights(ctx context.Context, a *core.Actor, envID uuid.UUID) (EnvRights, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return EnvRights{}, err
	}
	return RightsIn(a, env), nil
}

// RightsIn is what a person may create in env and do to its flags, env being
// one they may open.
func RightsIn(a *core.Actor, env core.EnvRow) EnvRights {
	return EnvRights{CreateFlag: MayCreateFlag(a, env) == nil, CreateSegment: MayCreateSegment(a, env) == nil, a: a, env: env}
}

// Flag answers what the person may do to the flag with this key, tags and
// state (a list row has no more of it than that).
func (r EnvRights) Flag(key string, tags []string, archived bool) FlagRights {
	f := Flag{Key: key, Tags: tags, IsArchived: archived}
	may := func(action access.Action) bool {
		return RequireFlagActions(r.a, r.env, []access.Action{action}, f) == nil
	}
	change := func(action access.Action) bool { return !archived && may(action) }
	return FlagRights{
		Toggle: change(access.ToggleFlag), OffVariation: change(access.UpdateFlagOffVariation),
		Targeting:  change(access.UpdateFlagIndividualTargeting) || change(access.UpdateFlagTargetingRules) || change(access.UpdateFlagDefaultRule),
		Variations: change(access.UpdateFlagVariations), Name: change(access.UpdateFlagName), Description: change(access.UpdateFlagDescription),
		Tags: change(access.UpdateFlagTags), Clone: mayCloneFlag(r.a, r.env, f) == nil,
		Archive: change(access.ArchiveFlag), Restore: archived && may(access.RestoreFlag), Delete: mayDeleteFlag(r.a, r.env, f) == nil,
		permits: may,
	}
}

// SegmentRights tells which of a segment's controls a person may use: the
// actions allowed on it in every environment it is visible in, as its
// changes are checked. An archived segment is offered read-only, as an
// archived flag is, though the API still changes it.
type SegmentRights struct {
	// Targeting is either who is in the segment or its rules: the editor
	// saves whole, and the store checks only the parts that change.
	Targeting   bool
	Name        bool
	Description bool
	Tags        bool
	Archive     bool
	Restore     bool
	Delete      bool

	permits func(action access.Action) bool
}

// Permits tells whether the person holds action on the segment in every
// environment it is visible in, whatever its state, as FlagRights.Permits.
func (r SegmentRights) Permits(action access.Action) bool { return r.permits(action) }

// SegmentRights answers what a person may do to a segment.
func (s *Flags) SegmentRights(ctx context.Context, a *core.Actor, envID uuid.UUID, sg Segment) (SegmentRights, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return SegmentRights{}, err
	}
	envs, err := VisibleEnvs(ctx, s.core.Q, env, sg)
	if err != nil {
		return SegmentRights{}, err
	}
	may := func(action access.Action) bool { return RequireInEnvs(a, []access.Action{action}, envs, sg) == nil }
	change := func(action access.Action) bool { return !sg.IsArchived && may(action) }
	return SegmentRights{
		Targeting: change(access.UpdateSegmentTargetingUsers) || change(access.UpdateSegmentRules),
		Name:      change(access.UpdateSegmentName), Description: change(access.UpdateSegmentDescription), Tags: change(access.UpdateSegmentTags),
		Archive: change(access.ArchiveSegment), Restore: sg.IsArchived && may(access.RestoreSegment), Delete: may(access.DeleteSegment),
		permits: may,
	}, nil
}
