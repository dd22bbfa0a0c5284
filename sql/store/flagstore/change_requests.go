package flagstore

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

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

// Edit applies the request's parts to a flag, as the direct routes do.
func (in FlagChangeRequestInput) Edit(f *Flag) {
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

// AddChangeRequest stores a change request for a draft, with its reviewers
// (checked by checkReviewers), and records it in the environment's history.
func (s *Flags) AddChangeRequest(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, d Draft, reason string, reviewers []uuid.UUID) (FlagChangeRequest, error) {
	row, err := q.CreateFlagChangeRequest(ctx, db.CreateFlagChangeRequestParams{DraftID: d.ID, EnvID: d.EnvID,
		FlagID: d.FlagID, Reason: strings.TrimSpace(reason), ApprovalsRequired: env.Environment.ApprovalsRequired, CreatorID: a.UserID})
	if err != nil {
		return FlagChangeRequest{}, err
	}
	if err := q.AddChangeRequestReviewers(ctx, db.AddChangeRequestReviewersParams{ChangeRequestID: row.ID, MemberIds: reviewers}); err != nil {
		return FlagChangeRequest{}, err
	}
	cr, err := s.ChangeRequest(ctx, q, d.EnvID, row.ID)
	if err != nil {
		return FlagChangeRequest{}, err
	}
	return cr, s.AuditChangeRequest(ctx, q, a, core.OpCreate, nil, &cr)
}

// ChangeRequestRecord is what history keeps of a change request at one
// step: the flag, the reason, the status and each reviewer's decision.
type ChangeRequestRecord struct {
	Flag    string   `json:"flag"`
	Reason  string   `json:"reason"`
	Status  string   `json:"status"`
	Reviews []string `json:"reviews"`
}

// AuditChangeRequest records a step of a change request (made, reviewed,
// withdrawn) in its environment's history; applying it is the flag's own
// entry.
func (s *Flags) AuditChangeRequest(ctx context.Context, q *db.Queries, a *core.Actor, op string, before, after *FlagChangeRequest) error {
	ch := core.Change{RefType: "FlagChangeRequest", Operation: op}
	record := func(cr *FlagChangeRequest) *ChangeRequestRecord {
		r := &ChangeRequestRecord{Flag: cr.FlagKey, Reason: cr.Reason, Status: cr.Status, Reviews: []string{}}
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
	return s.core.Audit(ctx, q, a, ch)
}

func (s *Flags) ChangeRequest(ctx context.Context, q *db.Queries, envID, id uuid.UUID) (FlagChangeRequest, error) {
	row, err := q.GetFlagChangeRequest(ctx, db.GetFlagChangeRequestParams{EnvID: envID, ID: id})
	if err != nil {
		return FlagChangeRequest{}, core.Translate(err)
	}
	out, err := WithReviewers(ctx, q, []ChangeRequestRow{ChangeRequestRow(row)})
	if err != nil {
		return FlagChangeRequest{}, err
	}
	return out[0], nil
}

// ChangeRequestRow is a request as the queries that list them answer.
type ChangeRequestRow db.GetFlagChangeRequestRow

// WithReviewers turns rows into requests with their reviewers.
func WithReviewers(ctx context.Context, q *db.Queries, rows []ChangeRequestRow) ([]FlagChangeRequest, error) {
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
			ScheduleID: r.ScheduleID, DataChange: DataChange{Previous: r.Base, Current: r.Target}, CreatorID: cr.CreatorID, CreatorName: PersonName(r.CreatorName, r.CreatorEmail),
			CreatedAt: cr.CreatedAt.UTC(), UpdatedAt: cr.UpdatedAt.UTC()}
		var base, target struct {
			IsArchived bool `json:"isArchived"`
		}
		if json.Unmarshal(r.Base, &base) == nil && json.Unmarshal(r.Target, &target) == nil {
			out[i].NewFlag = base.IsArchived && !target.IsArchived
		}
		for _, rv := range reviews {
			if rv.ChangeRequestID == cr.ID {
				out[i].Reviewers = append(out[i].Reviewers, Reviewer{MemberID: rv.MemberID, Name: PersonName(rv.Name, rv.Email),
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

// PersonName is how a person is named: by name, else by email.
func PersonName(name, email string) string {
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

// FlagChangeRequests lists a flag's requests not yet applied, newest first.
func FlagChangeRequests(ctx context.Context, q *db.Queries, flagID uuid.UUID) ([]FlagChangeRequest, error) {
	rows, err := q.ListFlagChangeRequests(ctx, flagID)
	if err != nil {
		return nil, core.Translate(err)
	}
	list := make([]ChangeRequestRow, len(rows))
	for i, r := range rows {
		list[i] = ChangeRequestRow(r)
	}
	return WithReviewers(ctx, q, list)
}

// Change request events: a request made, approved, declined or applied.
// FeatBit has none; Bunting's webhooks may subscribe to them in either
// format.
const (
	EventChangeRequestCreated  = "change_request.created"
	EventChangeRequestApproved = "change_request.approved"
	EventChangeRequestDeclined = "change_request.declined"
	EventChangeRequestApplied  = "change_request.applied"
)
