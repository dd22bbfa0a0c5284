package flagstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Change request statuses: FeatBit's FlagChangeRequestStatus.
const (
	ChangeRequestPendingReview = "PendingReview"
	ChangeRequestApproved      = "Approved"
	ChangeRequestDeclined      = "Declined"
	ChangeRequestApplied       = "Applied"
)

// Reviewer decisions: FeatBit's FlagChangeRequestAction.
const (
	ReviewEmpty   = "Empty"
	ReviewApprove = "Approve"
	ReviewDecline = "Decline"
)

// Change request rules, each refused with its own code.
var (
	// ErrChangeRequestRequired refuses a direct change to what a flag serves
	// in an environment whose changes need approval, for everyone.
	ErrChangeRequestRequired = &core.RuleError{Code: "ChangeRequestRequired"}
	// ErrChangeRequestsOff refuses a change request in an environment whose
	// changes need no approval: apply the change directly.
	ErrChangeRequestsOff = &core.RuleError{Code: "ChangeRequestNotEnabled"}
	// ErrChangeRequestChangesNothing refuses a request that would leave the
	// flag as it is.
	ErrChangeRequestChangesNothing = &core.RuleError{Code: "ChangeRequestChangesNothing"}
	// ErrCannotReviewOwnChangeRequest refuses an author's own approval or decline.
	ErrCannotReviewOwnChangeRequest = &core.RuleError{Code: "CannotReviewOwnChangeRequest"}
	// ErrNotAReviewer refuses a decision from someone the author did not name,
	// or who may no longer approve in the environment.
	ErrNotAReviewer = &core.RuleError{Code: "NotAReviewerOfChangeRequest"}
	// ErrChangeRequestNotApproved refuses applying a request that lacks approvals.
	ErrChangeRequestNotApproved = &core.RuleError{Code: "ChangeRequestNotApproved"}
	// ErrChangeRequestDeclined refuses applying a declined request.
	ErrChangeRequestDeclined = &core.RuleError{Code: "ChangeRequestDeclined"}
	// ErrChangeRequestApplied refuses acting on a request already applied.
	ErrChangeRequestApplied = &core.RuleError{Code: "ChangeRequestAlreadyApplied"}
	// ErrChangeRequestScheduled refuses applying by hand a request whose
	// schedule applies it at its time.
	ErrChangeRequestScheduled = &core.RuleError{Code: "ChangeRequestIsScheduled"}
)

// FlagChangeRequestInput proposes a change to a flag for review: FeatBit's
// CreateFlagChangeRequest body {revision, targeting, reason, reviewers}, and,
// since Bunting's requests cover every change to what a flag serves, the
// optional isEnabled, offVariationId, variationType and variations. Each part
// given replaces the flag's as the direct route would; at least one is needed.
type FlagChangeRequestInput struct {
	Revision       *uuid.UUID     `json:"revision"`
	Targeting      *FlagTargeting `json:"targeting"`
	IsEnabled      *bool          `json:"isEnabled"`
	OffVariationID *string        `json:"offVariationId"`
	VariationType  string         `json:"variationType"`
	Variations     []Variation    `json:"variations"`
	Reason         string         `json:"reason"`
	Reviewers      []uuid.UUID    `json:"reviewers"`
}

// edit applies the request's parts to a flag, as the direct routes do.
func (in FlagChangeRequestInput) edit(f *Flag) {
	if in.Targeting != nil {
		setTargeting(f, *in.Targeting)
	}
	if in.IsEnabled != nil {
		f.IsEnabled = *in.IsEnabled
	}
	if in.OffVariationID != nil {
		f.DisabledVariationID = *in.OffVariationID
	}
	if in.Variations != nil {
		if in.VariationType != "" {
			f.VariationType = in.VariationType
		}
		f.Variations = in.Variations
	}
}

// FlagChangeRequest is a proposed change to a flag and its reviews.
type FlagChangeRequest struct {
	ID      uuid.UUID `json:"id"`
	EnvID   uuid.UUID `json:"envId"`
	FlagID  uuid.UUID `json:"flagId"`
	FlagKey string    `json:"flagKey"`
	DraftID uuid.UUID `json:"flagDraftId"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason"`
	// ApprovalsRequired is the environment's number when the request was made.
	ApprovalsRequired int        `json:"approvalsRequired"`
	Reviewers         []Reviewer `json:"reviewers"`
	// ScheduleID is the schedule that applies the request at its time once
	// approved; nil when it is applied by hand.
	ScheduleID *uuid.UUID `json:"scheduleId"`
	// DataChange is the flag as the request found it and as it would leave it.
	DataChange DataChange `json:"dataChange"`
	// NewFlag tells that the request brings in a flag created where
	// changes need approval (pendingFlag): the flag waits archived for it.
	NewFlag     bool      `json:"newFlag"`
	CreatorID   uuid.UUID `json:"creatorId"`
	CreatorName string    `json:"creatorName"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Reviewer is a member named to review a request, with the decision:
// FeatBit's Reviewer {memberId, action, timestamp}, with name and comment.
type Reviewer struct {
	MemberID  uuid.UUID  `json:"memberId"`
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	Action    string     `json:"action"`
	Comment   string     `json:"comment"`
	Timestamp *time.Time `json:"timestamp"`
}

// Approvals counts the reviewers who approved.
func (r FlagChangeRequest) Approvals() int {
	n := 0
	for _, rv := range r.Reviewers {
		if rv.Action == ReviewApprove {
			n++
		}
	}
	return n
}

// Reviewer returns the review of a member, if named.
func (r FlagChangeRequest) Reviewer(id uuid.UUID) (Reviewer, bool) {
	i := slices.IndexFunc(r.Reviewers, func(rv Reviewer) bool { return rv.MemberID == id })
	if i < 0 {
		return Reviewer{}, false
	}
	return r.Reviewers[i], true
}

// CreateFlagChangeRequest proposes a change to a flag in an environment whose
// changes need approval. The author must be allowed the change itself; it is
// stored as a draft with the reviewers named, and applied later through the
// draft's path once enough of them approve.
func (s *Flags) CreateFlagChangeRequest(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in FlagChangeRequestInput) (FlagChangeRequest, error) {
	env, err := s.ReadableEnv(ctx, a, envID)
	if err != nil {
		return FlagChangeRequest{}, err
	}
	if in.Targeting == nil && in.IsEnabled == nil && in.OffVariationID == nil && in.Variations == nil {
		return FlagChangeRequest{}, core.Invalid("targeting_is_required")
	}
	if approvalsNeeded(env.Environment) == 0 {
		return FlagChangeRequest{}, ErrChangeRequestsOff
	}
	var v core.Validator
	v.Required("reason", in.Reason, core.MaxCommentLen)
	if err := v.Err(); err != nil {
		return FlagChangeRequest{}, err
	}
	if err := checkReviewers(ctx, s.Q, a, env, in.Reviewers); err != nil {
		return FlagChangeRequest{}, err
	}
	var out FlagChangeRequest
	err = s.InTx(ctx, func(q *db.Queries) error {
		// The lock keeps the flag as read until the draft is stored.
		row, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: envID, Key: key})
		if err != nil {
			return err
		}
		before, err := FlagFrom(row)
		if err != nil {
			return err
		}
		if in.Revision != nil && *in.Revision != before.Revision {
			return core.ErrConflict
		}
		if before.IsArchived {
			return ErrFlagIsArchived
		}
		after := before.Clone()
		in.edit(&after)
		if !servesDifferently(before, after) {
			return ErrChangeRequestChangesNothing
		}
		target, err := json.Marshal(after)
		if err != nil {
			return err
		}
		// The draft checks the change as if made now: the author's
		// permission for each part, the flag's validity, the segments.
		d, err := s.createDraft(ctx, q, a, env, key, DraftInput{TargetFlag: target,
			Change: Change{Comment: strings.TrimSpace(in.Reason), Revision: in.Revision}})
		if err != nil {
			return err
		}
		out, err = s.addChangeRequest(ctx, q, a, env, d, in.Reason, in.Reviewers)
		return err
	})
	return out, err
}

// addChangeRequest stores a change request for a draft, with its reviewers
// (checked by checkReviewers), and records it in the environment's history.
func (s *Flags) addChangeRequest(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, d Draft, reason string, reviewers []uuid.UUID) (FlagChangeRequest, error) {
	row, err := q.CreateFlagChangeRequest(ctx, db.CreateFlagChangeRequestParams{DraftID: d.ID, EnvID: d.EnvID,
		FlagID: d.FlagID, Reason: strings.TrimSpace(reason), ApprovalsRequired: env.Environment.ApprovalsRequired, CreatorID: a.UserID})
	if err != nil {
		return FlagChangeRequest{}, err
	}
	if err := q.AddChangeRequestReviewers(ctx, db.AddChangeRequestReviewersParams{ChangeRequestID: row.ID, MemberIds: reviewers}); err != nil {
		return FlagChangeRequest{}, err
	}
	cr, err := s.changeRequest(ctx, q, d.EnvID, row.ID)
	if err != nil {
		return FlagChangeRequest{}, err
	}
	return cr, s.auditChangeRequest(ctx, q, a, core.OpCreate, nil, &cr)
}

// changeRequestRecord is what history keeps of a change request at one
// step: the flag, the reason, the status and each reviewer's decision.
type changeRequestRecord struct {
	Flag    string   `json:"flag"`
	Reason  string   `json:"reason"`
	Status  string   `json:"status"`
	Reviews []string `json:"reviews"`
}

// auditChangeRequest records a step of a change request (made, reviewed,
// withdrawn) in its environment's history; applying it is the flag's own
// entry.
func (s *Flags) auditChangeRequest(ctx context.Context, q *db.Queries, a *core.Actor, op string, before, after *FlagChangeRequest) error {
	ch := core.Change{RefType: "FlagChangeRequest", Operation: op}
	record := func(cr *FlagChangeRequest) *changeRequestRecord {
		r := &changeRequestRecord{Flag: cr.FlagKey, Reason: cr.Reason, Status: cr.Status, Reviews: []string{}}
		for _, rv := range cr.Reviewers {
			review := rv.Name + ": waiting"
			switch rv.Action {
			case ReviewApprove:
				review = rv.Name + ": approved"
			case ReviewDecline:
				review = rv.Name + ": declined"
			}
			if rv.Comment != "" {
				review += " (" + rv.Comment + ")"
			}
			r.Reviews = append(r.Reviews, review)
		}
		return r
	}
	for _, cr := range []*FlagChangeRequest{before, after} {
		if cr != nil {
			ch.RefID, ch.Keyword, ch.EnvID = cr.ID.String(), cr.FlagKey+","+cr.Reason, &cr.EnvID
		}
	}
	if before != nil {
		ch.Previous = record(before)
	}
	if after != nil {
		ch.Current = record(after)
	}
	return s.Audit(ctx, q, a, ch)
}

// GetFlagChangeRequest returns a change request of an environment.
func (s *Flags) GetFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (FlagChangeRequest, error) {
	if _, err := s.ReadableEnv(ctx, a, envID); err != nil {
		return FlagChangeRequest{}, err
	}
	return s.changeRequest(ctx, s.Q, envID, id)
}

// FlagChangeRequestEnv returns the environment a change request was made
// in, when the caller may read it: a reviewer follows a link to the
// request from wherever they work. A request of another organization is
// not found.
func (s *Flags) FlagChangeRequestEnv(ctx context.Context, a *core.Actor, id uuid.UUID) (core.EnvRow, error) {
	envID, err := s.Q.ChangeRequestEnv(ctx, id)
	if err != nil {
		return core.EnvRow{}, core.Translate(err)
	}
	return s.ReadableEnv(ctx, a, envID)
}

func (s *Flags) changeRequest(ctx context.Context, q *db.Queries, envID, id uuid.UUID) (FlagChangeRequest, error) {
	row, err := q.GetFlagChangeRequest(ctx, db.GetFlagChangeRequestParams{EnvID: envID, ID: id})
	if err != nil {
		return FlagChangeRequest{}, core.Translate(err)
	}
	out, err := withReviewers(ctx, q, []changeRequestRow{changeRequestRow(row)})
	if err != nil {
		return FlagChangeRequest{}, err
	}
	return out[0], nil
}

// changeRequestRow is a request as the queries that list them answer.
type changeRequestRow db.GetFlagChangeRequestRow

// withReviewers turns rows into requests with their reviewers.
func withReviewers(ctx context.Context, q *db.Queries, rows []changeRequestRow) ([]FlagChangeRequest, error) {
	if len(rows) == 0 { // nothing to ask the database about
		return []FlagChangeRequest{}, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.FlagChangeRequest.ID
	}
	reviews, err := q.ListChangeRequestReviewers(ctx, ids)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]FlagChangeRequest, len(rows))
	for i, r := range rows {
		cr := r.FlagChangeRequest
		out[i] = FlagChangeRequest{ID: cr.ID, EnvID: cr.EnvID, FlagID: cr.FlagID, FlagKey: r.FlagKey, DraftID: cr.DraftID,
			Status: cr.Status, Reason: cr.Reason, ApprovalsRequired: int(cr.ApprovalsRequired), Reviewers: []Reviewer{},
			ScheduleID: r.ScheduleID, DataChange: DataChange{Previous: r.Base, Current: r.Target}, CreatorID: cr.CreatorID, CreatorName: personName(r.CreatorName, r.CreatorEmail),
			CreatedAt: cr.CreatedAt.UTC(), UpdatedAt: cr.UpdatedAt.UTC()}
		var base, target struct {
			IsArchived bool `json:"isArchived"`
		}
		if json.Unmarshal(r.Base, &base) == nil && json.Unmarshal(r.Target, &target) == nil {
			out[i].NewFlag = base.IsArchived && !target.IsArchived
		}
		for _, rv := range reviews {
			if rv.ChangeRequestID == cr.ID {
				out[i].Reviewers = append(out[i].Reviewers, Reviewer{MemberID: rv.MemberID, Name: personName(rv.Name, rv.Email),
					Email: rv.Email, Action: rv.Action, Comment: rv.Comment, Timestamp: utc(rv.DecidedAt)})
			}
		}
	}
	return out, nil
}

// Lines says the request's change in words, as the history page does; a
// new flag's request says everything the flag will serve (NewFlagWords).
func (r FlagChangeRequest) Lines(names describe.Names) []string {
	if r.NewFlag {
		var target Flag
		if json.Unmarshal(r.DataChange.Current, &target) == nil {
			return NewFlagWords(target, names)
		}
	}
	return describe.Change("FeatureFlag", r.DataChange.Previous, r.DataChange.Current, names)
}

// personName is how a person is named: by name, else by email.
func personName(name, email string) string {
	if strings.TrimSpace(name) != "" {
		return name
	}
	return email
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ReviewInput is a reviewer's decision with an optional comment.
type ReviewInput struct {
	Comment string `json:"comment"`
}

// ApproveFlagChangeRequest records a reviewer's approval; the request is
// approved once it has as many approvals as it needs.
func (s *Flags) ApproveFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in ReviewInput) (FlagChangeRequest, error) {
	return s.reviewFlagChangeRequest(ctx, a, envID, id, ReviewApprove, in)
}

// DeclineFlagChangeRequest records a reviewer's decline; a declined request
// cannot be applied (until its decliner approves after all). A declined
// request that brings in a new flag removes the flag, and itself with it:
// that decline is final.
func (s *Flags) DeclineFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in ReviewInput) (FlagChangeRequest, error) {
	return s.reviewFlagChangeRequest(ctx, a, envID, id, ReviewDecline, in)
}

// reviewFlagChangeRequest records a decision. The reviewer must be one the
// author named and still one who may approve in the environment; nobody
// reviews their own request. As in FeatBit, a reviewer may change their
// decision until the request is applied; one decline declines it.
func (s *Flags) reviewFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID, action string, in ReviewInput) (FlagChangeRequest, error) {
	env, err := s.ReadableEnv(ctx, a, envID)
	if err != nil {
		return FlagChangeRequest{}, err
	}
	var v core.Validator
	v.Text("comment", in.Comment, core.MaxCommentLen)
	if err := v.Err(); err != nil {
		return FlagChangeRequest{}, err
	}
	var out FlagChangeRequest
	err = s.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockFlagChangeRequest(ctx, db.LockFlagChangeRequestParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		switch {
		case locked.Status == ChangeRequestApplied:
			return ErrChangeRequestApplied
		case locked.CreatorID == a.UserID:
			return ErrCannotReviewOwnChangeRequest
		}
		may, err := approvers(ctx, q, env)
		if err != nil {
			return err
		}
		if !mayApprove(may, a.UserID) {
			return ErrNotAReviewer
		}
		before, err := s.changeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		n, err := q.SetReviewerDecision(ctx, db.SetReviewerDecisionParams{ChangeRequestID: id, MemberID: a.UserID,
			Action: action, Comment: strings.TrimSpace(in.Comment)})
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotAReviewer
		}
		// The request's status follows from its reviews; a schedule made with
		// it applies at its time once approved.
		cr, _, err := s.settleChangeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		out = cr
		if err := s.auditChangeRequest(ctx, q, a, core.OpUpdate, &before, &cr); err != nil {
			return err
		}
		// Declined, a new flag goes: its key is free again (removeNewFlag).
		if cr.NewFlag && cr.Status == ChangeRequestDeclined {
			return s.removeNewFlag(ctx, q, a, env.OrganizationID, cr, "declined")
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
func (s *Flags) ApplyFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (Flag, error) {
	if _, err := s.ReadableEnv(ctx, a, envID); err != nil {
		return Flag{}, err
	}
	var out Flag
	var refused error
	err := s.InTx(ctx, func(q *db.Queries) error {
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
		case cr.Status == ChangeRequestApplied:
			return ErrChangeRequestApplied
		case cr.Status == ChangeRequestDeclined:
			return ErrChangeRequestDeclined
		case cr.Status != ChangeRequestApproved && locked.Status == ChangeRequestApproved:
			refused = ErrChangeRequestNotApproved
			return nil // refused, but back under review it stays
		case cr.Status != ChangeRequestApproved:
			return ErrChangeRequestNotApproved
		case cr.ScheduleID != nil:
			return ErrChangeRequestScheduled
		}
		// The change is its author's, applied with the author's rights now;
		// the history entry says who approved and who applied it.
		if out, err = s.applyDraft(ctx, q, locked.DraftID, DraftApplication{Operation: OpApplyFlagChangeRequest,
			Comment: appliedComment(cr, may, a)}); err != nil {
			return err
		}
		if _, err = q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{ID: id, Status: ChangeRequestApplied, AppliedBy: &a.UserID}); err != nil {
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
func appliedComment(cr FlagChangeRequest, may []Approver, by *core.Actor) string {
	var approvers []string
	applier := ""
	for _, r := range cr.Reviewers {
		if r.Action == ReviewApprove && mayApprove(may, r.MemberID) {
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
// request brings in (removeNewFlag).
func (s *Flags) DeleteFlagChangeRequest(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	env, err := s.ReadableEnv(ctx, a, envID)
	if err != nil {
		return err
	}
	return s.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockFlagChangeRequest(ctx, db.LockFlagChangeRequestParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		switch {
		case locked.CreatorID != a.UserID:
			return core.ErrForbidden
		case locked.Status == ChangeRequestApplied:
			return ErrChangeRequestApplied
		}
		cr, err := s.changeRequest(ctx, q, envID, id)
		if err != nil {
			return err
		}
		if _, err = q.DeleteChangeRequestDraft(ctx, locked.DraftID); err != nil {
			return err
		}
		if err := s.auditChangeRequest(ctx, q, a, core.OpRemove, &cr, nil); err != nil {
			return err
		}
		if cr.NewFlag {
			return s.removeNewFlag(ctx, q, a, env.OrganizationID, cr, "withdrawn")
		}
		return nil
	})
}

// ListAwaitingReview lists the requests of an environment waiting for the
// caller's decision, oldest first, at most 100.
func (s *Flags) ListAwaitingReview(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]FlagChangeRequest, error) {
	if _, err := s.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	rows, err := s.Q.ListAwaitingReview(ctx, db.ListAwaitingReviewParams{MemberID: a.UserID, EnvID: envID})
	if err != nil {
		return nil, core.Translate(err)
	}
	list := make([]changeRequestRow, len(rows))
	for i, r := range rows {
		list[i] = changeRequestRow(r)
	}
	return withReviewers(ctx, s.Q, list)
}

// CountAwaitingReview counts the requests of an environment waiting for the
// caller's decision, for the top bar; 0 when the caller may not read it.
func (s *Flags) CountAwaitingReview(ctx context.Context, a *core.Actor, envID uuid.UUID) (int, error) {
	if _, err := s.ReadableEnv(ctx, a, envID); err != nil {
		return 0, err
	}
	n, err := s.Q.CountAwaitingReview(ctx, db.CountAwaitingReviewParams{MemberID: a.UserID, EnvID: envID})
	return int(n), core.Translate(err)
}

// flagChangeRequests lists a flag's requests not yet applied, newest first.
func flagChangeRequests(ctx context.Context, q *db.Queries, flagID uuid.UUID) ([]FlagChangeRequest, error) {
	rows, err := q.ListFlagChangeRequests(ctx, flagID)
	if err != nil {
		return nil, core.Translate(err)
	}
	list := make([]changeRequestRow, len(rows))
	for i, r := range rows {
		list[i] = changeRequestRow(r)
	}
	return withReviewers(ctx, q, list)
}

// ApproverChoice is a member or group that may be chosen to approve.
type ApproverChoice struct {
	ID   uuid.UUID
	Name string
}

// ApproverChoices lists the organization's members and groups, for whoever
// may edit an environment's settings to choose its approvers from.
func (s *Flags) ApproverChoices(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) (members, groups []ApproverChoice, err error) {
	env, err := s.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return nil, nil, err
	}
	if err := a.Require(access.UpdateEnvSettings, env.RN()); err != nil {
		return nil, nil, err
	}
	people, err := s.Q.ListOrganizationPeople(ctx, env.OrganizationID)
	if err != nil {
		return nil, nil, core.Translate(err)
	}
	for _, p := range people {
		members = append(members, ApproverChoice{ID: p.ID, Name: personName(p.Name, p.Email)})
	}
	names, err := s.Q.ListOrganizationGroupNames(ctx, env.OrganizationID)
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
func (s *Flags) FlagChangeRequests(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) ([]FlagChangeRequest, error) {
	f, err := s.GetFlag(ctx, a, envID, key)
	if err != nil {
		return nil, err
	}
	return flagChangeRequests(ctx, s.Q, f.ID)
}

// withChangeRequests completes a flag's pending changes with its change
// requests not yet applied, as FeatBit's GetPendingChanges does: a request
// made with a schedule fills in that schedule's reason and reviewers; one
// without is a pending change of type ChangeRequest, newest first.
func withChangeRequests(ctx context.Context, q *db.Queries, flagID uuid.UUID, pending []PendingChange) ([]PendingChange, error) {
	requests, err := flagChangeRequests(ctx, q, flagID)
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
		var base, target Flag
		if err := json.Unmarshal(cr.DataChange.Previous, &base); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(cr.DataChange.Current, &target); err != nil {
			return nil, err
		}
		id := cr.ID
		pending = append(pending, PendingChange{ID: cr.ID, FlagID: cr.FlagID, DataChange: cr.DataChange,
			CreatorID: cr.CreatorID, CreatorName: cr.CreatorName, CreatedAt: cr.CreatedAt,
			Instructions: flagInstructions(cr.DataChange.Previous, cr.DataChange.Current), Type: PendingChangeRequest, Status: cr.Status, ChangeRequestID: &id, ChangeRequestReason: cr.Reason,
			Reviewers: reviewers, Comment: cr.Reason, Changed: core.OrEmpty(ChangedParts(base, target))})
	}
	return pending, nil
}
