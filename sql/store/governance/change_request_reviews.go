package governance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// CreateFlagChangeRequest proposes a change to a flag in an environment whose
// changes need approval. The author must be allowed the change itself; it is
// stored as a draft with the reviewers named, and applied later through the
// draft's path once enough of them approve.
func (s *Governance) CreateFlagChangeRequest(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in flagstore.FlagChangeRequestInput) (flagstore.FlagChangeRequest, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return flagstore.FlagChangeRequest{}, err
	}
	if in.Targeting == nil && in.IsEnabled == nil && in.OffVariationID == nil && in.Variations == nil {
		return flagstore.FlagChangeRequest{}, core.Invalid("targeting_is_required")
	}
	if flagstore.ApprovalsNeeded(env.Environment) == 0 {
		return flagstore.FlagChangeRequest{}, flagstore.ErrChangeRequestsOff
	}
	var out flagstore.FlagChangeRequest
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		// The lock keeps the flag as read until the request is stored.
		row, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: envID, Key: key})
		if err != nil {
			return err
		}
		before, err := flagstore.FlagFrom(row)
		if err != nil {
			return err
		}
		if in.Revision != nil && *in.Revision != before.Revision {
			return core.ErrConflict
		}
		after := before.Clone()
		in.Edit(&after)
		// The request path of the change pipeline, as a page's change takes
		// it where changes need approval.
		out, err = s.flags.RequestChange(ctx, q, a, env, before, after, in.Revision,
			flagstore.Proposal{Reason: in.Reason, Reviewers: in.Reviewers})
		return err
	})
	return out, err
}

// GetFlagChangeRequest returns a change request of an environment.
func (s *Governance) GetFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (flagstore.FlagChangeRequest, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return flagstore.FlagChangeRequest{}, err
	}
	return s.flags.ChangeRequest(ctx, s.core.Q, envID, id)
}

// FlagChangeRequestEnv returns the environment a change request was made
// in, when the caller may read it: a reviewer follows a link to the
// request from wherever they work. A request of another organization is
// not found.
func (s *Governance) FlagChangeRequestEnv(ctx context.Context, a *core.Actor, id uuid.UUID) (core.EnvRow, error) {
	envID, err := s.core.Q.ChangeRequestEnv(ctx, id)
	if err != nil {
		return core.EnvRow{}, core.Translate(err)
	}
	return s.core.ReadableEnv(ctx, a, envID)
}

// ReviewInput is a reviewer's decision with an optional comment.
type ReviewInput struct {
	Comment string `json:"comment"`
}

// ApproveFlagChangeRequest records a reviewer's approval; the request is
// approved once it has as many approvals as it needs.
func (s *Governance) ApproveFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in ReviewInput) (flagstore.FlagChangeRequest, error) {
	return s.reviewFlagChangeRequest(ctx, a, envID, id, flagstore.ReviewApprove, in)
}

// DeclineFlagChangeRequest records a reviewer's decline; a declined request
// cannot be applied (until its decliner approves after all). A declined
// request that brings in a new flag removes the flag, and itself with it:
// that decline is final.
func (s *Governance) DeclineFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in ReviewInput) (flagstore.FlagChangeRequest, error) {
	return s.reviewFlagChangeRequest(ctx, a, envID, id, flagstore.ReviewDecline, in)
}

// reviewFlagChangeRequest records a decision. The reviewer must be one the
// author named and still one who may approve in the environment; nobody
// reviews their own request. As in FeatBit, a reviewer may change their
// decision until the request is applied; one decline declines it.
func (s *Governance) reviewFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, action string, in ReviewInput) (flagstore.FlagChangeRequest, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return flagstore.FlagChangeRequest{}, err
	}
	var v core.Validator
	v.Text("comment", in.Comment, core.MaxCommentLen)
	if err := v.Err(); err != nil {
		return flagstore.FlagChangeRequest{}, err
	}
	var out flagstore.FlagChangeRequest
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockFlagChangeRequest(ctx, db.LockFlagChangeRequestParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		switch {
		case locked.Status == flagstore.ChangeRequestApplied:
			return flagstore.ErrChangeRequestApplied
		case locked.CreatorID == a.UserID:
			return flagstore.ErrCannotReviewOwnChangeRequest
		}
		may, err := flagstore.Approvers(ctx, q, env)
		if err != nil {
			return err
		}
		if !flagstore.MayApprove(may, a.UserID) {
			return flagstore.ErrNotAReviewer
		}
		before, err := s.flags.ChangeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		n, err := q.SetReviewerDecision(ctx, db.SetReviewerDecisionParams{ChangeRequestID: id, MemberID: a.UserID,
			Action: action, Comment: strings.TrimSpace(in.Comment)})
		if err != nil {
			return err
		}
		if n == 0 {
			return flagstore.ErrNotAReviewer
		}
		// The request's status follows from its reviews; a schedule made with
		// it applies at its time once approved.
		cr, _, err := s.settleChangeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		out = cr
		if err := s.flags.AuditChangeRequest(ctx, q, a, core.OpUpdate, &before, &cr); err != nil {
			return err
		}
		// Declined, a new flag goes: its key is free again (RemoveNewFlag).
		if cr.NewFlag && cr.Status == flagstore.ChangeRequestDeclined {
			return s.flags.RemoveNewFlag(ctx, q, a, env.OrganizationID, cr, "declined")
		}
		return nil
	})
	return out, err
}

// ApplyFlagChangeRequest applies an approved request through the draft's
// path: the flag's lock, the author's permission checked again, a new
// revision, one history entry and a push to SDKs; a flag changed meanwhile
// gets only the parts the request changes, or the apply fails. Its author or
// one of its reviewers may apply it.
func (s *Governance) ApplyFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (flagstore.Flag, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return flagstore.Flag{}, err
	}
	var out flagstore.Flag
	var refused error
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockFlagChangeRequest(ctx, db.LockFlagChangeRequestParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		// Approvals count as they stand now: one whose approver left, or is
		// no longer named, puts the request back under review.
		cr, may, err := s.settleChangeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		if _, reviewer := cr.Reviewer(a.UserID); !reviewer && locked.CreatorID != a.UserID {
			return core.ErrForbidden
		}
		switch {
		case cr.Status == flagstore.ChangeRequestApplied:
			return flagstore.ErrChangeRequestApplied
		case cr.Status == flagstore.ChangeRequestDeclined:
			return flagstore.ErrChangeRequestDeclined
		case cr.Status != flagstore.ChangeRequestApproved && locked.Status == flagstore.ChangeRequestApproved:
			refused = flagstore.ErrChangeRequestNotApproved
			return nil // refused, but back under review it stays
		case cr.Status != flagstore.ChangeRequestApproved:
			return flagstore.ErrChangeRequestNotApproved
		case cr.ScheduleID != nil:
			return flagstore.ErrChangeRequestScheduled
		}
		// The change is its author's, applied with the author's rights now;
		// the history entry says who approved and who applied it.
		if out, err = s.applyDraft(ctx, q, locked.DraftID, draftApplication{Operation: flagstore.OpApplyFlagChangeRequest,
			Comment: appliedComment(cr, may, a)}); err != nil {
			return err
		}
		if _, err = q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{ID: id, Status: flagstore.ChangeRequestApplied, AppliedBy: &a.UserID}); err != nil {
			return err
		}
		return s.queueChangeRequestApplied(ctx, q, a, cr)
	})
	if err == nil {
		err = refused
	}
	return out, err
}

// appliedComment is the history comment of an applied request: its reason,
// who approved it (the approvals that count, of those who may approve now),
// and who applied it.
func appliedComment(cr flagstore.FlagChangeRequest, may []flagstore.Approver, by *core.Actor) string {
	var approvers []string
	applier := ""
	for _, r := range cr.Reviewers {
		if r.Action == flagstore.ReviewApprove && flagstore.MayApprove(may, r.MemberID) {
			approvers = append(approvers, r.Name)
		}
		if r.MemberID == by.UserID {
			applier = r.Name
		}
	}
	if by.UserID == cr.CreatorID {
		applier = cr.CreatorName
	}
	return fmt.Sprintf("%s (change request approved by %s; applied by %s)", cr.Reason, strings.Join(approvers, ", "), applier)
}

// DeleteFlagChangeRequest withdraws a request that is not applied: only its
// author may. A schedule made with it goes too; so does the new flag a
// request brings in (RemoveNewFlag).
func (s *Governance) DeleteFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockFlagChangeRequest(ctx, db.LockFlagChangeRequestParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		switch {
		case locked.CreatorID != a.UserID:
			return core.ErrForbidden
		case locked.Status == flagstore.ChangeRequestApplied:
			return flagstore.ErrChangeRequestApplied
		}
		cr, err := s.flags.ChangeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		if _, err = q.DeleteChangeRequestDraft(ctx, locked.DraftID); err != nil {
			return err
		}
		if err := s.flags.AuditChangeRequest(ctx, q, a, core.OpRemove, &cr, nil); err != nil {
			return err
		}
		if cr.NewFlag {
			return s.flags.RemoveNewFlag(ctx, q, a, env.OrganizationID, cr, "withdrawn")
		}
		return nil
	})
}

// ListAwaitingReview lists the requests of an environment waiting for the
// caller's decision, oldest first, at most 100.
func (s *Governance) ListAwaitingReview(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]flagstore.FlagChangeRequest, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	rows, err := s.core.Q.ListAwaitingReview(ctx, db.ListAwaitingReviewParams{MemberID: a.UserID, EnvID: envID})
	if err != nil {
		return nil, core.Translate(err)
	}
	list := make([]flagstore.ChangeRequestRow, len(rows))
	for i, r := range rows {
		list[i] = flagstore.ChangeRequestRow(r)
	}
	return flagstore.WithReviewers(ctx, s.core.Q, list)
}

// CountAwaitingReview counts the requests of an environment waiting for the
// caller's decision, for the top bar; 0 when the caller may not read it.
func (s *Governance) CountAwaitingReview(ctx context.Context, a *core.Actor, envID uuid.UUID) (int, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return 0, err
	}
	n, err := s.core.Q.CountAwaitingReview(ctx, db.CountAwaitingReviewParams{MemberID: a.UserID, EnvID: envID})
	return int(n), core.Translate(err)
}

// ApproverChoice is a member or group that may be chosen to approve.
type ApproverChoice struct {
	ID   uuid.UUID
	Name string
}

// ApproverChoices lists the organization's members and groups, for whoever
// may edit an environment's settings to choose its approvers from.
func (s *Governance) ApproverChoices(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) (members, groups []ApproverChoice, err error) {
	env, err := s.core.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return nil, nil, err
	}
	if err := a.Require(access.UpdateEnvSettings, env.RN()); err != nil {
		return nil, nil, err
	}
	people, err := s.core.Q.ListOrganizationPeople(ctx, env.OrganizationID)
	if err != nil {
		return nil, nil, core.Translate(err)
	}
	for _, p := range people {
		members = append(members, ApproverChoice{ID: p.ID, Name: flagstore.PersonName(p.Name, p.Email)})
	}
	names, err := s.core.Q.ListOrganizationGroupNames(ctx, env.OrganizationID)
	if err != nil {
		return nil, nil, core.Translate(err)
	}
	for _, g := range names {
		groups = append(groups, ApproverChoice{ID: g.ID, Name: g.Name})
	}
	return members, groups, nil
}

// FlagChangeRequests lists a flag's change requests not yet applied, newest
// first, for the flag's page.
func (s *Governance) FlagChangeRequests(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) ([]flagstore.FlagChangeRequest, error) {
	f, err := s.flags.GetFlag(ctx, a, envID, key)
	if err != nil {
		return nil, err
	}
	return flagstore.FlagChangeRequests(ctx, s.core.Q, f.ID)
}

// queueChangeRequestApplied raises change_request.applied for a request
// just applied: applying is recorded as the flag's change, not as the
// request's, so the audit entry does not raise it.
func (s *Governance) queueChangeRequestApplied(ctx context.Context, q *db.Queries, a *core.Actor, cr flagstore.FlagChangeRequest) error {
	if a.OrgID == uuid.Nil {
		return nil
	}
	before := &flagstore.ChangeRequestRecord{Flag: cr.FlagKey, Reason: cr.Reason, Status: cr.Status}
	after := &flagstore.ChangeRequestRecord{Flag: cr.FlagKey, Reason: cr.Reason, Status: flagstore.ChangeRequestApplied}
	envID := cr.EnvID
	return s.core.QueueWebhooks(ctx, q, a, core.Change{RefType: "FlagChangeRequest", RefID: cr.ID.String(), EnvID: &envID,
		Operation: core.OpUpdate, Previous: before, Current: after}, []string{flagstore.EventChangeRequestApplied})
}

// withChangeRequests completes a flag's pending changes with its change
// requests not yet applied, as FeatBit's GetPendingChanges does: a request
// made with a schedule fills in that schedule's reason and reviewers; one
// without is a pending change of type ChangeRequest, newest first.
func withChangeRequests(ctx context.Context, q *db.Queries, flagID uuid.UUID, pending []PendingChange) ([]PendingChange, error) {
	requests, err := flagstore.FlagChangeRequests(ctx, q, flagID)
	if err != nil {
		return nil, err
	}
	for _, cr := range requests {
		reviewers := make([]any, len(cr.Reviewers))
		for i, r := range cr.Reviewers {
			reviewers[i] = r
		}
		if cr.ScheduleID != nil {
			for i := range pending {
				if pending[i].ID == *cr.ScheduleID {
					pending[i].ChangeRequestReason, pending[i].Reviewers = cr.Reason, reviewers
				}
			}
			continue
		}
		var base, target flagstore.Flag
		if err := json.Unmarshal(cr.DataChange.Previous, &base); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(cr.DataChange.Current, &target); err != nil {
			return nil, err
		}
		id := cr.ID
		pending = append(pending, PendingChange{ID: cr.ID, FlagID: cr.FlagID, DataChange: cr.DataChange,
			CreatorID: cr.CreatorID, CreatorName: cr.CreatorName, CreatedAt: cr.CreatedAt,
			Instructions: flagstore.FlagInstructions(cr.DataChange.Previous, cr.DataChange.Current), Type: PendingChangeRequest, Status: cr.Status, ChangeRequestID: &id, ChangeRequestReason: cr.Reason,
			Reviewers: reviewers, Comment: cr.Reason, Changed: core.OrEmpty(flagstore.ChangedParts(base, target))})
	}
	return pending, nil
}
