package flagstore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// History operations of changes that were proposed first and applied later,
// FeatBit's names.
const (
	OpApplyFlagSchedule      = "ApplyFlagSchedule"
	OpApplyFlagChangeRequest = "ApplyFlagChangeRequest"
)

// Draft is a proposed change to one flag: Base is the flag as it was when
// the change was proposed, Target as the change would leave it. Applying it
// writes only the parts where the two differ.
type Draft struct {
	ID          uuid.UUID
	EnvID       uuid.UUID
	FlagID      uuid.UUID
	Base        Flag
	Target      Flag
	Comment     string
	CreatorID   uuid.UUID
	CreatorKind string
	CreatedAt   time.Time
	AppliedAt   *time.Time
}

// DraftInput proposes a change to a flag, in either of FeatBit's forms:
// TargetFlag is the flag as the change leaves it (members left out keep
// their current value), Targeting replaces the individual targets, rules
// and default rule as SetFlagTargeting does. Revision, when given, must be
// the flag's current one.
type DraftInput struct {
	TargetFlag json.RawMessage `json:"targetFlag"`
	Targeting  *FlagTargeting  `json:"targeting"`
	Change
}

// MaxOpenFlagChanges bounds a flag's proposed changes still to come
// (schedules and change requests), so neither the pending list nor the
// schedule worker's work grows without end.
const MaxOpenFlagChanges = 100

// ErrTooManyPendingChanges refuses a proposed change past MaxOpenFlagChanges.
var ErrTooManyPendingChanges = &core.RuleError{Code: "TooManyPendingChanges"}

// ErrDraftApplied refuses applying a draft a second time.
var ErrDraftApplied = &core.RuleError{Code: "FlagDraftIsApplied"}

// DraftConflictError says which parts of a flag a draft changes that were
// also changed by someone else since the draft was proposed. It is a
// conflict (409) where an API answers it.
type DraftConflictError struct {
	Parts []string
}

func (e *DraftConflictError) Error() string {
	return "the flag's " + strings.Join(e.Parts, ", ") + " changed since this change was proposed"
}

// Unwrap makes a draft conflict answer as ErrConflict.
func (e *DraftConflictError) Unwrap() error { return core.ErrConflict }

// flagPart is one part of a flag a draft changes as a whole.
type flagPart struct {
	name string
	get  func(*Flag) any
	set  func(dst, src *Flag)
}

// flagParts are the parts a draft compares and applies one by one.
var flagParts = []flagPart{
	{"on/off state", func(f *Flag) any { return f.IsEnabled }, func(d, s *Flag) { d.IsEnabled = s.IsEnabled }},
	{"variations", func(f *Flag) any { return []any{f.VariationType, f.Variations} },
		func(d, s *Flag) { d.VariationType, d.Variations = s.VariationType, s.Variations }},
	{"off variation", func(f *Flag) any { return f.DisabledVariationID }, func(d, s *Flag) { d.DisabledVariationID = s.DisabledVariationID }},
	{"individual targets", func(f *Flag) any { return f.TargetUsers }, func(d, s *Flag) { d.TargetUsers = s.TargetUsers }},
	{"rules", func(f *Flag) any { return f.Rules }, func(d, s *Flag) { d.Rules = s.Rules }},
	{"default rule", func(f *Flag) any { return []any{f.Fallthrough, f.ExptIncludeAllTargets} },
		func(d, s *Flag) { d.Fallthrough, d.ExptIncludeAllTargets = s.Fallthrough, s.ExptIncludeAllTargets }},
	{"name", func(f *Flag) any { return f.Name }, func(d, s *Flag) { d.Name = s.Name }},
	{"description", func(f *Flag) any { return f.Description }, func(d, s *Flag) { d.Description = s.Description }},
	{"tags", func(f *Flag) any { return f.Tags }, func(d, s *Flag) { d.Tags = s.Tags }},
	// Only a new flag's request (pendingFlag) changes it: draftTarget keeps
	// every other draft's as the flag has it.
	{"archived state", func(f *Flag) any { return f.IsArchived }, func(d, s *Flag) { d.IsArchived = s.IsArchived }},
}

// ChangedParts names the parts of a flag that differ between base and target.
func ChangedParts(base, target Flag) []string {
	var names []string
	for _, p := range flagParts {
		if !SameJSON(p.get(&base), p.get(&target)) {
			names = append(names, p.name)
		}
	}
	return names
}

// MergeDraft writes onto cur the parts target changes from base. A part
// that cur changed too since base, to something other than target, is a
// conflict, and then nothing is written.
func MergeDraft(cur *Flag, base, target Flag) error {
	var conflicts []string
	var apply []flagPart
	for _, p := range flagParts {
		proposed := p.get(&target)
		if SameJSON(p.get(&base), proposed) {
			continue
		}
		now := p.get(cur)
		switch {
		case SameJSON(now, proposed): // already so: nothing to write
		case SameJSON(now, p.get(&base)):
			apply = append(apply, p)
		default:
			conflicts = append(conflicts, p.name)
		}
	}
	if len(conflicts) > 0 {
		return &DraftConflictError{Parts: conflicts}
	}
	for _, p := range apply {
		p.set(cur, &target)
	}
	return nil
}

// draftTarget is the flag as in leaves cur, checked as any change: a
// target that changes nothing, or a flag archived, is refused.
func draftTarget(cur Flag, in DraftInput) (Flag, error) {
	target := cur.Clone()
	switch {
	case len(in.TargetFlag) > 0 && string(in.TargetFlag) != "null":
		into := cur.Clone()
		// At a cost bounded by its size, as the body it came in: a
		// target of a million empty rules would be a million rules.
		if err := jsonbody.Decode(in.TargetFlag, &into); err != nil {
			return Flag{}, core.Invalid("targetFlag_is_invalid")
		}
		// Only the parts a draft applies are taken; identity, key, revision
		// and archiving stay as they are.
		for _, p := range flagParts {
			p.set(&target, &into)
		}
		target.Tags, target.IsArchived = core.OrEmpty(target.Tags), cur.IsArchived
	case in.Targeting != nil:
		t := in.Targeting
		target.TargetUsers, target.Rules, target.Fallthrough = t.TargetUsers, t.Rules, t.Fallthrough
		if target.TargetUsers == nil {
			target.TargetUsers = []TargetUser{}
		}
		if target.Rules == nil {
			target.Rules = []FlagRule{}
		}
		target.ExptIncludeAllTargets = t.ExptIncludeAllTargets == nil || *t.ExptIncludeAllTargets
	default:
		return Flag{}, core.Invalid("targetFlag_is_required")
	}
	if cur.IsArchived {
		return Flag{}, ErrFlagIsArchived
	}
	if len(ChangedParts(cur, target)) == 0 {
		var v core.Validator
		v.At("targetFlag", "invalid", "targetFlag", "the target flag changes nothing: it is the flag as it is now")
		return Flag{}, v.Err()
	}
	return target, nil
}

// CreateDraft stores, in the caller's transaction q, a proposed change to
// the flag key of env, after the checks a change made now would pass: the
// revision (when given), the actions of every changed part for a (on the
// flag as it is and as it would be), the target flag's validity and the
// environment's comment rule. The flag itself is not changed.
func (s *Flags) CreateDraft(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, key string, in DraftInput) (Draft, error) {
	row, err := q.GetFlag(ctx, db.GetFlagParams{EnvID: env.Environment.ID, Key: key})
	if err != nil {
		return Draft{}, core.Translate(err)
	}
	base, err := FlagFrom(row)
	if err != nil {
		return Draft{}, err
	}
	if in.Revision != nil && *in.Revision != base.Revision {
		return Draft{}, core.ErrConflict
	}
	target, err := draftTarget(base, in)
	if err != nil {
		return Draft{}, err
	}
	return s.storeDraft(ctx, q, a, env, base, target, in.Change)
}

// storeDraft is CreateDraft's work once the flag (base) and the change's
// target are known: the checks a change made now would pass, then the draft
// stored with comment ch.Comment.
func (s *Flags) storeDraft(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, base, target Flag, ch Change) (Draft, error) {
	if err := RequireFlagActions(a, env, FlagChangeActions(base, target), base, target); err != nil {
		return Draft{}, err
	}
	open, err := q.CountOpenFlagChanges(ctx, base.ID)
	if err != nil {
		return Draft{}, err
	}
	if open >= MaxOpenFlagChanges {
		return Draft{}, ErrTooManyPendingChanges
	}
	var v core.Validator
	refs := CheckFlag(&v, &target)
	ch.Check(&v, env)
	if err := v.Err(); err != nil {
		return Draft{}, err
	}
	if err := s.CheckSegmentRefs(ctx, q, env, target.Rules, refs); err != nil {
		return Draft{}, err
	}
	baseJSON, err := json.Marshal(base)
	if err != nil {
		return Draft{}, err
	}
	targetJSON, err := json.Marshal(target)
	if err != nil {
		return Draft{}, err
	}
	d, err := q.CreateFlagDraft(ctx, db.CreateFlagDraftParams{EnvID: env.Environment.ID, FlagID: base.ID,
		Base: baseJSON, Target: targetJSON, Comment: strings.TrimSpace(ch.Comment),
		CreatorID: core.ActorID(a), CreatorKind: core.ActorKind(a)})
	if err != nil {
		return Draft{}, core.Translate(err)
	}
	return DraftFrom(d)
}

func DraftFrom(d db.FlagDraft) (Draft, error) {
	out := Draft{ID: d.ID, EnvID: d.EnvID, FlagID: d.FlagID, Comment: d.Comment, CreatorID: d.CreatorID,
		CreatorKind: d.CreatorKind, CreatedAt: d.CreatedAt.UTC(), AppliedAt: d.AppliedAt}
	if err := json.Unmarshal(d.Base, &out.Base); err != nil {
		return Draft{}, err
	}
	if err := json.Unmarshal(d.Target, &out.Target); err != nil {
		return Draft{}, err
	}
	return out, nil
}

// ChangeActions names the actions a change of a flag from base to target
// needs, so the pages offer only what the store would allow.
func ChangeActions(base, target Flag) []access.Action { return FlagChangeActions(base, target) }
