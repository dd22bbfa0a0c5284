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
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
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
	bob := storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	dave := storetest.Developer(t, s, owner, "dave@example.com")
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	req := flagstore.NewFlagRequest{Reason: "new checkout", Reviewers: []uuid.UUID{bob.UserID}}
	evil := []flagstore.Variation{{ID: "a", Name: "Safe", Value: "https://pay.example/"}, {ID: "b", Name: "Evil", Value: "https://evil.example/pay"}}

	created, err := s.Flags().CreateFlagRequesting(ctx, dave, prod.ID, flagstore.FlagInput{Name: "Pay URL", Key: "pay-url",
		VariationType: targeting.VariationString, Variations: evil, EnabledVariationID: "a", DisabledVariationID: "b", NewFlagRequest: req})
	storetest.Must(t, err)
	if created.PendingApproval == nil || !created.IsArchived || created.IsEnabled {
		t.Fatalf("created %+v: want archived, off, with its change request", created)
	}
	if got := storetest.Serves(t, s, owner, prod.ID, "pay-url", "u1"); got != "" {
		t.Fatalf("the new flag serves %q before approval", got)
	}
	cr, err := s.Governance().GetFlagChangeRequest(ctx, owner, prod.ID, created.PendingApproval.ChangeRequestID)
	storetest.Must(t, err)
	if !cr.NewFlag || cr.FlagKey != "pay-url" || len(cr.Reviewers) != 1 || cr.Reviewers[0].MemberID != bob.UserID ||
		cr.Status != flagstore.ChangeRequestPendingReview {
		t.Fatalf("change request %+v", cr)
	}
	if lines := strings.Join(cr.Lines(nil), "\n"); !strings.Contains(lines, "Off variation: Evil (https://evil.example/pay)") {
		t.Fatalf("the approver is not told what the flag serves:\n%s", lines)
	}
	// The author cannot apply it alone, nor edit the pending flag around it.
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, dave, prod.ID, cr.ID)
	storetest.WantRule(t, "apply before approval", err, "ChangeRequestNotApproved")
	_, err = s.Flags().RestoreFlag(ctx, dave, prod.ID, "pay-url", flagstore.Change{})
	storetest.WantRule(t, "restore the pending flag", err, "ChangeRequestRequired")

	_, err = s.Governance().ApproveFlagChangeRequest(ctx, bob, prod.ID, cr.ID, governance.ReviewInput{})
	storetest.Must(t, err)
	_, err = s.Governance().ApplyFlagChangeRequest(ctx, bob, prod.ID, cr.ID)
	storetest.Must(t, err)
	if got := storetest.Serves(t, s, owner, prod.ID, "pay-url", "u1"); got != "https://evil.example/pay" {
		t.Fatalf("approved, the flag serves %q", got)
	}

	// Declined: never served, and removed with its request, its key free.
	declined, err := s.Flags().CloneFlagRequesting(ctx, dave, prod.ID, "pay-url", flagstore.CloneFlagInput{Name: "Pay URL 2", Key: "pay-url-2",
		NewFlagRequest: req})
	storetest.Must(t, err)
	if storetest.Serves(t, s, owner, prod.ID, "pay-url-2", "u1") != "" {
		t.Fatal("the pending clone serves before approval")
	}
	_, err = s.Governance().DeclineFlagChangeRequest(ctx, bob, prod.ID, declined.PendingApproval.ChangeRequestID, governance.ReviewInput{Comment: "no"})
	storetest.Must(t, err)
	if _, err = s.Governance().ApplyFlagChangeRequest(ctx, dave, prod.ID, declined.PendingApproval.ChangeRequestID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("apply a declined new flag's request: %v, want it gone", err)
	}
	if f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay-url-2"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("declined clone: %+v, %v; want it removed", f, err)
	}
	if used, err := s.Flags().FlagKeyUsed(ctx, dave, prod.ID, "pay-url-2"); err != nil || used {
		t.Fatalf("the declined clone's key is still taken: %v, %v", used, err)
	}

	// Asked for on, it comes in on once approved.
	on, err := s.Flags().CreateFlagRequesting(ctx, dave, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship", IsEnabled: true, NewFlagRequest: req})
	storetest.Must(t, err)
	_, err = s.Governance().ApproveFlagChangeRequest(ctx, bob, prod.ID, on.PendingApproval.ChangeRequestID, governance.ReviewInput{})
	storetest.Must(t, err)
	applied, err := s.Governance().ApplyFlagChangeRequest(ctx, dave, prod.ID, on.PendingApproval.ChangeRequestID)
	storetest.Must(t, err)
	if !applied.IsEnabled || applied.IsArchived || storetest.Serves(t, s, owner, prod.ID, "ship", "u1") != "true" {
		t.Fatalf("approved flag switched on: %+v serves %q", applied, storetest.Serves(t, s, owner, prod.ID, "ship", "u1"))
	}
	var ops []string
	for _, h := range storetest.FlagHistory(t, s, owner, prod.ID, applied) {
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
	bob := storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	created, err := s.Flags().CreateFlagRequesting(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship",
		NewFlagRequest: flagstore.NewFlagRequest{Reason: "launch", Reviewers: []uuid.UUID{bob.UserID}}})
	storetest.Must(t, err)
	_, err = s.Projects().UpdateEnvironment(ctx, owner, prod.ProjectID, prod.ID, core.EnvironmentInput{Name: prod.Name,
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: false, ApprovalsRequired: 1,
			ApproverMemberIDs: []uuid.UUID{bob.UserID}}}})
	storetest.Must(t, err)
	_, err = s.Flags().RestoreFlag(ctx, owner, prod.ID, "ship", flagstore.Change{})
	storetest.WantRule(t, "restore the pending flag", err, "FlagAwaitsApproval")
	err = s.Flags().DeleteFlag(ctx, owner, prod.ID, "ship", flagstore.Change{})
	storetest.WantRule(t, "delete the pending flag", err, "FlagAwaitsApproval")

	storetest.Must(t, s.Governance().DeleteFlagChangeRequest(ctx, owner, prod.ID, created.PendingApproval.ChangeRequestID))
	if _, err := s.Flags().GetFlag(ctx, owner, prod.ID, "ship"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the withdrawn new flag: %v; want it removed", err)
	}
	var comment string
	storetest.Must(t, pool.QueryRow(ctx, `SELECT comment FROM audit_logs WHERE ref_id = $1 AND operation = 'Remove'`,
		created.ID.String()).Scan(&comment))
	if comment != "New flag ship was withdrawn and removed" {
		t.Fatalf("the flag's removal is recorded as %q", comment)
	}
	// Its key is free: a flag of that key comes in directly now.
	if f, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship"}); err != nil || f.IsArchived {
		t.Fatalf("the key after the withdrawal: %+v, %v", f, err)
	}
}
