package governance_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestTheStoreDecidesBetweenAChangeAndARequest: a page sends every change
// to what a flag serves with a proposal; the environment's setting, read by
// the store, decides whether it is made at once or becomes a change
// request, and a change without a proposal is refused where one is needed.
func TestTheStoreDecidesBetweenAChangeAndARequest(t *testing.T) {
	t.Parallel()
	s, owner, pool := storetest.New(t)
	ctx := context.Background()
	prod, dev := storetest.ProdAndDev(t, s, owner)
	alice := storetest.OwnerMember(t, s, owner, pool, "alice@example.com")
	bob := storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	for _, env := range []uuid.UUID{prod.ID, dev.ID} {
		_, err := s.Flags().CreateFlag(ctx, owner, env, flagstore.FlagInput{Name: "Pay", Key: "pay"})
		storetest.Must(t, err)
	}
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	on := true
	proposal := &flagstore.Proposal{Reason: "Launch payments", Reviewers: []uuid.UUID{bob.UserID}}

	// Where changes need no approval, the proposal is not used.
	out, err := s.Flags().ChangeServing(ctx, alice, dev.ID, "pay", flagstore.ServingChange{IsEnabled: &on, Proposal: proposal})
	storetest.Must(t, err)
	if out.Request != nil || !out.Changed.IsEnabled {
		t.Fatalf("dev: request %+v, flag on %v; want the flag turned on at once", out.Request, out.Changed.IsEnabled)
	}

	// Where they do, without a proposal the change is refused...
	_, err = s.Flags().ChangeServing(ctx, alice, prod.ID, "pay", flagstore.ServingChange{IsEnabled: &on})
	storetest.WantRule(t, "no proposal", err, "ChangeRequestRequired")
	// ...and with one it waits for its reviewers, the flag as it was.
	out, err = s.Flags().ChangeServing(ctx, alice, prod.ID, "pay", flagstore.ServingChange{IsEnabled: &on, Proposal: proposal})
	storetest.Must(t, err)
	if out.Request == nil || out.Request.Reason != "Launch payments" || len(out.Request.Reviewers) != 1 || out.Changed.IsEnabled {
		t.Fatalf("prod: request %+v, flag on %v; want a request and the flag still off", out.Request, out.Changed.IsEnabled)
	}
	if got, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || got.IsEnabled {
		t.Fatalf("prod's flag after the request: on %v (%v), want off", got.IsEnabled, err)
	}
	pending, err := s.Governance().FlagPendingChanges(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	if len(pending) != 1 || pending[0].ChangeRequestID == nil || *pending[0].ChangeRequestID != out.Request.ID {
		t.Fatalf("prod's pending changes %+v, want the request made", pending)
	}
	// A proposal is checked as a request: its reviewers must be enough.
	_, err = s.Flags().ChangeServing(ctx, alice, prod.ID, "pay", flagstore.ServingChange{IsEnabled: &on,
		Proposal: &flagstore.Proposal{Reason: "Launch payments"}})
	storetest.WantInvalid(t, "no reviewers", err, "reviewers_is_required")
}
