package governance_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// scheduleSoon schedules in (a targetFlag body) on flag key, due after d.
func scheduleSoon(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, key, targetFlag string, d time.Duration) governance.Schedule {
	t.Helper()
	at := time.Now().Add(d)
	sch, err := s.Governance().CreateFlagSchedule(context.Background(), a, envID, key, governance.ScheduleInput{
		DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(targetFlag)}, Title: "Launch", ScheduledTime: &at})
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// backdate makes a schedule due now.
func backdate(t *testing.T, pool *pgxpool.Pool, id uuid.UUID, by time.Duration) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `UPDATE flag_schedules SET scheduled_at = now() - $2::interval WHERE id = $1`,
		id, by.String()); err != nil {
		t.Fatal(err)
	}
}

// withPay is a new store whose production environment has the flag "pay",
// which the tests here schedule changes to.
func withPay(t *testing.T) (*store.Store, *core.Actor, *pgxpool.Pool, core.Environment, flagstore.Flag) {
	t.Helper()
	s, a, pool := storetest.New(t)
	prod, _ := storetest.ProdAndDev(t, s, a)
	pay, err := s.Flags().CreateFlag(context.Background(), a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	return s, a, pool, prod, pay
}

// applyDue makes a schedule due now and runs the scheduler once, as its
// timer would; claimed is whether it took a schedule to apply.
func applyDue(t *testing.T, s *store.Store, pool *pgxpool.Pool, id uuid.UUID) (claimed bool) {
	t.Helper()
	backdate(t, pool, id, 0)
	claimed, err := s.Governance().ApplyDueSchedule(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return claimed
}

func scheduleStatus(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) (status, reason string) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT status, failure_reason FROM flag_schedules WHERE id = $1`, id).
		Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	return status, reason
}

func TestScheduleAppliesOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, f := withPay(t)
	ctx := context.Background()
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	backdate(t, pool, sch.ID, 0)

	// Several instances race for the one due schedule.
	var stores []*store.Store
	for range 4 {
		other, err := pgxpool.NewWithConfig(ctx, pool.Config())
		storetest.Must(t, err)
		t.Cleanup(other.Close)
		stores = append(stores, store.New(other, s.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{}))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	claims := 0
	for _, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claimed, err := st.Governance().ApplyDueSchedule(ctx, time.Time{})
			if err != nil {
				t.Error(err)
			}
			if claimed {
				mu.Lock()
				claims++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if claims != 1 {
		t.Fatalf("claimed %d times, want 1", claims)
	}
	got, err := s.Flags().GetFlag(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if !got.IsEnabled {
		st, r := scheduleStatus(t, pool, sch.ID)
		t.Fatalf("flag is still off after its schedule applied (%s: %s)", st, r)
	}
	if status, _ := scheduleStatus(t, pool, sch.ID); status != governance.ScheduleApplied {
		t.Fatalf("status %q, want applied", status)
	}
	applied := 0
	for _, e := range storetest.FlagHistory(t, s, a, prod.ID, f) {
		if e.Operation == flagstore.OpApplyFlagSchedule {
			applied++
			if !strings.Contains(e.Comment, `Scheduled change "Launch"`) {
				t.Errorf("history comment %q does not name the schedule", e.Comment)
			}
		}
	}
	if applied != 1 {
		t.Fatalf("history has %d applied schedules, want 1", applied)
	}
	pending, err := s.Governance().FlagPendingChanges(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if len(pending) != 0 {
		t.Fatalf("pending after applying: %+v", pending)
	}
}

func TestScheduleAppliesOnlyItsParts(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, _ := withPay(t)
	ctx := context.Background()
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	// Someone renames the flag meanwhile: another part, so the schedule applies.
	_, err := s.Flags().RenameFlag(ctx, a, prod.ID, "pay", flagstore.FlagNameInput{Name: "Payments"})
	storetest.Must(t, err)
	applyDue(t, s, pool, sch.ID)
	got, err := s.Flags().GetFlag(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if !got.IsEnabled || got.Name != "Payments" {
		t.Fatalf("got on=%v name=%q, want on and the new name kept", got.IsEnabled, got.Name)
	}
}

func TestScheduleConflictFailsVisibly(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, _ := withPay(t)
	ctx := context.Background()
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true,"name":"Pay v2"}`, time.Hour)
	_, err := s.Flags().RenameFlag(ctx, a, prod.ID, "pay", flagstore.FlagNameInput{Name: "Payments"})
	storetest.Must(t, err)
	applyDue(t, s, pool, sch.ID)
	got, err := s.Flags().GetFlag(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if got.IsEnabled || got.Name != "Payments" {
		t.Fatalf("half applied: on=%v name=%q", got.IsEnabled, got.Name)
	}
	status, reason := scheduleStatus(t, pool, sch.ID)
	if status != governance.ScheduleFailed || !strings.Contains(reason, "name changed") {
		t.Fatalf("status %q reason %q, want failed naming the name", status, reason)
	}
	pending, err := s.Governance().FlagPendingChanges(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if len(pending) != 1 || pending[0].Status != "Failed" || pending[0].FailureReason != reason {
		t.Fatalf("pending changes %+v, want the failed one with its reason", pending)
	}
}

func TestCancelledScheduleNeverApplies(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, _ := withPay(t)
	ctx := context.Background()
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	storetest.Must(t, s.Governance().CancelFlagSchedule(ctx, a, prod.ID, sch.ID))
	if claimed := applyDue(t, s, pool, sch.ID); claimed {
		t.Fatalf("claimed=%v, want nothing to claim", claimed)
	}
	got, err := s.Flags().GetFlag(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if got.IsEnabled {
		t.Fatal("a cancelled schedule applied")
	}
	if err := s.Governance().CancelFlagSchedule(ctx, a, prod.ID, sch.ID); !errors.Is(err, governance.ErrScheduleNotPending) {
		t.Fatalf("cancelling twice: got %v, want %v", err, governance.ErrScheduleNotPending)
	}
	// Making and cancelling it are in the environment's history.
	var steps []string
	rows, err := pool.Query(ctx, `SELECT operation || ' ' || (current->>'status') FROM audit_logs
		WHERE ref_type = 'FlagSchedule' AND ref_id = $1 AND env_id = $2 ORDER BY created_at`, sch.ID.String(), prod.ID)
	storetest.Must(t, err)
	for rows.Next() {
		var step string
		storetest.Must(t, rows.Scan(&step))
		steps = append(steps, step)
	}
	storetest.Must(t, rows.Err())
	if want := []string{"Create pending", "Update cancelled"}; !slices.Equal(steps, want) {
		t.Errorf("history of the schedule: %q, want %q", steps, want)
	}
}

func TestScheduleInputIsChecked(t *testing.T) {
	t.Parallel()
	s, a, _, prod, _ := withPay(t)
	ctx := context.Background()
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name string
		in   governance.ScheduleInput
		code string
	}{
		{"past", governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(`{"isEnabled":true}`)}, Title: "x", ScheduledTime: &past}, "scheduledTime_is_invalid"},
		{"no time", governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(`{"isEnabled":true}`)}, Title: "x"}, "scheduledTime_is_required"},
		{"no title", governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(`{"isEnabled":true}`)}, ScheduledTime: &future}, "title_is_required"},
		{"no change", governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(`{"isEnabled":false}`)}, Title: "x", ScheduledTime: &future}, "targetFlag_is_invalid"},
		{"nothing named", governance.ScheduleInput{Title: "x", ScheduledTime: &future}, "targetFlag_is_required"},
	} {
		_, err := s.Governance().CreateFlagSchedule(ctx, a, prod.ID, "pay", tc.in)
		if got := core.Classify(err); got.Status != 400 || !strings.Contains(strings.Join(got.Codes, ","), tc.code) {
			t.Errorf("%s: got %d %v, want 400 %s", tc.name, got.Status, got.Codes, tc.code)
		}
	}
}

// A change scheduled with an access token applies while the token is
// active, attributed to the token, and fails once it is turned off.
func TestScheduleByAccessToken(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, f := withPay(t)
	ctx := context.Background()
	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship"})
	storetest.Must(t, err)
	tok, err := s.Tokens().CreateAccessToken(ctx, a, accesstokens.AccessTokenInput{Name: "deploy", Type: core.TokenPersonal})
	storetest.Must(t, err)
	ta, err := s.IAM().Authenticate(ctx, iam.Credentials{Authorization: tok.Token})
	storetest.Must(t, err)

	applies := scheduleSoon(t, s, ta, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	applyDue(t, s, pool, applies.ID)
	if status, reason := scheduleStatus(t, pool, applies.ID); status != governance.ScheduleApplied {
		t.Fatalf("status %q (%s), want applied", status, reason)
	}
	history := storetest.FlagHistory(t, s, a, prod.ID, f)
	if history[0].Operation != flagstore.OpApplyFlagSchedule || history[0].CreatorID != tok.ID {
		t.Errorf("latest history entry %s by %s, want the schedule by the token %s", history[0].Operation, history[0].CreatorID, tok.ID)
	}

	fails := scheduleSoon(t, s, ta, prod.ID, "ship", `{"isEnabled":true}`, time.Hour)
	_, err = s.Tokens().ToggleAccessToken(ctx, a, tok.ID)
	storetest.Must(t, err)
	applyDue(t, s, pool, fails.ID)
	if status, reason := scheduleStatus(t, pool, fails.ID); status != governance.ScheduleFailed || !strings.Contains(reason, "may no longer") {
		t.Fatalf("status %q reason %q, want failed: its author may no longer make it", status, reason)
	}
}

// An applied schedule is a change like any other: webhooks hear of it once.
func TestScheduleReachesWebhooks(t *testing.T) {
	t.Parallel()
	s, a, prod := storetest.LoopbackStore(t)
	ctx := context.Background()
	storetest.HookOn(t, s, a, prod, "https://hooks.example.com/x", "a-webhook-secret", webhooks.EventFlagToggled)
	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	applyDue(t, s, storetest.Pool(t, s), sch.ID)
	if got := storetest.DeliverQueued(t, s); len(got) != 1 || got[0].Events != webhooks.EventFlagToggled {
		t.Fatalf("queued %+v, want one %s", got, webhooks.EventFlagToggled)
	}
}

// A flag holds at most MaxOpenFlagChanges changes to come; past that a new
// one is refused and writes nothing, and cancelling one makes room.
func TestOpenFlagChangesAreBounded(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, _ := withPay(t)
	ctx := context.Background()
	var first governance.Schedule
	for i := range flagstore.MaxOpenFlagChanges {
		sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour+time.Duration(i)*time.Minute)
		if i == 0 {
			first = sch
		}
	}
	at := time.Now().Add(time.Hour)
	_, err := s.Governance().CreateFlagSchedule(ctx, a, prod.ID, "pay", governance.ScheduleInput{
		DraftInput: flagstore.DraftInput{TargetFlag: json.RawMessage(`{"isEnabled":true}`)}, Title: "One more", ScheduledTime: &at})
	if !errors.Is(err, flagstore.ErrTooManyPendingChanges) {
		t.Fatalf("schedule %d: got %v, want %v", flagstore.MaxOpenFlagChanges+1, err, flagstore.ErrTooManyPendingChanges)
	}
	var drafts int
	storetest.Must(t, pool.QueryRow(ctx, `SELECT count(*) FROM flag_drafts`).Scan(&drafts))
	if drafts != flagstore.MaxOpenFlagChanges {
		t.Errorf("%d drafts stored, want %d: the refused one left one behind", drafts, flagstore.MaxOpenFlagChanges)
	}
	storetest.Must(t, s.Governance().CancelFlagSchedule(ctx, a, prod.ID, first.ID))
	scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, 2*time.Hour)
}

// A schedule made before its environment began to need approval does not
// slip past it: at its time it fails, saying why, and changes nothing.
func TestScheduleRespectsApprovalTurnedOnLater(t *testing.T) {
	t.Parallel()
	s, a, pool, prod, _ := withPay(t)
	ctx := context.Background()
	sch := scheduleSoon(t, s, a, prod.ID, "pay", `{"isEnabled":true}`, time.Hour)
	_, err := pool.Exec(ctx, `UPDATE environments SET change_request_enabled = true WHERE id = $1`, prod.ID)
	storetest.Must(t, err)
	if claimed := applyDue(t, s, pool, sch.ID); !claimed {
		t.Fatalf("claimed=%v", claimed)
	}
	if status, reason := scheduleStatus(t, pool, sch.ID); status != governance.ScheduleFailed || !strings.Contains(reason, "need approval") {
		t.Errorf("status %q, reason %q: want failed, needing approval", status, reason)
	}
	if got, _ := s.Flags().GetFlag(ctx, a, prod.ID, "pay"); got.IsEnabled {
		t.Error("the schedule turned the flag on without approval")
	}
}
