package governance_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// A trigger's change reaches webhooks like any other toggle, with the
// trigger named as the operator.
func TestTriggerChangeIsSentToWebhooks(t *testing.T) {
	t.Parallel()
	s, a, prod := storetest.LoopbackStore(t)
	ctx := context.Background()
	storetest.HookOn(t, s, a, prod, "https://hooks.example.com/x", "", webhooks.EventFlagToggled)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	tr, err := s.Governance().CreateTrigger(ctx, a, governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral, Action: governance.TriggerTurnOn, Description: "Recovery"})
	storetest.Must(t, err)
	if _, err := s.Governance().RunTrigger(ctx, tr.Token, nil); err != nil {
		t.Fatal(err)
	}
	queued := storetest.DeliverQueued(t, s)
	if len(queued) != 1 {
		t.Fatalf("%d deliveries queued, want the toggle's", len(queued))
	}
	var payload struct {
		Operator string `json:"operator"`
	}
	got := queued[0]
	if err := json.Unmarshal(got.Payload, &payload); err != nil || got.Events != webhooks.EventFlagToggled || payload.Operator != "Trigger “Recovery”" {
		t.Fatalf("got %s %s, want a toggle by Trigger “Recovery”", got.Events, got.Payload)
	}
}

// A trigger disabled while a call is under way changes nothing: the count
// and the toggle commit together, and only while the trigger is enabled.
func TestTriggerDisabledDuringACallChangesNothing(t *testing.T) {
	t.Parallel()
	s, a, prod := storetest.LoopbackStore(t)
	ctx := context.Background()
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	tr, err := s.Governance().CreateTrigger(ctx, a, governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral, Action: governance.TriggerTurnOn, Description: "Recovery"})
	storetest.Must(t, err)

	// Someone disables the trigger; their transaction has not committed yet.
	tx, err := storetest.Pool(t, s).Begin(ctx)
	storetest.Must(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `UPDATE flag_triggers SET is_enabled = false WHERE id = $1`, tr.ID)
	storetest.Must(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := s.Governance().RunTrigger(ctx, tr.Token, nil)
		done <- err
	}()
	// The call has turned the flag on in its transaction and waits to count the run.
	storetest.WaitUntil(t, "the call to wait for the trigger's row", func() bool {
		var waiting bool
		storetest.Must(t, storetest.Pool(t, s).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE flag_triggers SET triggered_times%')`).Scan(&waiting))
		return waiting
	})
	storetest.Must(t, tx.Commit(ctx))
	if err := <-done; err != core.ErrNotFound {
		t.Fatalf("a call to a trigger disabled meanwhile: %v, want ErrNotFound", err)
	}
	got, err := s.Flags().GetFlag(ctx, a, prod.ID, "pay")
	storetest.Must(t, err)
	if got.IsEnabled || got.Revision != f.Revision {
		t.Errorf("the flag changed: on=%v, revision %s → %s", got.IsEnabled, f.Revision, got.Revision)
	}
	list, err := s.Governance().ListTriggers(ctx, a, f.ID)
	storetest.Must(t, err)
	if len(list) != 1 || list[0].TriggeredTimes != 0 {
		t.Errorf("the call was counted: %+v", list)
	}
}
