package flagstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestNewFlagsWaitForApproval: where changes need approval, a flag a
// Developer creates switched off, serving a value of their choosing, serves
// nothing until a reviewer approves its change request; the request says
// the value the approver lets in. Declined, it never serves. Turned on at
// creation, it comes in on once approved.
func TestNewFlagsWaitForApproval(t *testing.T) {
	t.Parallel()
	s, owner, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	bob := ownerMember(t, s, owner, pool, "bob@example.com")
	dave := developer(t, s, owner, "dave@example.com")
	approvalEnv(t, s, owner, prod, 1, bob)
	req := flagstore.NewFlagRequest{Reason: "new checkout", Reviewers: []uuid.UUID{bob.UserID}}
	evil := []flagstore.Variation{{ID: "a", Name: "Safe", Value: "https://pay.example/"}, {ID: "b", Name: "Evil", Value: "https://evil.example/pay"}}

	created, err := s.CreateFlagRequesting(ctx, dave, prod.ID, flagstore.FlagInput{Name: "Pay URL", Key: "pay-url",
		VariationType: flagstore.VariationString, Variations: evil, EnabledVariationID: "a", DisabledVariationID: "b", NewFlagRequest: req})
	storetest.Must(t, err)
	if created.PendingApproval == nil || !created.IsArchived || created.IsEnabled {
		t.Fatalf("created %+v: want archived, off, with its change request", created)
	}
	if got := serves(t, s, owner, prod.ID, "pay-url", "u1"); got != "" {
		t.Fatalf("the new flag serves %q before approval", got)
	}
	cr, err := s.GetFlagChangeRequest(ctx, owner, prod.ID, created.PendingApproval.ChangeRequestID)
	storetest.Must(t, err)
	if !cr.NewFlag || cr.FlagKey != "pay-url" || len(cr.Reviewers) != 1 || cr.Reviewers[0].MemberID != bob.UserID ||
		cr.Status != flagstore.ChangeRequestPendingReview {
		t.Fatalf("change request %+v", cr)
	}
	if lines := strings.Join(cr.Lines(nil), "\n"); !strings.Contains(lines, "Off variation: Evil (https://evil.example/pay)") {
		t.Fatalf("the approver is not told what the flag serves:\n%s", lines)
	}
	// The author cannot apply it alone, nor edit the pending flag around it.
	_, err = s.ApplyFlagChangeRequest(ctx, dave, prod.ID, cr.ID)
	wantRule(t, "apply before approval", err, "ChangeRequestNotApproved")
	_, err = s.RestoreFlag(ctx, dave, prod.ID, "pay-url", flagstore.Change{})
	wantRule(t, "restore the pending flag", err, "ChangeRequestRequired")

	_, err = s.ApproveFlagChangeRequest(ctx, bob, prod.ID, cr.ID, flagstore.ReviewInput{})
	storetest.Must(t, err)
	_, err = s.ApplyFlagChangeRequest(ctx, bob, prod.ID, cr.ID)
	storetest.Must(t, err)
	if got := serves(t, s, owner, prod.ID, "pay-url", "u1"); got != "https://evil.example/pay" {
		t.Fatalf("approved, the flag serves %q", got)
	}

	// Declined: never served, and removed with its request, its key free.
	declined, err := s.CloneFlagRequesting(ctx, dave, prod.ID, "pay-url", flagstore.CloneFlagInput{Name: "Pay URL 2", Key: "pay-url-2",
		NewFlagRequest: req})
	storetest.Must(t, err)
	if serves(t, s, owner, prod.ID, "pay-url-2", "u1") != "" {
		t.Fatal("the pending clone serves before approval")
	}
	_, err = s.DeclineFlagChangeRequest(ctx, bob, prod.ID, declined.PendingApproval.ChangeRequestID, flagstore.ReviewInput{Comment: "no"})
	storetest.Must(t, err)
	if _, err = s.ApplyFlagChangeRequest(ctx, dave, prod.ID, declined.PendingApproval.ChangeRequestID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("apply a declined new flag's request: %v, want it gone", err)
	}
	if f, err := s.GetFlag(ctx, owner, prod.ID, "pay-url-2"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("declined clone: %+v, %v; want it removed", f, err)
	}
	if used, err := s.FlagKeyUsed(ctx, dave, prod.ID, "pay-url-2"); err != nil || used {
		t.Fatalf("the declined clone's key is still taken: %v, %v", used, err)
	}

	// Asked for on, it comes in on once approved.
	on, err := s.CreateFlagRequesting(ctx, dave, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship", IsEnabled: true, NewFlagRequest: req})
	storetest.Must(t, err)
	_, err = s.ApproveFlagChangeRequest(ctx, bob, prod.ID, on.PendingApproval.ChangeRequestID, flagstore.ReviewInput{})
	storetest.Must(t, err)
	applied, err := s.ApplyFlagChangeRequest(ctx, dave, prod.ID, on.PendingApproval.ChangeRequestID)
	storetest.Must(t, err)
	if !applied.IsEnabled || applied.IsArchived || serves(t, s, owner, prod.ID, "ship", "u1") != "true" {
		t.Fatalf("approved flag switched on: %+v serves %q", applied, serves(t, s, owner, prod.ID, "ship", "u1"))
	}
	var ops []string
	for _, h := range flagHistory(t, s, owner, prod.ID, applied) {
		ops = append(ops, h.Operation)
	}
	if !slices.Contains(ops, "Create") || !slices.Contains(ops, flagstore.OpApplyFlagChangeRequest) {
		t.Fatalf("ship's history: %v", ops)
	}
}

// TestPendingNewFlagGoesOnlyThroughItsRequest: a pending new flag cannot be
// restored or deleted around its change request, also once its environment
// no longer needs approval (the request would otherwise bring in a flag
// already there, or a deleted one); withdrawing the request removes it,
// with history entries saying so.
func TestPendingNewFlagGoesOnlyThroughItsRequest(t *testing.T) {
	t.Parallel()
	s, owner, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	bob := ownerMember(t, s, owner, pool, "bob@example.com")
	approvalEnv(t, s, owner, prod, 1, bob)
	created, err := s.CreateFlagRequesting(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship",
		NewFlagRequest: flagstore.NewFlagRequest{Reason: "launch", Reviewers: []uuid.UUID{bob.UserID}}})
	storetest.Must(t, err)
	_, err = s.UpdateEnvironment(ctx, owner, prod.ProjectID, prod.ID, core.EnvironmentInput{Name: prod.Name,
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: false, ApprovalsRequired: 1,
			ApproverMemberIDs: []uuid.UUID{bob.UserID}}}})
	storetest.Must(t, err)
	_, err = s.RestoreFlag(ctx, owner, prod.ID, "ship", flagstore.Change{})
	wantRule(t, "restore the pending flag", err, "FlagAwaitsApproval")
	err = s.DeleteFlag(ctx, owner, prod.ID, "ship", flagstore.Change{})
	wantRule(t, "delete the pending flag", err, "FlagAwaitsApproval")

	storetest.Must(t, s.DeleteFlagChangeRequest(ctx, owner, prod.ID, created.PendingApproval.ChangeRequestID))
	if _, err := s.GetFlag(ctx, owner, prod.ID, "ship"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the withdrawn new flag: %v; want it removed", err)
	}
	var comment string
	storetest.Must(t, pool.QueryRow(ctx, `SELECT comment FROM audit_logs WHERE ref_id = $1 AND operation = 'Remove'`,
		created.ID.String()).Scan(&comment))
	if comment != "New flag ship was withdrawn and removed" {
		t.Fatalf("the flag's removal is recorded as %q", comment)
	}
	// Its key is free: a flag of that key comes in directly now.
	if f, err := s.CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship"}); err != nil || f.IsArchived {
		t.Fatalf("the key after the withdrawal: %+v, %v", f, err)
	}
}
