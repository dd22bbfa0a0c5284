package flagstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// A flag coming into being (created, cloned, copied in, imported) is a
// change to what SDKs get even when it is off: its off variation is served
// from the moment it exists. So where an environment's changes need
// approval, insertFlag stores a new flag as a pending one: archived (SDKs
// find nothing of an archived flag: the server payload marks it archived,
// client payloads give no variation, OFREP answers FLAG_NOT_FOUND) and
// off, with a change request that restores it as it was asked for, on or
// off. Nothing else is needed for the SDK endpoints: archived is the one
// state they already never serve. Approved and applied, the flag is served;
// declined or withdrawn, it is removed in the same transaction
// (removeNewFlag), so its key is free again and SDKs never served it.
// While its request is open the flag is the request's: restoring or
// deleting it outside the request is refused (pendingNewFlag), also once
// the environment's changes no longer need approval, so the request is the
// one way it comes in or goes.

// NewFlagRequest is the change request a new flag comes in with where the
// environment's changes need approval: its reason and reviewers. Where
// they need none it is not asked for, and ignored.
type NewFlagRequest struct {
	Reason    string      `json:"reason"`
	Reviewers []uuid.UUID `json:"reviewers"`
}

// none tells whether the caller named no change request at all: such a
// creation is refused as every change made outside one is, 422
// ChangeRequestRequired, rather than with a question about its fields.
func (r NewFlagRequest) none() bool {
	return strings.TrimSpace(r.Reason) == "" && len(r.Reviewers) == 0
}

// CreatedFlag is a flag created, cloned or copied in: the flag as stored
// and, where the environment's changes need approval, the change request
// that brings it in (the flag waits archived until it is applied).
type CreatedFlag struct {
	Flag
	PendingApproval *RequestedChange `json:"pendingApproval,omitempty"`
}

// commentOr is a new flag's history comment where env's changes need
// approval: the comment given, else the request's reason, which the pages
// ask for there instead of a comment.
func commentOr(env core.EnvRow, ch Change, req NewFlagRequest) Change {
	if ApprovalsNeeded(env.Environment) > 0 && strings.TrimSpace(ch.Comment) == "" {
		ch.Comment = strings.TrimSpace(req.Reason)
	}
	return ch
}

// pendingFlag stores f, where env's changes need approval, as a pending
// flag with the change request req that brings it in as f is; the flag as
// stored and the request are returned. It is insertFlag's work there.
func (s *Flags) pendingFlag(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, f Flag, refs []uuid.UUID,
	comment string, req NewFlagRequest) (Flag, *RequestedChange, error) {
	if req.none() {
		return Flag{}, nil, &ApprovalError{Of: ApprovalNewFlag, Env: ProjectEnv(env)}
	}
	var v core.Validator
	v.Required("reason", req.Reason, core.MaxCommentLen)
	if err := v.Err(); err != nil {
		return Flag{}, nil, err
	}
	if err := CheckReviewers(ctx, q, a, env, req.Reviewers); err != nil {
		return Flag{}, nil, err
	}
	held := f
	held.IsArchived, held.IsEnabled = true, false
	// The request applies with its author's rights (applyDraft): one who
	// could not restore the flag, or turn it on, is refused now rather than
	// left with a request that can never apply.
	want := held
	want.IsArchived, want.IsEnabled = false, f.IsEnabled
	if err := RequireFlagActions(a, env, FlagChangeActions(held, want), held, want); err != nil {
		return Flag{}, nil, err
	}
	out, err := s.storeNewFlag(ctx, q, a, env, held, refs, comment)
	if err != nil {
		return Flag{}, nil, err
	}
	target := out.Clone()
	target.IsArchived, target.IsEnabled = false, f.IsEnabled
	baseJSON, err := json.Marshal(out)
	if err != nil {
		return Flag{}, nil, err
	}
	targetJSON, err := json.Marshal(target)
	if err != nil {
		return Flag{}, nil, err
	}
	reason := strings.TrimSpace(req.Reason)
	row, err := q.CreateFlagDraft(ctx, db.CreateFlagDraftParams{EnvID: env.Environment.ID, FlagID: out.ID,
		Base: baseJSON, Target: targetJSON, Comment: reason, CreatorID: core.ActorID(a), CreatorKind: core.ActorKind(a)})
	if err != nil {
		return Flag{}, nil, err
	}
	d, err := DraftFrom(row)
	if err != nil {
		return Flag{}, nil, err
	}
	cr, err := s.AddChangeRequest(ctx, q, a, env, d, reason, req.Reviewers)
	if err != nil {
		return Flag{}, nil, err
	}
	return out, &RequestedChange{Key: out.Key, ChangeRequestID: cr.ID, Words: NewFlagWords(target, nil)}, nil
}

// NewFlagWords says what a new flag will serve, for whoever approves it:
// its creation, each variation with its value, what it serves while off,
// whether it comes in on, and its targets and rules as changes from a flag
// that has none. names names the segments its rules use.
func NewFlagWords(f Flag, names describe.Names) []string {
	words := []string{"Created the flag " + f.Name + " (" + f.Key + ")"}
	value := func(id string) string {
		for _, v := range f.Variations {
			if v.ID == id {
				return describe.VariationName(id, f.Variations) + " (" + v.Value + ")"
			}
		}
		return describe.VariationName(id, f.Variations)
	}
	for _, v := range f.Variations {
		words = append(words, "Variation "+value(v.ID))
	}
	words = append(words, "Off variation: "+value(f.DisabledVariationID))
	if f.IsEnabled {
		words = append(words, "Comes in switched on")
	} else {
		words = append(words, "Comes in switched off")
	}
	blank := f.Clone()
	blank.TargetUsers, blank.Rules, blank.Fallthrough = nil, nil, Fallthrough{}
	if names == nil {
		names = func(string) (string, bool) { return "", false }
	}
	return append(words, describe.FlagChange(&blank, &f, names)...)
}

// NewFlagApprovers tells the pages' forms that bring flags into envID (a
// copy's target, which is not the person's working environment) how many
// approvals a change there needs, 0 when none, and who may approve there.
func (s *Flags) NewFlagApprovers(ctx context.Context, a *core.Actor, envID uuid.UUID) (int, []Approver, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return 0, nil, err
	}
	n := ApprovalsNeeded(env.Environment)
	if n == 0 {
		return 0, nil, nil
	}
	may, err := Approvers(ctx, s.core.Q, env)
	return n, may, err
}

// RequestedChange is a change request a flag's creation, a copy or an import made.
type RequestedChange struct {
	Key             string    `json:"key"`
	ChangeRequestID uuid.UUID `json:"changeRequestId"`
	Words           []string  `json:"words"`
}

// ErrFlagAwaitsApproval refuses restoring or deleting a pending new flag
// outside the change request that brings it in: approved and applied, the
// request restores it; declined or withdrawn, it removes it.
var ErrFlagAwaitsApproval = &core.RuleError{Code: "FlagAwaitsApproval"}

// pendingNewFlag refuses a change of flag f's archived state (restoring,
// deleting) made outside a change request while a change request that
// brings f in (pendingFlag) is open: where env's changes need approval as
// approvalRequired would (ChangeRequestRequired), but saying why
// (ApprovalPendingFlag), elsewhere with ErrFlagAwaitsApproval. Only an
// archived flag can have one: no other request or schedule is made on an
// archived flag (createDraft).
func pendingNewFlag(ctx context.Context, q *db.Queries, env core.EnvRow, f Flag) error {
	if !f.IsArchived {
		return nil
	}
	requests, err := FlagChangeRequests(ctx, q, f.ID)
	if err != nil {
		return err
	}
	for _, cr := range requests {
		if !cr.NewFlag {
			continue
		}
		if ApprovalsNeeded(env.Environment) > 0 {
			return &ApprovalError{Of: ApprovalPendingFlag, Env: ProjectEnv(env)}
		}
		return ErrFlagAwaitsApproval
	}
	return nil
}

// RemoveNewFlag removes, in q, the pending flag that change request cr
// brings in, now that cr was declined or withdrawn (how says which): the
// flag goes with its drafts, requests and schedules, its history entry
// says why, and SDKs, which never got it served, are told it is gone. It is
// part of the decline or withdrawal, which the store allowed the reviewer
// or the author; no right to delete flags is asked besides. A flag no
// longer archived (it cannot be, see pendingNewFlag) is left as it is.
func (s *Flags) RemoveNewFlag(ctx context.Context, q *db.Queries, a *core.Actor, orgID uuid.UUID, cr FlagChangeRequest, how string) error {
	row, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: cr.EnvID, Key: cr.FlagKey})
	if err != nil {
		return err
	}
	f, err := FlagFrom(row)
	if err != nil || !f.IsArchived || f.ID != cr.FlagID {
		return err
	}
	if _, err := q.DeleteFlag(ctx, f.ID); err != nil {
		return err
	}
	return s.RecordFlag(ctx, q, a, orgID, cr.EnvID, core.OpRemove, &f, nil,
		fmt.Sprintf("New flag %s was %s and removed", f.Key, how))
}
