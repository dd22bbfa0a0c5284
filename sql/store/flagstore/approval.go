package flagstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Where an environment's changes need approval, nothing that changes what
// its SDKs get happens outside an approved change request: this file holds
// that rule, for flags and for the segments their rules name, and how
// approvals are counted. Every path that writes a flag or a segment asks it.

// What needed approval, as ApprovalError.Of says it.
const (
	// ApprovalFlagChange is a change to what an existing flag serves (on/off,
	// variations, off variation, targets, rules, default rule): a change
	// request makes it.
	ApprovalFlagChange = "FlagChange"
	// ApprovalFlagLifecycle is archiving, restoring or deleting a flag:
	// SDKs find nothing of an archived flag, and deleting one frees its key
	// for a flag that serves something else.
	ApprovalFlagLifecycle = "FlagLifecycle"
	// ApprovalNewFlag is a flag created, cloned, copied in or imported, on
	// or off, without the change request it comes in with (insertFlag).
	ApprovalNewFlag = "NewFlag"
	// ApprovalPendingFlag is restoring or deleting a pending new flag
	// around the change request that brings it in (pendingNewFlag): only
	// that request brings it in or removes it.
	ApprovalPendingFlag = "PendingFlag"
	// ApprovalSegment is a change to who is in a segment that flags of the
	// environment use.
	ApprovalSegment = "Segment"
)

// ApprovalError refuses a change made outside a change request where
// changes need approval. It is ErrChangeRequestRequired (422
// ChangeRequestRequired) to every client; Of and Env say what needed
// approval and where ("Web/Prod"), so the pages can say it in words.
type ApprovalError struct {
	Of  string
	Env string
}

func (e *ApprovalError) Error() string {
	return ErrChangeRequestRequired.Code + ": " + e.Of + " in " + e.Env
}

// Unwrap makes an ApprovalError answer as ErrChangeRequestRequired.
func (e *ApprovalError) Unwrap() error { return ErrChangeRequestRequired }

// approvalRequired refuses, where env's changes need approval, a change of
// an existing flag (before) made outside a change request that changes what
// SDKs get (a flag coming into being is insertFlag's: it waits for its own
// change request); after nil is a flag deleted, always refused (only an
// archived flag is deleted, and its key, which applications may still ask
// for, would be free for a flag serving something else; a pending new
// flag, which never served anything, goes only with its declined or
// withdrawn change request: removeNewFlag); otherwise
// archiving, restoring, or a change of what it serves. Name, description
// and tags need no approval. There is no way around it, for owners or
// triggers; whoever must make such a change at once turns the setting off,
// which the environment's history records.
func approvalRequired(env core.EnvRow, before, after *Flag) error {
	if ApprovalsNeeded(env.Environment) == 0 {
		return nil
	}
	e := &ApprovalError{Env: ProjectEnv(env)}
	switch {
	case after == nil || before.IsArchived != after.IsArchived:
		e.Of = ApprovalFlagLifecycle
	case ServesDifferently(*before, *after):
		e.Of = ApprovalFlagChange
	default:
		return nil
	}
	return e
}

// ApprovalsNeeded is how many approvals a change to what a flag serves
// needs in an environment: 0 where its setting "changes need approval" is
// off. Every decision between a direct change and a change request asks it.
func ApprovalsNeeded(e db.Environment) int {
	if !e.ChangeRequestEnabled {
		return 0
	}
	return int(e.ApprovalsRequired)
}

// SegmentServesDifferently tells whether a segment change changes who is
// in it (its users and rules), and so what the flags that use it serve.
// Archiving it and moving it away from their environments are refused
// while flags use it (guardUse); name, description and tags change
// nothing served.
func SegmentServesDifferently(before, after Segment) bool {
	return !SameJSON(before.Included, after.Included) || !SameJSON(before.Excluded, after.Excluded) ||
		!SameJSON(before.Rules, after.Rules)
}

// SegmentApproval refuses a change of who is in segment id while a flag
// that is not archived names it in an environment whose changes need
// approval: an environment-specific segment's own, or any a shared one
// reaches, whichever environment it is changed from. No change request
// covers a segment, so it is refused until the flags stop using it (a
// change request) or that environment's setting is turned off.
func SegmentApproval(ctx context.Context, q *db.Queries, id uuid.UUID) error {
	envs, err := q.EnvsNeedingApprovalUsingSegment(ctx, id)
	if err != nil || len(envs) == 0 {
		return err
	}
	return &ApprovalError{Of: ApprovalSegment, Env: envs[0].ProjectName + "/" + envs[0].EnvName}
}

// ServesDifferently tells whether a change alters what the flag serves
// while it stays as archived as it was: the parts a change request changes.
// Name, description and tags have their own permissions and need no
// approval; archiving and restoring are approvalRequired's.
func ServesDifferently(before, after Flag) bool {
	return before.IsEnabled != after.IsEnabled || before.VariationType != after.VariationType ||
		!SameJSON(before.Variations, after.Variations) || before.DisabledVariationID != after.DisabledVariationID ||
		!SameJSON(before.TargetUsers, after.TargetUsers) || !SameJSON(before.Rules, after.Rules) ||
		!SameJSON(before.Fallthrough, after.Fallthrough) || before.ExptIncludeAllTargets != after.ExptIncludeAllTargets
}

// Approver is a member who may approve changes in an environment.
type Approver struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email string    `json:"email"`
}

// Approvers lists who may approve changes in an environment: its setting's
// members and the members of its groups. A change's author picks reviewers
// among them.
func (s *Flags) Approvers(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]Approver, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	return Approvers(ctx, s.core.Q, env)
}

func Approvers(ctx context.Context, q *db.Queries, env core.EnvRow) ([]Approver, error) {
	rows, err := q.ListApprovers(ctx, db.ListApproversParams{OrganizationID: env.OrganizationID,
		MemberIds: core.OrEmpty(env.Environment.ApproverMemberIds), GroupIds: core.OrEmpty(env.Environment.ApproverGroupIds)})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]Approver, len(rows))
	for i, r := range rows {
		out[i] = Approver{ID: r.ID, Name: r.Name, Email: r.Email}
	}
	return out, nil
}

// MayApprove tells whether member id is among may, those who may approve.
func MayApprove(may []Approver, id uuid.UUID) bool {
	return slices.ContainsFunc(may, func(ap Approver) bool { return ap.ID == id })
}

// CheckReviewers checks the reviewers an author names: each may approve in
// the environment, none is the author, and there are enough to approve.
func CheckReviewers(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, reviewers []uuid.UUID) error {
	may, err := Approvers(ctx, q, env)
	if err != nil {
		return err
	}
	need := int(env.Environment.ApprovalsRequired)
	problem := ""
	switch {
	case len(reviewers) == 0:
		return &core.ValidationError{Codes: []string{"reviewers_is_required"}, Details: []core.FieldProblem{{Path: "reviewers",
			Code: "reviewers_is_required", Message: "name at least " + counted(need, "reviewer", "reviewers")}}}
	case len(reviewers) > core.MaxApprovers || core.HasDuplicate(reviewers):
		problem = "each reviewer once"
	case slices.Contains(reviewers, a.UserID):
		problem = "you cannot review your own change"
	case len(reviewers) < need:
		problem = "this environment needs " + counted(need, "approval", "approvals") + ": name at least " + counted(need, "reviewer", "reviewers")
	default:
		for _, r := range reviewers {
			if !MayApprove(may, r) {
				problem = "a reviewer may not approve changes in this environment"
				break
			}
		}
	}
	if problem != "" {
		return &core.ValidationError{Codes: []string{"reviewers_is_invalid"}, Details: []core.FieldProblem{{Path: "reviewers",
			Code: "reviewers_is_invalid", Message: problem}}}
	}
	return nil
}

// countedApprovals counts the approvals of cr that count now: those of
// reviewers who may approve in its environment at this moment (may, from
// approvers), so an approval stops counting when its approver leaves the
// organization, is no longer named in the setting, or leaves the group
// that named them.
func countedApprovals(cr FlagChangeRequest, may []Approver) int {
	n := 0
	for _, r := range cr.Reviewers {
		if r.Action == ReviewApprove && MayApprove(may, r.MemberID) {
			n++
		}
	}
	return n
}

// ApprovalStatus is the status cr's reviews give it now: one decline
// declines it; enough approvals that count approve it.
func ApprovalStatus(cr FlagChangeRequest, may []Approver) string {
	switch {
	case cr.Status == ChangeRequestApplied:
		return ChangeRequestApplied
	case slices.ContainsFunc(cr.Reviewers, func(r Reviewer) bool { return r.Action == ReviewDecline }):
		return ChangeRequestDeclined
	case countedApprovals(cr, may) >= cr.ApprovalsRequired:
		return ChangeRequestApproved
	}
	return ChangeRequestPendingReview
}

// counted says n things in good grammar: "1 reviewer", "2 reviewers".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ProjectEnv names an environment as FeatBit's history does: "Project/Env".
func ProjectEnv(env core.EnvRow) string { return env.ProjectName + "/" + env.Environment.Name }
