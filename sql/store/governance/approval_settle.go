package governance

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// ScheduleFlagChange schedules a change to a flag of environment envID, as
// the pages do: where the environment's changes need approval (read here,
// so the store alone decides, as the change pipeline does for a change made
// now) the schedule waits for a change request of in's reason and
// reviewers; elsewhere these are not asked for.
func (s *Governance) ScheduleFlagChange(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, in ScheduleInput) (Schedule, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return Schedule{}, err
	}
	in.WithChangeRequest = flagstore.ApprovalsNeeded(env.Environment) > 0
	if !in.WithChangeRequest {
		in.Reason, in.Reviewers = "", nil
	}
	return s.createFlagSchedule(ctx, a, env, key, in)
}

// scheduleStatusOf is the status of a schedule that waits for a request of
// status: it applies at its time once the request is approved.
var scheduleStatusOf = map[string]string{flagstore.ChangeRequestPendingReview: ScheduleReview,
	flagstore.ChangeRequestApproved: SchedulePending, flagstore.ChangeRequestDeclined: ScheduleDeclined}

// settleChangeRequest gives change request id of EnvID, in q, the status
// its reviews give it now, with the schedule that waits for it: after each
// decision, and before it is applied, when an approval may have stopped
// counting since. It returns the request as settled and who may approve
// now.
func (s *Governance) settleChangeRequest(ctx context.Context, q *db.Queries, envID, id uuid.UUID) (flagstore.FlagChangeRequest, []flagstore.Approver, error) {
	er, err := q.GetEnvironmentByID(ctx, envID)
	if err != nil {
		return flagstore.FlagChangeRequest{}, nil, err
	}
	cr, err := s.flags.ChangeRequest(ctx, q, envID, id)
	if err != nil {
		return flagstore.FlagChangeRequest{}, nil, err
	}
	may, err := flagstore.Approvers(ctx, q, core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow(er)})
	if err != nil {
		return flagstore.FlagChangeRequest{}, nil, err
	}
	status := flagstore.ApprovalStatus(cr, may)
	if status == flagstore.ChangeRequestApplied {
		return cr, may, nil
	}
	if _, err := q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{ID: id, Status: status}); err != nil {
		return flagstore.FlagChangeRequest{}, nil, err
	}
	if err := q.SetChangeRequestScheduleStatus(ctx, db.SetChangeRequestScheduleStatusParams{ChangeRequestID: &id,
		Status: scheduleStatusOf[status]}); err != nil {
		return flagstore.FlagChangeRequest{}, nil, err
	}
	cr.Status = status
	return cr, may, nil
}
