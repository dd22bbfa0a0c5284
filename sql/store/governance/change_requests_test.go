package governance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

func TestChangeRequestNeedsItsApprovalsAndAppliesThroughTheNormalPath(t *testing.T) {
	t.Parallel()
	s, owner, pool, prod, alice, bob, carol := requestCast(t)
	ctx := context.Background()
	f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	storetest.ApprovalEnv(t, s, owner, prod, 2, alice, bob, carol)

	// Nobody changes what the flag serves directly, owners included; its
	// name is no such change.
	_, err = s.Flags().ToggleFlag(ctx, owner, prod.ID, "pay", true, flagstore.Change{})
	storetest.WantRule(t, "owner's direct toggle", err, "ChangeRequestRequired")
	trigger, err := s.Governance().CreateTrigger(ctx, owner, governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral, Action: governance.TriggerTurnOn})
	storetest.Must(t, err)
	_, err = s.Governance().RunTrigger(ctx, trigger.Token, nil)
	storetest.WantRule(t, "a trigger's call", err, "ChangeRequestRequired")
	_, err = s.Flags().SetFlagOffVariation(ctx, alice, prod.ID, "pay", flagstore.OffVariationInput{OffVariationID: f.Variations[0].ID})
	storetest.WantRule(t, "direct off variation", err, "ChangeRequestRequired")
	if _, err := s.Flags().RenameFlag(ctx, owner, prod.ID, "pay", flagstore.FlagNameInput{Name: "Payments"}); err != nil {
		t.Fatalf("rename: %v", err)
	}

	on := true
	request := func(reviewers ...*core.Actor) flagstore.FlagChangeRequestInput {
		in := flagstore.FlagChangeRequestInput{IsEnabled: &on, Reason: "Launch payments", Reviewers: []uuid.UUID{}}
		for _, r := range reviewers {
			in.Reviewers = append(in.Reviewers, r.UserID)
		}
		return in
	}
	_, err = s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", request(alice, bob))
	storetest.WantInvalid(t, "author as reviewer", err, "reviewers_is_invalid")
	_, err = s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", request(bob))
	storetest.WantInvalid(t, "too few reviewers", err, "reviewers_is_invalid")
	_, err = s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", request(bob, owner))
	storetest.WantInvalid(t, "a reviewer who may not approve", err, "reviewers_is_invalid")
	noReason := request(bob, carol)
	noReason.Reason = " "
	_, err = s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", noReason)
	storetest.WantInvalid(t, "no reason", err, "reason_is_required")
	off := false
	same := request(bob, carol)
	same.IsEnabled = &off
	_, err = s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", same)
	storetest.WantRule(t, "a request changing nothing", err, "ChangeRequestChangesNothing")
	if n := count(t, pool, `SELECT count(*) FROM flag_drafts`); n != 0 {
		t.Fatalf("refused requests left %d drafts", n)
	}

	cr, err := s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", request(bob, carol))
	storetest.Must(t, err)
	if cr.Status != flagstore.ChangeRequestPendingReview || cr.ApprovalsRequired != 2 || len(cr.Reviewers) != 2 || cr.CreatorID != alice.UserID {
		t.Fatalf("created request: %+v", cr)
	}
	if got, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || got.IsEnabled {
		t.Fatalf("a request changed the flag: %+v, %v", got, err)
	}
	waiting, err := s.Governance().ListAwaitingReview(ctx, bob, prod.ID)
	if err != nil || len(waiting) != 1 || waiting[0].ID != cr.ID {
		t.Fatalf("bob's reviews: %+v, %v", waiting, err)
	}

	_, err = s.Governance().ApproveFlagChangeRequest(ctx, alice, prod.ID, cr.ID, governance.ReviewInput{})
	storetest.WantRule(t, "author approves", err, "CannotReviewOwnChangeRequest")
	_, err = s.Governance().ApproveFlagChangeRequest(ctx, owner, prod.ID, cr.ID, governance.ReviewInput{})
	storetest.WantRule(t, "not a reviewer approves", err, "NotAReviewerOfChangeRequest")

	got, err := s.Governance().ApproveFlagChangeRequest(ctx, bob, prod.ID, cr.ID, governance.ReviewInput{Comment: "fine by me"})
	storetest.Must(t, err)
	if got.Status != flagstore.ChangeRequestPendingReview || got.Approvals() != 1 {
		t.Fatalf("after one of two approvals: %+v", got)
	}
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr.ID)
	storetest.WantRule(t, "apply with 1 of 2 approvals", err, "ChangeRequestNotApproved")
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, owner, prod.ID, cr.ID)
	if !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("apply by someone neither author nor reviewer: got %v, want forbidden", err)
	}

	if got, err = s.Governance().ApproveFlagChangeRequest(ctx, carol, prod.ID, cr.ID, governance.ReviewInput{}); err != nil || got.Status != flagstore.ChangeRequestApproved {
		t.Fatalf("after two approvals: %+v, %v", got, err)
	}
	before, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	history := len(storetest.FlagHistory(t, s, owner, prod.ID, before))
	sub := storetest.Listen(t, s)
	applied, err := s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr.ID)
	storetest.Must(t, err)
	if !applied.IsEnabled || applied.Revision == before.Revision || applied.Name != "Payments" {
		t.Fatalf("applied flag: on %v, revision %v (was %v), name %q", applied.IsEnabled, applied.Revision, before.Revision, applied.Name)
	}
	entries := storetest.FlagHistory(t, s, owner, prod.ID, before)
	if len(entries) != history+1 || entries[0].Operation != flagstore.OpApplyFlagChangeRequest ||
		entries[0].Comment != "Launch payments (change request approved by bob, carol; applied by alice)" || entries[0].CreatorID != alice.UserID {
		t.Fatalf("history: %d entries (had %d), newest %s by %s: %q", len(entries), history, entries[0].Operation, entries[0].CreatorName, entries[0].Comment)
	}
	for {
		ev := storetest.Next(t, sub)
		if ev.Kind == feed.EventFlag && ev.ID == before.ID {
			break // pushed to SDKs
		}
	}
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr.ID)
	storetest.WantRule(t, "apply twice", err, "ChangeRequestAlreadyApplied")
	if pending, err := s.Governance().FlagChangeRequests(ctx, owner, prod.ID, "pay"); err != nil || len(pending) != 0 {
		t.Fatalf("an applied request is still pending: %+v, %v", pending, err)
	}
}

func TestDeclinedChangeRequestCannotBeAppliedAndIsWithdrawnByItsAuthor(t *testing.T) {
	t.Parallel()
	s, owner, pool, prod, alice, bob, _ := requestCast(t)
	ctx := context.Background()
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)

	on := true
	cr, err := s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", flagstore.FlagChangeRequestInput{IsEnabled: &on, Reason: "Launch", Reviewers: []uuid.UUID{bob.UserID}})
	storetest.Must(t, err)
	if got, err := s.Governance().DeclineFlagChangeRequest(ctx, bob, prod.ID, cr.ID, governance.ReviewInput{Comment: "not before Monday"}); err != nil || got.Status != flagstore.ChangeRequestDeclined {
		t.Fatalf("declined: %+v, %v", got, err)
	}
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr.ID)
	storetest.WantRule(t, "apply declined", err, "ChangeRequestDeclined")
	if got, err := s.Governance().GetFlagChangeRequest(ctx, alice, prod.ID, cr.ID); err != nil || got.Reviewers[0].Comment != "not before Monday" {
		t.Fatalf("the decline's comment: %+v, %v", got, err)
	}
	if err := s.Governance().DeleteFlagChangeRequest(ctx, bob, prod.ID, cr.ID); !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("withdrawn by a reviewer: got %v, want forbidden", err)
	}
	storetest.Must(t, s.Governance().DeleteFlagChangeRequest(ctx, alice, prod.ID, cr.ID))
	if _, err := s.Governance().GetFlagChangeRequest(ctx, alice, prod.ID, cr.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("withdrawn request: got %v, want not found", err)
	}
	if n := count(t, pool, `SELECT count(*) FROM flag_drafts`); n != 0 {
		t.Fatalf("withdrawing left %d drafts", n)
	}
	if f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || f.IsEnabled {
		t.Fatalf("flag after a declined request: %+v, %v", f, err)
	}
	// Each step is in the environment's history, by whoever took it.
	rows, err := pool.Query(ctx, `SELECT operation, creator_id, coalesce(current->>'status', previous->>'status'), coalesce(current::text, '')
		FROM audit_logs WHERE ref_type = 'FlagChangeRequest' AND ref_id = $1 AND env_id = $2 ORDER BY created_at`, cr.ID.String(), prod.ID)
	storetest.Must(t, err)
	var steps []string
	for rows.Next() {
		var op, status, current string
		var by uuid.UUID
		storetest.Must(t, rows.Scan(&op, &by, &status, &current))
		who := map[uuid.UUID]string{alice.UserID: "alice", bob.UserID: "bob"}[by]
		steps = append(steps, op+" "+status+" by "+who)
		if op == core.OpUpdate && !strings.Contains(current, "declined (not before Monday)") {
			t.Errorf("the review's entry does not say the decision: %s", current)
		}
	}
	storetest.Must(t, rows.Err())
	want := []string{"Create PendingReview by alice", "Update Declined by bob", "Remove Declined by alice"}
	if !slices.Equal(steps, want) {
		t.Errorf("history of the request: %q, want %q", steps, want)
	}
}

func TestScheduleWithChangeRequestWaitsForApproval(t *testing.T) {
	t.Parallel()
	s, owner, pool, prod, alice, bob, _ := requestCast(t)
	ctx := context.Background()
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)

	at := time.Now().Add(time.Hour)
	in := governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: []byte(`{"isEnabled":true}`)}, Title: "Launch", ScheduledTime: &at}
	_, err := s.Governance().CreateFlagSchedule(ctx, alice, prod.ID, "pay", in)
	storetest.WantRule(t, "schedule without a change request", err, "ChangeRequestRequired")
	in.WithChangeRequest, in.Reason, in.Reviewers = true, "Launch on time", []uuid.UUID{bob.UserID}
	sch, err := s.Governance().CreateFlagSchedule(ctx, alice, prod.ID, "pay", in)
	storetest.Must(t, err)
	if status, _ := scheduleStatus(t, pool, sch.ID); status != governance.ScheduleReview {
		t.Fatalf("schedule status before approval: %s", status)
	}
	pending, err := s.Governance().FlagChangeRequests(ctx, owner, prod.ID, "pay")
	if err != nil || len(pending) != 1 || pending[0].ScheduleID == nil || *pending[0].ScheduleID != sch.ID {
		t.Fatalf("the schedule's request: %+v, %v", pending, err)
	}
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, pending[0].ID)
	storetest.WantRule(t, "apply a scheduled request by hand", err, "ChangeRequestNotApproved")
	if _, err := s.Governance().ApproveFlagChangeRequest(ctx, bob, prod.ID, pending[0].ID, governance.ReviewInput{}); err != nil {
		t.Fatal(err)
	}
	if status, _ := scheduleStatus(t, pool, sch.ID); status != governance.SchedulePending {
		t.Fatalf("schedule status after approval: %s", status)
	}
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, pending[0].ID)
	storetest.WantRule(t, "apply a scheduled request by hand", err, "ChangeRequestIsScheduled")
}

func TestApprovalSettingIsChecked(t *testing.T) {
	t.Parallel()
	s, owner, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	bob := storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	set := func(cr core.ChangeRequestSettings) error {
		_, err := s.Projects().UpdateEnvironment(ctx, owner, prod.ProjectID, prod.ID, core.EnvironmentInput{Name: "Prod",
			Settings: &core.EnvSettings{ChangeRequest: &cr}})
		return err
	}
	storetest.WantInvalid(t, "0 approvals", set(core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 0, ApproverMemberIDs: []uuid.UUID{bob.UserID}}), "approvalsRequired_is_invalid")
	storetest.WantInvalid(t, "nobody may approve", set(core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1}), "approverMemberIds_is_required")
	storetest.WantInvalid(t, "a stranger", set(core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1, ApproverMemberIDs: []uuid.UUID{uuid.New()}}), "approverMemberIds_is_invalid")
	storetest.WantInvalid(t, "more approvals than approvers", set(core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 2, ApproverMemberIDs: []uuid.UUID{bob.UserID}}), "approvalsRequired_is_invalid")
	env, err := s.Projects().GetEnvironment(ctx, owner, prod.ProjectID, prod.ID)
	storetest.Must(t, err)
	if env.Settings.ChangeRequest.IsEnabled {
		t.Fatalf("a refused setting was stored: %+v", env.Settings.ChangeRequest)
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string) int {
	t.Helper()
	var n int
	storetest.Must(t, pool.QueryRow(context.Background(), sql).Scan(&n))
	return n
}
