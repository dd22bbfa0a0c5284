package flagstore

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// UpdateFlagDescription changes a flag's description and returns the flag's
// revision: the new one, or the current one when nothing changed.
func (s *Flags) UpdateFlagDescription(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in DescriptionInput) (uuid.UUID, error) {
	if in.Description == nil {
		return uuid.Nil, core.Invalid("description_is_required")
	}
	f, err := s.ChangeFlag(ctx, a, envID, key, in.Change, access.UpdateFlagDescription, func(f *Flag) error {
		f.Description = *in.Description
		return nil
	})
	return f.Revision, err
}

// ToggleFlag turns a flag on or off.
func (s *Flags) ToggleFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, on bool, ch Change) (Flag, error) {
	return s.serve(ctx, a, envID, key, ServingChange{IsEnabled: &on, Change: ch})
}

// serve is ChangeServing's flag, for the API's routes, which have no
// change request to make: where changes need approval they are refused.
func (s *Flags) serve(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in ServingChange) (Flag, error) {
	out, err := s.ChangeServing(ctx, a, envID, key, in)
	return out.Changed, err
}

// ArchiveFlag archives a flag: SDKs no longer find it, and it can be deleted.
func (s *Flags) ArchiveFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ch Change) (Flag, error) {
	return s.ChangeFlag(ctx, a, envID, key, ch, access.ArchiveFlag, func(f *Flag) error {
		f.IsArchived = true
		return nil
	})
}

// RestoreFlag brings an archived flag back.
func (s *Flags) RestoreFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ch Change) (Flag, error) {
	return s.ChangeFlag(ctx, a, envID, key, ch, access.RestoreFlag, func(f *Flag) error {
		f.IsArchived = false
		return nil
	})
}

// ErrFlagNotArchived refuses deleting a flag that is still in use.
var ErrFlagNotArchived = &core.RuleError{Code: "CannotDeleteUnarchivedFeatureFlag"}

// DeleteFlag removes an archived flag for good.
func (s *Flags) DeleteFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ch Change) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	var v core.Validator
	ch.Check(&v, env)
	if err := v.Err(); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: envID, Key: key})
		if err != nil {
			return err
		}
		before, err := FlagFrom(row)
		if err != nil {
			return err
		}
		if err := mayDeleteFlag(a, env, before); err != nil {
			return err
		}
		if err := pendingNewFlag(ctx, q, env, before); err != nil {
			return err
		}
		if err := approvalRequired(env, &before, nil); err != nil {
			return err
		}
		if ch.Revision != nil && *ch.Revision != before.Revision {
			return core.ErrConflict
		}
		if _, err := q.DeleteFlag(ctx, before.ID); err != nil {
			return err
		}
		return s.RecordFlag(ctx, q, a, env.OrganizationID, envID, core.OpRemove, &before, nil, ch.Comment)
	})
}

// mayDeleteFlag checks that a person may delete f, and that it is archived.
func mayDeleteFlag(a *core.Actor, env core.EnvRow, f Flag) error {
	if err := a.Require(access.DeleteFlag, EnvFlagRN(env, f.Key, f.Tags)); err != nil {
		return err
	}
	if !f.IsArchived {
		return ErrFlagNotArchived
	}
	return nil
}

// FlagNameInput renames a flag.
type FlagNameInput struct {
	Name string `json:"name"`
	Change
}

// RenameFlag changes a flag's name.
func (s *Flags) RenameFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in FlagNameInput) (Flag, error) {
	return s.ChangeFlag(ctx, a, envID, key, in.Change, access.UpdateFlagName, func(f *Flag) error {
		f.Name = strings.TrimSpace(in.Name)
		return nil
	})
}

// SetFlagTags replaces a flag's tags.
func (s *Flags) SetFlagTags(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in TagsInput) (Flag, error) {
	if in.Tags == nil {
		return Flag{}, core.Invalid("tags_is_required")
	}
	return s.ChangeFlag(ctx, a, envID, key, in.Change, access.UpdateFlagTags, func(f *Flag) error {
		f.Tags = core.OrEmpty(*in.Tags)
		return nil
	})
}

// VariationsInput replaces a flag's variations (and, when given, its type).
type VariationsInput struct {
	VariationType string      `json:"variationType"`
	Variations    []Variation `json:"variations"`
	Change
}

// SetFlagVariations replaces a flag's variations. Targeting must still name
// only variations that exist, so remove a variation from it first.
func (s *Flags) SetFlagVariations(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in VariationsInput) (Flag, error) {
	if in.Variations == nil {
		return Flag{}, core.Invalid("variations_is_required")
	}
	return s.serve(ctx, a, envID, key, ServingChange{VariationType: in.VariationType, Variations: in.Variations, Change: in.Change})
}

// OffVariationInput chooses what a flag serves when it is off: FeatBit's
// body {offVariationId, revision, comment}.
type OffVariationInput struct {
	OffVariationID string `json:"offVariationId"`
	Change
}

// SetFlagOffVariation chooses what a flag serves when it is off.
func (s *Flags) SetFlagOffVariation(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in OffVariationInput) (Flag, error) {
	if in.OffVariationID == "" {
		return Flag{}, core.Invalid("offVariationId_is_required")
	}
	return s.serve(ctx, a, envID, key, ServingChange{OffVariationID: &in.OffVariationID, Change: in.Change})
}

// TargetingInput replaces a flag's targeting: FeatBit's body {revision,
// targeting, comment}. The targeting replaces the flag's whole; a list left
// out becomes empty.
type TargetingInput struct {
	Targeting *FlagTargeting `json:"targeting"`
	Change
}

// SetFlagTargeting replaces a flag's individual targets, rules and default
// rule; each part that changes needs its own action.
func (s *Flags) SetFlagTargeting(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in TargetingInput) (Flag, error) {
	t := in.Targeting
	if t == nil {
		return Flag{}, core.Invalid("targeting_is_required")
	}
	return s.serve(ctx, a, envID, key, ServingChange{Targeting: t, Change: in.Change})
}

// setTargeting replaces a flag's targeting, as the targeting route and a
// change request's targeting do.
func setTargeting(f *Flag, t FlagTargeting) {
	f.TargetUsers, f.Rules, f.Fallthrough = t.TargetUsers, t.Rules, t.Fallthrough
	if f.TargetUsers == nil {
		f.TargetUsers = []TargetUser{}
	}
	if f.Rules == nil {
		f.Rules = []FlagRule{}
	}
	f.ExptIncludeAllTargets = t.ExptIncludeAllTargets == nil || *t.ExptIncludeAllTargets
}

// flagWritable are the members a flag patch may write; identity, key,
// revision and timestamps are read-only ("test" may still read them).
var flagWritable = []string{"name", "description", "variationType", "variations", "targetUsers", "rules", "isEnabled",
	"disabledVariationId", "fallthrough", "exptIncludeAllTargets", "tags", "isArchived"}

// PatchFlag applies an RFC 6902 JSON Patch to a flag, whole or not at all,
// with the same checks as every other change.
func (s *Flags) PatchFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ops json.RawMessage) (Flag, error) {
	f, err := s.ChangeFlag(ctx, a, envID, key, Change{Comment: "Updated via patch"}, access.UpdateFlagTargetingRules, func(f *Flag) error {
		var patched Flag
		if err := ApplyPatch(f, ops, flagWritable, &patched); err != nil {
			return err
		}
		patched.ID, patched.EnvID, patched.Key, patched.Revision = f.ID, f.EnvID, f.Key, f.Revision
		patched.CreatedAt, patched.UpdatedAt, patched.CreatorID, patched.UpdatorID = f.CreatedAt, f.UpdatedAt, f.CreatorID, f.UpdatorID
		patched.Tags = core.OrEmpty(patched.Tags)
		*f = patched
		return nil
	})
	return f, AsPatchError(err)
}

// CloneFlagInput names the copy of a flag.
type CloneFlagInput struct {
	Name        string   `json:"name"`
	Key         string   `json:"key"`
	Description *string  `json:"description"`
	Tags        []string `json:"tags"`
	Change
	// NewFlagRequest is the change request the copy comes in with where
	// the environment's changes need approval.
	NewFlagRequest
}

// CloneFlag copies a flag (variations, targeting, state) under a new name
// and key: CloneFlagRequesting's flag.
func (s *Flags) CloneFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in CloneFlagInput) (Flag, error) {
	out, err := s.CloneFlagRequesting(ctx, a, envID, key, in)
	return out.Flag, err
}

// CloneFlagRequesting clones a flag; where the environment's changes need
// approval the copy comes in pending, with a change request of in's reason
// and reviewers (insertFlag), which the answer names.
func (s *Flags) CloneFlagRequesting(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in CloneFlagInput) (CreatedFlag, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return CreatedFlag{}, err
	}
	row, err := s.core.Q.GetFlag(ctx, db.GetFlagParams{EnvID: envID, Key: key})
	if err != nil {
		return CreatedFlag{}, core.Translate(err)
	}
	src, err := FlagFrom(row)
	if err != nil {
		return CreatedFlag{}, err
	}
	if err := mayCloneFlag(a, env, src); err != nil {
		return CreatedFlag{}, err
	}
	f := src.Clone()
	f.ID, f.Revision, f.CreatorID, f.UpdatorID = uuid.New(), uuid.New(), core.ActorID(a), core.ActorID(a)
	f.Name, f.Key, f.IsArchived = strings.TrimSpace(in.Name), in.Key, false
	if in.Description != nil {
		f.Description = *in.Description
	}
	if in.Tags != nil {
		f.Tags = in.Tags
	}
	in.Change = commentOr(env, in.Change, in.NewFlagRequest)
	var v core.Validator
	refs := CheckFlag(&v, &f)
	in.Change.Check(&v, env)
	if err := v.Err(); err != nil {
		return CreatedFlag{}, err
	}
	var out CreatedFlag
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if err := s.CheckSegmentRefs(ctx, q, env, f.Rules, refs); err != nil {
			return err
		}
		out.Flag, out.PendingApproval, err = s.InsertFlag(ctx, q, a, env, f, refs, in.Comment, in.NewFlagRequest)
		return err
	})
	return out, err
}

// mayCloneFlag checks that a person may copy src: clone it, and create the
// copy in its environment.
func mayCloneFlag(a *core.Actor, env core.EnvRow, src Flag) error {
	if err := a.Require(access.CloneFlag, EnvFlagRN(env, src.Key, src.Tags)); err != nil {
		return err
	}
	return MayCreateFlag(a, env)
}

// FlagTags lists every tag used by an environment's flags.
func (s *Flags) FlagTags(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]string, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	tags, err := s.core.Q.ListFlagTags(ctx, envID)
	return tags, core.Translate(err)
}

// FlagKeyUsed tells whether a flag key is taken in an environment.
func (s *Flags) FlagKeyUsed(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (bool, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return false, err
	}
	used, err := s.core.Q.FlagKeyUsed(ctx, db.FlagKeyUsedParams{EnvID: envID, Key: key})
	return used, core.Translate(err)
}
