package sdk_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/web/limit"
)

// An alerting system calls a trigger's URL (the API runs it with the
// store): a connected SDK is sent the flag turned off.
func TestTriggerTurnsFlagOffForSDKs(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	fx := seed(prod)
	on := prod.put("/ft-bool/toggle/true", map[string]any{})
	if !on.IsEnabled {
		t.Fatal("ft-bool is not on")
	}
	ctx := context.Background()
	tr, err := in.store.Governance().CreateTrigger(ctx, prod.owner, input[governance.TriggerInput](t, map[string]any{"targetId": fx.flags["ft-bool"].ID,
		"type": "feature-flag-general", "action": "turn-off", "description": "Checkout alert"}))
	must(t, err)
	in.settle()
	server := in.dial("server", prod.server)
	server.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	server.readSync(5 * time.Second)

	start := time.Now()
	_, err = in.store.Governance().RunTrigger(ctx, tr.Token, limit.NewEdge().AllowTriggerRun)
	answered := time.Since(start)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p := server.readUntil(start.Add(pushWait), "ft-bool")
	if p.Data.EventType != "patch" || !slices.Equal(keys(p.Data.FeatureFlags, "key"), []string{"ft-bool"}) {
		t.Fatalf("push: %s %v", p.Data.EventType, keys(p.Data.FeatureFlags, "key"))
	}
	var pushed flagstore.Flag
	json.Unmarshal(p.Data.FeatureFlags[0], &pushed)
	if pushed.IsEnabled || pushed.Revision == on.Revision {
		t.Errorf("pushed %+v, want ft-bool off under a new revision", pushed)
	}
	t.Logf("trigger call answered in %v, pushed to the SDK in %v", answered, time.Since(start))
}
