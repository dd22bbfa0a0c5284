package governance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/sql/instructions"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Schedule statuses as stored. The API names them as FeatBit does
// (ScheduleStatusName).
const (
	SchedulePending   = "pending"
	ScheduleApplied   = "applied"
	ScheduleCancelled = "cancelled"
	ScheduleFailed    = "failed"
	// ScheduleReview waits for its change request's approval (0023), and
	// ScheduleDeclined ends there when the request is declined.
	ScheduleReview   = "review"
	ScheduleDeclined = "declined"
)

// ScheduleStatusName is a stored status as FeatBit's clients know it.
func ScheduleStatusName(status string) string {
	switch status {
	case SchedulePending:
		return "PendingExecution"
	case ScheduleApplied:
		return "Applied"
	case ScheduleCancelled:
		return "Cancelled"
	case ScheduleFailed:
		return "Failed"
	case ScheduleReview:
		return "PendingReview"
	case ScheduleDeclined:
		return "Declined"
	}
	return status
}

// MaxScheduleNoteLen bounds a schedule's note, in characters.
const MaxScheduleNoteLen = 512

// ScheduleInput schedules a change to a flag: FeatBit's CreateFlagSchedule
// body {revision, targeting, title, scheduledTime, withChangeRequest,
// reason, reviewers}, with targetFlag (the whole flag after the change),
// note and comment besides.
type ScheduleInput struct {
	flagstore.DraftInput
	Title         string     `json:"title"`
	Note          string     `json:"note"`
	ScheduledTime *time.Time `json:"scheduledTime"`
	// WithChangeRequest, Reason and Reviewers would make the schedule wait
	// for a change request's approval.
	WithChangeRequest bool        `json:"withChangeRequest"`
	Reason            string      `json:"reason"`
	Reviewers         []uuid.UUID `json:"reviewers"`
}

// Schedule is a change set to apply to a flag at a time.
type Schedule struct {
	ID            uuid.UUID  `json:"id"`
	FlagID        uuid.UUID  `json:"flagId"`
	DraftID       uuid.UUID  `json:"draftId"`
	Title         string     `json:"title"`
	Note          string     `json:"note"`
	ScheduledTime time.Time  `json:"scheduledTime"`
	Status        string     `json:"status"`
	FailureReason string     `json:"failureReason"`
	AppliedAt     *time.Time `json:"appliedAt"`
	CreatorID     uuid.UUID  `json:"creatorId"`
	CreatedAt     time.Time  `json:"createdAt"`
}

func scheduleFrom(r db.FlagSchedule) Schedule {
	return Schedule{ID: r.ID, FlagID: r.FlagID, DraftID: r.DraftID, Title: r.Title, Note: r.Note,
		ScheduledTime: r.ScheduledAt.UTC(), Status: r.Status, FailureReason: r.FailureReason, AppliedAt: r.AppliedAt,
		CreatorID: r.CreatorID, CreatedAt: r.CreatedAt.UTC()}
}

// CreateFlagSchedule stores a change to flag key, to be applied at
// in.ScheduledTime by the schedule worker of any instance. The caller must
// be allowed the change itself now, and the change is checked as if made
// now; at its time it is checked again, with its author's rights then.
func (s *Governance) CreateFlagSchedule(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in ScheduleInput) (Schedule, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return Schedule{}, err
	}
	return s.createFlagSchedule(ctx, a, env, key, in)
}

// createFlagSchedule is CreateFlagSchedule in env, read already.
func (s *Governance) createFlagSchedule(ctx context.Context, a *core.Actor, env core.EnvRow, key string, in ScheduleInput) (Schedule, error) {
	var v core.Validator
	in.Title = strings.TrimSpace(in.Title)
	v.Required("title", in.Title, core.MaxNameLen)
	v.Text("note", in.Note, MaxScheduleNoteLen)
	switch {
	case in.ScheduledTime == nil:
		v.Add("scheduledTime", "required")
	case !in.ScheduledTime.After(time.Now()):
		v.At("scheduledTime", "invalid", "scheduledTime", "the time has passed: choose a time in the future")
	}
	// Where changes need approval a schedule waits for a change request.
	switch needed := flagstore.ApprovalsNeeded(env.Environment) > 0; {
	case in.WithChangeRequest && !needed:
		return Schedule{}, flagstore.ErrChangeRequestsOff
	case !in.WithChangeRequest && needed:
		return Schedule{}, flagstore.ErrChangeRequestRequired
	case in.WithChangeRequest:
		v.Required("reason", in.Reason, core.MaxCommentLen)
	}
	if strings.TrimSpace(in.Comment) == "" {
		in.Comment = in.Reason
	}
	if err := v.Err(); err != nil {
		return Schedule{}, err
	}
	if in.WithChangeRequest {
		if err := flagstore.CheckReviewers(ctx, s.core.Q, a, env, in.Reviewers); err != nil {
			return Schedule{}, err
		}
	}
	var out Schedule
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		d, err := s.flags.CreateDraft(ctx, q, a, env, key, in.DraftInput)
		if err != nil {
			return err
		}
		params := db.CreateFlagScheduleParams{DraftID: d.ID, EnvID: d.EnvID, FlagID: d.FlagID,
			Title: in.Title, Note: in.Note, ScheduledAt: in.ScheduledTime.UTC(), Status: SchedulePending,
			CreatorID: core.ActorID(a), CreatorKind: core.ActorKind(a)}
		if in.WithChangeRequest {
			cr, err := s.flags.AddChangeRequest(ctx, q, a, env, d, in.Reason, in.Reviewers)
			if err != nil {
				return err
			}
			params.Status, params.ChangeRequestID = ScheduleReview, &cr.ID
		}
		row, err := q.CreateFlagSchedule(ctx, params)
		if err != nil {
			return err
		}
		out = scheduleFrom(row)
		return s.auditSchedule(ctx, q, a, core.OpCreate, env.Environment.ID, key, nil, &out)
	})
	return out, err
}

// scheduleRecord is what history keeps of a schedule at one step.
type scheduleRecord struct {
	Flag          string    `json:"flag"`
	Title         string    `json:"title"`
	ScheduledTime time.Time `json:"scheduledTime"`
	Status        string    `json:"status"`
}

// auditSchedule records a step of a schedule (made, cancelled) in its
// environment's history; applying it is the flag's own entry.
func (s *Governance) auditSchedule(ctx context.Context, q *db.Queries, a *core.Actor, op string, envID uuid.UUID, flagKey string, before, after *Schedule) error {
	ch := core.Change{RefType: "FlagSchedule", Operation: op, EnvID: &envID}
	for _, sch := range []*Schedule{before, after} {
		if sch != nil {
			ch.RefID, ch.Keyword = sch.ID.String(), flagKey+","+sch.Title
		}
	}
	if before != nil {
		ch.Previous = scheduleRecord{Flag: flagKey, Title: before.Title, ScheduledTime: before.ScheduledTime, Status: before.Status}
	}
	if after != nil {
		ch.Current = scheduleRecord{Flag: flagKey, Title: after.Title, ScheduledTime: after.ScheduledTime, Status: after.Status}
	}
	return s.core.Audit(ctx, q, a, ch)
}

// ErrScheduleNotPending refuses cancelling a schedule that was applied or
// cancelled already.
var ErrScheduleNotPending = &core.RuleError{Code: "FlagScheduleIsNotPending"}

// CancelFlagSchedule cancels a pending schedule, or dismisses a failed
// one, so it never applies. The caller must be allowed the change it
// would make.
func (s *Governance) CancelFlagSchedule(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.LockFlagSchedule(ctx, db.LockFlagScheduleParams{ID: id, EnvID: envID})
		if err != nil {
			return err
		}
		dr, err := q.LockFlagDraft(ctx, row.DraftID)
		if err != nil {
			return err
		}
		d, err := flagstore.DraftFrom(dr)
		if err != nil {
			return err
		}
		if err := flagstore.RequireFlagActions(a, env, flagstore.FlagChangeActions(d.Base, d.Target), d.Base, d.Target); err != nil {
			return err
		}
		if row.Status != SchedulePending && row.Status != ScheduleFailed {
			return ErrScheduleNotPending
		}
		if err := q.FinishFlagSchedule(ctx, db.FinishFlagScheduleParams{ID: id, Status: ScheduleCancelled, FailureReason: row.FailureReason}); err != nil {
			return err
		}
		before := scheduleFrom(row)
		after := before
		after.Status = ScheduleCancelled
		return s.auditSchedule(ctx, q, a, core.OpUpdate, envID, d.Base.Key, &before, &after)
	})
}

// PendingChange is one of a flag's changes waiting to be applied: FeatBit's
// PendingChangesVm, with the schedule's note and why it failed besides.
type PendingChange struct {
	ID          uuid.UUID            `json:"id"`
	FlagID      uuid.UUID            `json:"flagId"`
	DataChange  flagstore.DataChange `json:"dataChange"`
	CreatorID   uuid.UUID            `json:"creatorId"`
	CreatorName string               `json:"creatorName"`
	CreatedAt   time.Time            `json:"createdAt"`
	// Instructions are FeatBit's semantic patch of the change, as its
	// pending-changes drawer lists them (sql/instructions).
	Instructions  []instructions.Instruction `json:"instructions"`
	Type          string                     `json:"type"`
	Status        string                     `json:"status"`
	ScheduleTitle string                     `json:"scheduleTitle"`
	ScheduledTime time.Time                  `json:"scheduledTime"`
	// ChangeRequestID, ChangeRequestReason and Reviewers describe the change
	// request a schedule waits for; empty when none.
	ChangeRequestID     *uuid.UUID `json:"changeRequestId"`
	ChangeRequestReason string     `json:"changeRequestReason"`
	Reviewers           []any      `json:"reviewers"`
	Note                string     `json:"note"`
	Comment             string     `json:"comment"`
	FailureReason       string     `json:"failureReason"`
	// Changed names the parts of the flag the change writes.
	Changed []string `json:"changed"`
}

// Pending change types, FeatBit's names.
const (
	PendingSchedule      = "Schedule"
	PendingChangeRequest = "ChangeRequest"
)

// FlagPendingChanges lists a flag's scheduled changes that have not been
// applied or cancelled (failed ones stay, with their reason, until
// dismissed), soonest first: the first 100; then its change requests not
// yet applied, the first 100 (withChangeRequests).
func (s *Governance) FlagPendingChanges(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) ([]PendingChange, error) {
	_, out, err := s.FlagAndPendingChanges(ctx, a, envID, key)
	return out, err
}

// FlagAndPendingChanges is the flag (as GetFlag reads it) with its pending
// changes (FlagPendingChanges), for a page that shows both: the flag is
// read once.
func (s *Governance) FlagAndPendingChanges(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (flagstore.Flag, []PendingChange, error) {
	f, err := s.flags.GetFlag(ctx, a, envID, key)
	if err != nil {
		return flagstore.Flag{}, nil, err
	}
	rows, err := s.core.Q.ListFlagSchedules(ctx, f.ID)
	if err != nil {
		return flagstore.Flag{}, nil, core.Translate(err)
	}
	names, err := s.creatorNames(ctx, rows)
	if err != nil {
		return flagstore.Flag{}, nil, err
	}
	out := make([]PendingChange, len(rows))
	for i, r := range rows {
		sch := r.FlagSchedule
		var base, target flagstore.Flag
		if err := json.Unmarshal(r.Base, &base); err != nil {
			return flagstore.Flag{}, nil, err
		}
		if err := json.Unmarshal(r.Target, &target); err != nil {
			return flagstore.Flag{}, nil, err
		}
		name, ok := names[sch.CreatorID]
		if !ok {
			name = flagstore.Ghost.Name
		}
		out[i] = PendingChange{ID: sch.ID, FlagID: sch.FlagID, DataChange: flagstore.DataChange{Previous: r.Base, Current: r.Target},
			CreatorID: sch.CreatorID, CreatorName: name, CreatedAt: sch.CreatedAt.UTC(), Instructions: flagstore.FlagInstructions(r.Base, r.Target),
			Type: PendingSchedule, Status: ScheduleStatusName(sch.Status), ScheduleTitle: sch.Title,
			ScheduledTime: sch.ScheduledAt.UTC(), ChangeRequestID: sch.ChangeRequestID, Note: sch.Note,
			Comment: r.DraftComment, FailureReason: sch.FailureReason, Changed: core.OrEmpty(flagstore.ChangedParts(base, target))}
	}
	out, err = withChangeRequests(ctx, s.core.Q, f.ID, out)
	if err != nil {
		return flagstore.Flag{}, nil, err
	}
	return f, out, nil
}

// creatorNames names the creators of schedules, asking the database only
// when there are some.
func (s *Governance) creatorNames(ctx context.Context, rows []db.ListFlagSchedulesRow) (map[uuid.UUID]string, error) {
	names := make(map[uuid.UUID]string, len(rows))
	if len(rows) == 0 {
		return names, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.FlagSchedule.CreatorID
	}
	named, err := s.core.Q.ActorsByIDs(ctx, ids)
	if err != nil {
		return nil, core.Translate(err)
	}
	for _, n := range named {
		names[n.ID] = n.Name
	}
	return names, nil
}

// ApplyDueSchedule claims the schedule due longest and applies its draft,
// or records why it could not, in one transaction; the schedule runner
// (sql/runner) calls it until none is due. The schedule is claimed with FOR
// UPDATE SKIP LOCKED in that transaction, so of several instances on one
// database exactly one applies it, and a crash mid-way leaves it pending
// for the next. missedBefore is when the runner started, for its first pass
// (zero after): a schedule due before it was missed while no instance ran,
// and its history entry says so. It reports whether it claimed one.
func (s *Governance) ApplyDueSchedule(ctx context.Context, missedBefore time.Time) (bool, error) {
	claimed := false
	watch := s.core.WatchCommit()
	err := pgx.BeginFunc(ctx, s.core.Pool, func(tx pgx.Tx) error {
		q := core.Queries(tx)
		sch, err := q.ClaimDueFlagSchedule(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		claimed = true
		comment := fmt.Sprintf("Scheduled change %q", sch.Title)
		if !missedBefore.IsZero() && sch.ScheduledAt.Before(missedBefore) {
			comment += fmt.Sprintf(": applied at start; it was due at %s", sch.ScheduledAt.UTC().Format(time.RFC3339))
		}
		dr, err := q.LockFlagDraft(ctx, sch.DraftID)
		if err != nil {
			return err
		}
		if sch.ChangeRequestID != nil {
			// Due only once approved, with approvals that count now: one
			// that stopped counting puts it back under review, to wait.
			cr, _, err := s.settleChangeRequest(ctx, q, sch.EnvID, *sch.ChangeRequestID)
			if err != nil {
				return err
			}
			if cr.Status == flagstore.ChangeRequestPendingReview || cr.Status == flagstore.ChangeRequestDeclined {
				return nil
			}
		}
		if dr.Comment != "" {
			comment += ". " + dr.Comment
		}
		// The draft is applied in a savepoint: when it fails, the failure is
		// recorded in this same transaction, and nothing of it stays.
		applyErr := core.Translate(pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			_, err := s.applyDraft(ctx, core.Queries(sp), sch.DraftID, draftApplication{Operation: flagstore.OpApplyFlagSchedule,
				Comment: comment})
			return err
		}))
		if applyErr == nil {
			return q.FinishFlagSchedule(ctx, db.FinishFlagScheduleParams{ID: sch.ID, Status: ScheduleApplied})
		}
		if ctx.Err() != nil || errors.Is(applyErr, core.ErrUnavailable) {
			return applyErr // not the schedule's fault: it stays pending
		}
		reason := ScheduleFailureReason(applyErr)
		s.core.Log.Warn("scheduled change failed", "schedule", sch.ID, "flag", sch.FlagID, "reason", reason, "err", applyErr)
		return q.FinishFlagSchedule(ctx, db.FinishFlagScheduleParams{ID: sch.ID, Status: ScheduleFailed, FailureReason: reason})
	})
	if err == nil {
		s.core.Committed(watch)
	}
	return claimed, core.Translate(err)
}

// ScheduleFailureReason says in words why a draft could not be applied, as
// a failed schedule shows it; no internal error text.
func ScheduleFailureReason(err error) string {
	var conflict *flagstore.DraftConflictError
	var verr *core.ValidationError
	switch {
	case errors.As(err, &conflict):
		return conflict.Error() + "; nothing was applied"
	case errors.Is(err, core.ErrForbidden):
		return "its author may no longer make this change; nothing was applied"
	case errors.Is(err, flagstore.ErrFlagIsArchived):
		return "the flag is archived; nothing was applied"
	case errors.Is(err, flagstore.ErrChangeRequestRequired):
		return "changes in this environment need approval since this was scheduled; nothing was applied"
	case errors.Is(err, flagstore.ErrChangeRequestNotApproved):
		return "its change request no longer has the approvals it needs; nothing was applied"
	case errors.Is(err, flagstore.ErrDraftApplied):
		return "this change was applied already"
	case errors.As(err, &verr):
		var what []string
		for _, d := range verr.Details {
			w := d.Path
			if d.Message != "" {
				w += ": " + d.Message
			}
			what = append(what, w)
		}
		return "the change is no longer valid (" + strings.Join(what, "; ") + "); nothing was applied"
	}
	return "an internal error stopped it (see the server log); nothing was applied"
}
