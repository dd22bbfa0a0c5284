package governance

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// A draft (a schedule's, a change request's) is applied here, when its
// time comes or its request is approved: through the flags seam's change
// pipeline (ChangeFlagIn), as the draft's author is now.

// draftApplication says how an applied draft is recorded and by whom.
type draftApplication struct {
	// Operation is the history entry's operation: OpApplyFlagSchedule,
	// OpApplyFlagChangeRequest.
	Operation string
	// Comment is the history entry's comment (at most MaxCommentLen
	// characters are kept).
	Comment string
	// By is who applies the draft; nil for the draft's author, with the
	// rights the author has now (a member who left, or a token revoked,
	// may apply nothing).
	By *core.Actor
}

// applyDraft applies draft draftID to its flag as the flag is now, in the
// caller's transaction q, through the same locked path as every flag change
// (changeFlagIn): row lock, new revision, the actions of every part it
// changes checked for app.By (or the author) at this moment, validation,
// history entry, and the change event SDKs and other instances receive
// after commit. A draft a change request holds applies only with the
// approvals that count now, and where the environment needs approval only
// such a draft applies (draftApproval). Only the parts the draft changes
// (base → target) are written; a part changed meanwhile by someone else
// fails the whole draft with a *DraftConflictError. A draft applies once: a
// second call returns flagstore.ErrDraftApplied.
//
// Call it inside a transaction that also records the outcome of whatever
// holds the draft (a schedule, a change request), for example:
//
//	err := s.InTx(ctx, func(q *db.Queries) error {
//		if _, err := s.applyDraft(ctx, q, draftID, DraftApplication{Operation: OpApplyFlagChangeRequest, Comment: c, By: a}); err != nil {
//			return err
//		}
//		return q.MarkChangeRequestApplied(ctx, id)
//	})
//
// Errors are returned untranslated, as the queries give them; InTx
// translates them. To record a failure in the same transaction, run it in a
// savepoint (pgx.BeginFunc on the transaction), as runSchedule does.
func (s *Governance) applyDraft(ctx context.Context, q *db.Queries, draftID uuid.UUID, app draftApplication) (flagstore.Flag, error) {
	row, err := q.LockFlagDraft(ctx, draftID)
	if err != nil {
		return flagstore.Flag{}, err
	}
	if row.AppliedAt != nil {
		return flagstore.Flag{}, flagstore.ErrDraftApplied
	}
	d, err := flagstore.DraftFrom(row)
	if err != nil {
		return flagstore.Flag{}, err
	}
	er, err := q.GetEnvironmentByID(ctx, d.EnvID)
	if err != nil {
		return flagstore.Flag{}, err
	}
	env := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow(er)}
	if err := s.draftApproval(ctx, q, env, draftID); err != nil {
		return flagstore.Flag{}, err
	}
	a := app.By
	if a == nil {
		if a, err = s.authorActor(ctx, q, env, d.CreatorID, d.CreatorKind); err != nil {
			return flagstore.Flag{}, err
		}
	}
	current, err := q.GetFlagByID(ctx, db.GetFlagByIDParams{EnvID: d.EnvID, ID: d.FlagID})
	if err != nil {
		return flagstore.Flag{}, err
	}
	action := access.UpdateFlagTargetingRules
	if acts := flagstore.FlagChangeActions(d.Base, d.Target); len(acts) > 0 {
		action = acts[0]
	}
	comment := app.Comment
	if r := []rune(comment); len(r) > core.MaxCommentLen {
		comment = string(r[:core.MaxCommentLen])
	}
	out, err := s.flags.ChangeFlagIn(ctx, q, a, env, current.Key, flagstore.Change{Comment: comment}, action, app.Operation, func(f *flagstore.Flag) error {
		return flagstore.MergeDraft(f, d.Base, d.Target)
	})
	if err != nil {
		return flagstore.Flag{}, err
	}
	return out, q.MarkFlagDraftApplied(ctx, draftID)
}

// authorActor is the author of a draft as they are now, in env's
// organization: a user who is still a member, with their current
// statements, or an access token that is still active and whose creator is
// still a member. Anyone else may do nothing: ErrForbidden.
func (s *Governance) authorActor(ctx context.Context, q *db.Queries, env core.EnvRow, id uuid.UUID, kind string) (*core.Actor, error) {
	a := &core.Actor{UserID: id, WorkspaceID: env.WorkspaceID, OrgID: env.OrganizationID}
	service := false
	if kind == "token" {
		t, err := q.GetAccessToken(ctx, db.GetAccessTokenParams{OrganizationID: env.OrganizationID, ID: id})
		if errors.Is(core.Translate(err), core.ErrNotFound) {
			return nil, core.ErrForbidden
		}
		if err != nil {
			return nil, err
		}
		if t.AccessToken.Status != "Active" {
			return nil, core.ErrForbidden
		}
		a.TokenID, a.UserID = id, t.AccessToken.CreatorID
		if service = t.AccessToken.Type == core.TokenService; service {
			if err := json.Unmarshal(t.AccessToken.Permissions, &a.Granted); err != nil {
				return nil, err
			}
		}
	}
	member, err := q.IsOrganizationUser(ctx, db.IsOrganizationUserParams{OrganizationID: env.OrganizationID, UserID: a.UserID})
	if err != nil {
		return nil, err
	}
	if !member {
		return nil, core.ErrForbidden
	}
	if !service {
		if a.Granted, err = s.core.MemberStatements(ctx, q, env.OrganizationID, a.UserID); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// draftApproval is applyDraft's check, at the moment a draft applies: a
// draft a change request holds applies only with the approvals that count
// now (flagstore.ErrChangeRequestNotApproved otherwise), and where env's changes need
// approval only such a draft applies, also one proposed before the
// environment began to need it (flagstore.ErrChangeRequestRequired otherwise).
func (s *Governance) draftApproval(ctx context.Context, q *db.Queries, env core.EnvRow, draftID uuid.UUID) error {
	id, err := q.GetDraftChangeRequestID(ctx, draftID)
	if errors.Is(err, pgx.ErrNoRows) {
		if flagstore.ApprovalsNeeded(env.Environment) > 0 {
			return flagstore.ErrChangeRequestRequired
		}
		return nil
	}
	if err != nil {
		return err
	}
	cr, err := s.flags.ChangeRequest(ctx, q, env.Environment.ID, id)
	if err != nil {
		return err
	}
	may, err := flagstore.Approvers(ctx, q, env)
	if err != nil {
		return err
	}
	if flagstore.ApprovalStatus(cr, may) != flagstore.ChangeRequestApproved {
		return flagstore.ErrChangeRequestNotApproved
	}
	return nil
}
