package store

import (
	"context"
	"encoding/json"
	"testing"
)

// A trigger's change reaches webhooks like any other toggle, with the
// trigger named as the operator.
func TestTriggerChangeIsSentToWebhooks(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t)
	hookOn(t, s, a, prod, r.URL, "", EventFlagToggled)
	runWorker(t, s, fast)
	f, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	tr, err := s.CreateTrigger(ctx, a, TriggerInput{TargetID: f.ID, Type: TriggerTypeFlagGeneral, Action: TriggerTurnOn, Description: "Recovery"})
	must(t, err)
	if _, err := s.RunTrigger(ctx, tr.Token, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the toggle", func() bool { return len(r.received()) == 1 })
	var payload struct {
		Operator string `json:"operator"`
	}
	got := r.received()[0]
	if err := json.Unmarshal(got.body, &payload); err != nil || got.event != EventFlagToggled || payload.Operator != "Trigger “Recovery”" {
		t.Fatalf("got %s %s, want a toggle by Trigger “Recovery”", got.event, got.body)
	}
}
