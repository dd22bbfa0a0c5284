package flagstore

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// The change pipeline (core.RunChange) as the flags seam takes it: a flag's
// change becomes one of its change requests where one is needed.
type (
	Proposal          = core.Proposal
	Outcome[T any]    = core.Outcome[T, FlagChangeRequest]
	flagPipelineStage = core.Subject[Flag, FlagChangeRequest]
)

// NeedsRequest marks an ApprovalError as the change pipeline's refusal that
// a change request can lift (a change to what a flag serves).
func (e *ApprovalError) NeedsRequest() {}

// ChangeFlag is the one way a flag changes: through the pipeline, in
// a transaction of its own, under a row lock. edit is applied to a copy, the
// actions for what actually changed are checked on the flag before and after
// (so a change cannot move a flag out of the caller's reach), an archived
// flag is refused anything but its restoring, the environment's approval
// setting is asked, the result is validated whole, and it is stored under a
// new revision with its history. A change that changes nothing records
// nothing. action is checked when nothing changed.
func (s *Flags) ChangeFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ch Change, action access.Action, edit func(*Flag) error) (Flag, error) {
	out, err := s.submit(ctx, a, envID, key, ch, action, edit, nil)
	return out.Changed, err
}

// submit runs a change of flag key of envID through the pipeline in a
// transaction of its own; p makes it a change request where one is needed.
func (s *Flags) submit(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, ch Change, action access.Action,
	edit func(*Flag) error, p *Proposal) (Outcome[Flag], error) {
	orgID, err := a.Org()
	if err != nil {
		return Outcome[Flag]{}, err
	}
	sub := &flagSubject{s: s, a: a, ch: ch, action: action, lock: func(ctx context.Context, q *db.Queries) (db.FeatureFlag, core.EnvRow, error) {
		row, err := q.LockFlagInOrganization(ctx, db.LockFlagInOrganizationParams{OrganizationID: orgID, EnvID: envID, Key: key})
		if err != nil {
			return db.FeatureFlag{}, core.EnvRow{}, err
		}
		env := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: row.Environment, ProjectKey: row.ProjectKey, ProjectName: row.ProjectName,
			OrganizationID: row.OrganizationID, OrganizationKey: row.OrganizationKey, WorkspaceID: row.WorkspaceID}}
		return row.FeatureFlag, env, nil
	}}
	var out Outcome[Flag]
	err = s.core.InTx(ctx, func(q *db.Queries) (err error) {
		out, err = core.RunChange(ctx, q, flagPipelineStage(sub), edit, p)
		return err
	})
	return out, err
}

// ChangeFlagIn is ChangeFlag in the caller's transaction q, for a change
// that commits with something else (a trigger's run count, a schedule's
// status); op names the history entry's operation ("" for what the change
// did: Update, Archive, Restore). A change an op names is a draft's, which
// was approved, where it had to be, when governance applied the draft.
func (s *Flags) ChangeFlagIn(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, key string, ch Change, action access.Action, op string, edit func(*Flag) error) (Flag, error) {
	sub := &flagSubject{s: s, a: a, ch: ch, action: action, op: op, lock: func(ctx context.Context, q *db.Queries) (db.FeatureFlag, core.EnvRow, error) {
		row, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: env.Environment.ID, Key: key})
		return row, env, err
	}}
	out, err := core.RunChange(ctx, q, flagPipelineStage(sub), edit, nil)
	return out.Changed, err
}

// ServingChange is a change to what a flag serves, as the API's routes
// (toggle, targeting, off variation, variations) and the flag's page make
// it: each part given replaces the flag's. Where the environment's changes
// need approval it is refused, or, with a Proposal, becomes a change
// request: the store decides which, on the environment as it is when the
// flag is locked.
type ServingChange struct {
	Targeting      *FlagTargeting
	IsEnabled      *bool
	OffVariationID *string
	VariationType  string
	Variations     []Variation
	// DraftTargeting, when given, drafts the targeting from the flag as it
	// is under the lock, in the pipeline's draft stage: a page's editor,
	// whose form keeps what it does not show of the stored rules (their
	// dispatch keys, whether they are in experiments), reads the form
	// against the flag there rather than against one read earlier.
	DraftTargeting func(Flag) (FlagTargeting, error)
	Change
	Proposal *Proposal
}

// edit applies the change's parts to a flag, as a change request's do.
func (in ServingChange) edit(f *Flag) error {
	if in.DraftTargeting != nil {
		t, err := in.DraftTargeting(*f)
		if err != nil {
			return err
		}
		in.Targeting = &t
	}
	FlagChangeRequestInput{Targeting: in.Targeting, IsEnabled: in.IsEnabled, OffVariationID: in.OffVariationID,
		VariationType: in.VariationType, Variations: in.Variations}.Edit(f)
	return nil
}

// action is the action a change of in's parts is checked for when it
// changes nothing.
func (in ServingChange) action() access.Action {
	switch {
	case in.IsEnabled != nil:
		return access.ToggleFlag
	case in.OffVariationID != nil:
		return access.UpdateFlagOffVariation
	case in.Variations != nil:
		return access.UpdateFlagVariations
	}
	return access.UpdateFlagTargetingRules
}

// ChangeServing makes a change to what a flag serves through the pipeline:
// at once, or, where the environment's changes need approval and in has a
// Proposal, as a change request (Outcome.Request).
func (s *Flags) ChangeServing(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in ServingChange) (Outcome[Flag], error) {
	if in.Targeting == nil && in.DraftTargeting == nil && in.IsEnabled == nil && in.OffVariationID == nil && in.Variations == nil {
		return Outcome[Flag]{}, core.Invalid("targeting_is_required")
	}
	return s.submit(ctx, a, envID, key, in.Change, in.action(), in.edit, in.Proposal)
}

// flagSubject is a flag as the pipeline changes it.
type flagSubject struct {
	s      *Flags
	a      *core.Actor
	ch     Change
	action access.Action
	// op names a draft's change (applied by governance), approved where it had to be.
	op   string
	lock func(ctx context.Context, q *db.Queries) (db.FeatureFlag, core.EnvRow, error)
	// refs are the segments the flag's rules name, from Validate.
	refs []uuid.UUID
}

func (f *flagSubject) Lock(ctx context.Context, q *db.Queries) (Flag, core.EnvRow, error) {
	row, env, err := f.lock(ctx, q)
	if err != nil {
		return Flag{}, core.EnvRow{}, err
	}
	before, err := FlagFrom(row)
	if err != nil {
		return Flag{}, core.EnvRow{}, err
	}
	if f.ch.Revision != nil && *f.ch.Revision != before.Revision {
		return Flag{}, core.EnvRow{}, core.ErrConflict
	}
	return before, env, nil
}

func (f *flagSubject) Clone(fl Flag) Flag { return fl.Clone() }

func (f *flagSubject) Check(ctx context.Context, q *db.Queries, env core.EnvRow, before Flag, after *Flag) error {
	actions := FlagChangeActions(before, *after)
	if len(actions) == 0 {
		actions = []access.Action{f.action}
	}
	if err := RequireFlagActions(f.a, env, actions, before, *after); err != nil {
		return err
	}
	if before.IsArchived {
		// Archived is read-only: the one change left is restoring it as it
		// was, or, for a new flag's approved change request (op names a
		// draft's change), as the request brings it in (pendingFlag).
		restored := before.Clone()
		restored.IsArchived = false
		if after.IsArchived || (f.op == "" && !SameFlag(restored, *after)) {
			return ErrFlagIsArchived
		}
	}
	return nil
}

func (f *flagSubject) Approval(ctx context.Context, q *db.Queries, env core.EnvRow, before, after Flag) error {
	if f.op != "" {
		return nil
	}
	if before.IsArchived && !after.IsArchived {
		if err := pendingNewFlag(ctx, q, env, before); err != nil {
			return err
		}
	}
	return approvalRequired(env, &before, &after)
}

// Request makes a change to what a flag serves a change request; archiving,
// restoring or deleting one is no change request's.
func (f *flagSubject) Request(ctx context.Context, q *db.Queries, env core.EnvRow, before, after Flag, p Proposal, need error) (FlagChangeRequest, error) {
	var ae *ApprovalError
	if !errors.As(need, &ae) || ae.Of != ApprovalFlagChange {
		return FlagChangeRequest{}, need
	}
	return f.s.RequestChange(ctx, q, f.a, env, before, after, f.ch.Revision, p)
}

func (f *flagSubject) Validate(ctx context.Context, q *db.Queries, env core.EnvRow, before Flag, after *Flag) error {
	var v core.Validator
	f.refs = CheckFlag(&v, after)
	f.ch.Check(&v, env)
	return v.Err()
}

func (f *flagSubject) Same(before, after Flag) bool { return SameFlag(before, after) }

func (f *flagSubject) Apply(ctx context.Context, q *db.Queries, env core.EnvRow, before, after Flag) (Flag, error) {
	if err := f.s.CheckSegmentRefs(ctx, q, env, after.Rules, f.refs); err != nil {
		return Flag{}, err
	}
	after.Revision, after.UpdatorID = uuid.New(), core.ActorID(f.a)
	out, err := StoreFlag(ctx, q, after, before.Revision, f.refs)
	if err != nil {
		return Flag{}, err
	}
	op := f.op
	switch {
	case op != "":
	case after.IsArchived && !before.IsArchived:
		op = core.OpArchive
	case !after.IsArchived && before.IsArchived:
		op = core.OpRestore
	default:
		op = core.OpUpdate
	}
	if err := f.s.RecordFlag(ctx, q, f.a, env.OrganizationID, env.Environment.ID, op, &before, &out, f.ch.Comment); err != nil {
		return Flag{}, err
	}
	return out, nil
}

// RequestChange stores, in q, the change of a flag locked as before to
// after as a change request of p: its reason (the draft's comment) is
// required, its reviewers must be enough and may approve, and the change is
// checked as if made now (storeDraft). revision, when given, is the one the
// change was made from. The flag itself is not changed.
func (s *Flags) RequestChange(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, before, after Flag,
	revision *uuid.UUID, p Proposal) (FlagChangeRequest, error) {
	var v core.Validator
	v.Required("reason", p.Reason, core.MaxCommentLen)
	if err := v.Err(); err != nil {
		return FlagChangeRequest{}, err
	}
	if err := CheckReviewers(ctx, q, a, env, p.Reviewers); err != nil {
		return FlagChangeRequest{}, err
	}
	if before.IsArchived {
		return FlagChangeRequest{}, ErrFlagIsArchived
	}
	if !ServesDifferently(before, after) {
		return FlagChangeRequest{}, ErrChangeRequestChangesNothing
	}
	d, err := s.storeDraft(ctx, q, a, env, before, after, Change{Comment: strings.TrimSpace(p.Reason), Revision: revision})
	if err != nil {
		return FlagChangeRequest{}, err
	}
	return s.AddChangeRequest(ctx, q, a, env, d, p.Reason, p.Reviewers)
}
