package governance_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// segmentFlag turns the flag key of env on with one rule: the users of
// segment sg get true, everyone else false.
func segmentFlag(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, key string, sg flagstore.Segment) flagstore.Flag {
	t.Helper()
	ctx := context.Background()
	f, err := s.Flags().CreateFlag(ctx, a, envID, flagstore.FlagInput{Name: key, Key: key})
	storetest.Must(t, err)
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "Segment",
		Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}
	_, err = s.Flags().SetFlagTargeting(ctx, a, envID, key, flagstore.TargetingInput{Targeting: &tg})
	storetest.Must(t, err)
	f, err = s.Flags().ToggleFlag(ctx, a, envID, key, true, flagstore.Change{})
	storetest.Must(t, err)
	return f
}

// TestApprovalCoversArchivingRestoringAndDeletingFlags: where changes need
// approval, a Developer cannot take a flag out of what SDKs get (archive),
// bring one back (restore), or delete one to re-create its key serving
// something else; nothing changes. Where they need none, all of it works.
func TestApprovalCoversArchivingRestoringAndDeletingFlags(t *testing.T) {
	t.Parallel()
	s, owner, prod, dev, bob, dave := reviewTeam(t)
	ctx := context.Background()
	storetest.Flag(t, s, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	storetest.Flag(t, s, owner, prod.ID, flagstore.FlagInput{Name: "Old", Key: "old"})
	_, err := s.Flags().ArchiveFlag(ctx, owner, prod.ID, "old", flagstore.Change{})
	storetest.Must(t, err)
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	before := storetest.Serves(t, s, owner, prod.ID, "pay", "u1")

	_, err = s.Flags().ArchiveFlag(ctx, dave, prod.ID, "pay", flagstore.Change{})
	storetest.WantRule(t, "archive a flag where changes need approval", err, "ChangeRequestRequired")
	_, err = s.Flags().PatchFlag(ctx, dave, prod.ID, "pay", []byte(`[{"op":"replace","path":"/isArchived","value":true}]`))
	storetest.WantRule(t, "archive by patch", err, "ChangeRequestRequired")
	_, err = s.Flags().RestoreFlag(ctx, dave, prod.ID, "old", flagstore.Change{})
	storetest.WantRule(t, "restore", err, "ChangeRequestRequired")
	err = s.Flags().DeleteFlag(ctx, dave, prod.ID, "old", flagstore.Change{})
	storetest.WantRule(t, "delete an archived flag, freeing its key", err, "ChangeRequestRequired")
	_, err = s.Flags().CreateFlag(ctx, dave, prod.ID, flagstore.FlagInput{Name: "Pay again", Key: "pay-again", IsEnabled: true})
	storetest.WantRule(t, "create a flag that is on", err, "ChangeRequestRequired")
	var aerr *flagstore.ApprovalError
	if !errors.As(err, &aerr) || aerr.Of != flagstore.ApprovalNewFlag || aerr.Env != "Web/Prod" {
		t.Fatalf("the refusal says what needed approval, where: %#v", err)
	}

	f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	if f.IsArchived || storetest.Serves(t, s, owner, prod.ID, "pay", "u1") != before {
		t.Fatalf("after the refusals pay is archived %v, serves %q (was %q)", f.IsArchived, storetest.Serves(t, s, owner, prod.ID, "pay", "u1"), before)
	}
	if old, err := s.Flags().GetFlag(ctx, owner, prod.ID, "old"); err != nil || !old.IsArchived {
		t.Fatalf("old after the refusals: %+v, %v", old, err)
	}
	if used, err := s.Flags().FlagKeyUsed(ctx, owner, prod.ID, "pay-again"); err != nil || used {
		t.Fatalf("a refused creation stored its flag: %v, %v", used, err)
	}
	// Switched off, its off variation would be served at once: it too needs
	// a change request, and comes in pending with one.
	_, err = s.Flags().CreateFlag(ctx, dave, prod.ID, flagstore.FlagInput{Name: "New", Key: "new"})
	storetest.WantRule(t, "create a flag that is off", err, "ChangeRequestRequired")
	created, err := s.Flags().CreateFlagRequesting(ctx, dave, prod.ID, flagstore.FlagInput{Name: "New", Key: "new",
		NewFlagRequest: flagstore.NewFlagRequest{Reason: "new", Reviewers: []uuid.UUID{bob.UserID}}})
	if err != nil || created.PendingApproval == nil || !created.IsArchived {
		t.Fatalf("create a flag that is off with a change request: %+v, %v", created, err)
	}

	// Where changes need no approval, the Developer does all of it.
	_, err = s.Flags().CreateFlag(ctx, dave, dev.ID, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	storetest.Must(t, err)
	_, err = s.Flags().ArchiveFlag(ctx, dave, dev.ID, "pay", flagstore.Change{})
	storetest.Must(t, err)
	storetest.Must(t, s.Flags().DeleteFlag(ctx, dave, dev.ID, "pay", flagstore.Change{}))
	_, err = s.Flags().CreateFlag(ctx, dave, dev.ID, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	storetest.Must(t, err)
}

// TestApprovalCoversFlagsCopiedIn: where changes need approval, a flag that
// is on cannot be copied in from another environment or cloned there, and
// another environment's settings cannot be copied onto one of its flags.
func TestApprovalCoversFlagsCopiedIn(t *testing.T) {
	t.Parallel()
	s, owner, prod, dev, bob, dave := reviewTeam(t)
	ctx := context.Background()
	on := storetest.Flag(t, s, dave, dev.ID, flagstore.FlagInput{Name: "Banner", Key: "banner", IsEnabled: true})
	storetest.Flag(t, s, dave, dev.ID, flagstore.FlagInput{Name: "Quiet", Key: "quiet"})
	storetest.Flag(t, s, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	storetest.Flag(t, s, owner, prod.ID, flagstore.FlagInput{Name: "Quiet", Key: "quiet"})
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)

	_, err := s.FlagCopy().CopyToEnv(ctx, dave, dev.ID, prod.ID, flagcopy.CopyToEnvInput{FlagIDs: []uuid.UUID{on.ID}})
	storetest.WantRule(t, "copy a flag that is on", err, "ChangeRequestRequired")
	_, err = s.Flags().CloneFlag(ctx, dave, prod.ID, "pay", flagstore.CloneFlagInput{Name: "Pay 2", Key: "pay-2"})
	storetest.WantRule(t, "clone a flag that is on", err, "ChangeRequestRequired")
	if _, err := s.Flags().ToggleFlag(ctx, dave, dev.ID, "quiet", true, flagstore.Change{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.FlagCopy().CopyFlagSettings(ctx, dave, dev.ID, "quiet", prod.ID, flagcopy.CopyFlagSettingsInput{Options: &flagcopy.FlagSettingCopyOptions{OnOffState: true}})
	storetest.WantRule(t, "copy settings that turn a flag on", err, "ChangeRequestRequired")
	for _, key := range []string{"banner", "pay-2"} {
		if used, err := s.Flags().FlagKeyUsed(ctx, owner, prod.ID, key); err != nil || used {
			t.Fatalf("a refused copy stored %s: %v, %v", key, used, err)
		}
	}
	if q, err := s.Flags().GetFlag(ctx, owner, prod.ID, "quiet"); err != nil || q.IsEnabled {
		t.Fatalf("quiet after a refused settings copy: %+v, %v", q, err)
	}

	// Off, a flag comes in only with a change request: by copy and by clone.
	if _, err := s.Flags().ToggleFlag(ctx, dave, dev.ID, "banner", false, flagstore.Change{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.FlagCopy().CopyToEnv(ctx, dave, dev.ID, prod.ID, flagcopy.CopyToEnvInput{FlagIDs: []uuid.UUID{on.ID}})
	storetest.WantRule(t, "copy a flag that is off", err, "ChangeRequestRequired")
	_, err = s.Flags().CloneFlag(ctx, dave, prod.ID, "quiet", flagstore.CloneFlagInput{Name: "Quiet 2", Key: "quiet-2"})
	storetest.WantRule(t, "clone a flag that is off", err, "ChangeRequestRequired")
	req := flagstore.NewFlagRequest{Reason: "bring it in", Reviewers: []uuid.UUID{bob.UserID}}
	if got, err := s.FlagCopy().CopyToEnv(ctx, dave, dev.ID, prod.ID, flagcopy.CopyToEnvInput{FlagIDs: []uuid.UUID{on.ID},
		NewFlagRequest: req}); err != nil || got.CopiedCount != 1 || len(got.PendingApproval) != 1 {
		t.Fatalf("copy a flag that is off with a change request: %+v, %v", got, err)
	}
	if got, err := s.Flags().CloneFlagRequesting(ctx, dave, prod.ID, "quiet", flagstore.CloneFlagInput{Name: "Quiet 2", Key: "quiet-2",
		NewFlagRequest: req}); err != nil || got.PendingApproval == nil {
		t.Fatalf("clone a flag that is off with a change request: %+v, %v", got, err)
	}
}

// TestApprovalCoversEnvironmentSegments: where changes need approval, a
// Developer cannot change who is in a segment that a flag there uses, by any
// route; its name still changes, and the flag still serves as it did.
func TestApprovalCoversEnvironmentSegments(t *testing.T) {
	t.Parallel()
	s, owner, prod, _, bob, dave := reviewTeam(t)
	ctx := context.Background()
	sg, err := s.Segments().CreateSegment(ctx, owner, prod.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific,
		Included: []string{"ann"}})
	storetest.Must(t, err)
	segmentFlag(t, s, owner, prod.ID, "pay", sg)
	unused, err := s.Segments().CreateSegment(ctx, owner, prod.ID, segments.SegmentInput{Name: "Unused", Key: "unused", Type: flagstore.SegmentEnvironmentSpecific})
	storetest.Must(t, err)
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	if got := storetest.Serves(t, s, owner, prod.ID, "pay", "eve"); got != "false" {
		t.Fatalf("eve gets %q before, want false", got)
	}

	eve := []string{"ann", "eve"}
	_, err = s.Segments().SetSegmentTargeting(ctx, dave, prod.ID, sg.ID, segments.SegmentTargetingInput{Included: &eve})
	storetest.WantRule(t, "add a user", err, "ChangeRequestRequired")
	var aerr *flagstore.ApprovalError
	if !errors.As(err, &aerr) || aerr.Of != flagstore.ApprovalSegment || aerr.Env != "Web/Prod" {
		t.Fatalf("the refusal says what needed approval, where: %#v", err)
	}
	_, err = s.Segments().PatchSegment(ctx, dave, prod.ID, sg.ID, []byte(`[{"op":"add","path":"/included/-","value":"eve"}]`))
	storetest.WantRule(t, "add a user by patch", err, "ChangeRequestRequired")
	rules := []flagstore.SegmentRule{{ID: "r", Name: "Everyone", Conditions: []flagstore.Condition{{ID: "c", Property: "keyId", Op: "IsOneOf", Value: `["eve"]`}}}}
	_, err = s.Segments().SetSegmentTargeting(ctx, dave, prod.ID, sg.ID, segments.SegmentTargetingInput{Included: &[]string{"ann"}, Rules: &rules})
	storetest.WantRule(t, "add a rule", err, "ChangeRequestRequired")
	_, err = s.Segments().ArchiveSegment(ctx, dave, prod.ID, sg.ID, flagstore.Change{})
	storetest.WantRule(t, "archive", err, "SegmentIsBeingUsed")
	err = s.Segments().DeleteSegment(ctx, dave, prod.ID, sg.ID, flagstore.Change{})
	storetest.WantRule(t, "delete", err, "SegmentIsBeingUsed")
	if got := storetest.Serves(t, s, owner, prod.ID, "pay", "eve"); got != "false" {
		t.Fatalf("eve gets %q after the refusals, want false", got)
	}
	if got, err := s.Segments().GetSegment(ctx, owner, prod.ID, sg.ID); err != nil || len(got.Included) != 1 || len(got.Rules) != 0 {
		t.Fatalf("segment after the refusals: %+v, %v", got, err)
	}

	// Its name is no change to what is served; a segment no flag uses
	// changes freely.
	if _, err := s.Segments().RenameSegment(ctx, dave, prod.ID, sg.ID, segments.SegmentNameInput{Name: "Beta testers"}); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if _, err := s.Segments().SetSegmentTargeting(ctx, dave, prod.ID, unused.ID, segments.SegmentTargetingInput{Included: &eve}); err != nil {
		t.Fatalf("a segment no flag uses: %v", err)
	}
}

// TestApprovalCoversSharedSegments: a shared segment managed from Dev that a
// flag in Prod uses changes only as Prod's changes do, from either
// environment; one used only where no approval is needed changes freely.
func TestApprovalCoversSharedSegments(t *testing.T) {
	t.Parallel()
	s, owner, prod, dev, bob, dave := reviewTeam(t)
	ctx := context.Background()
	everywhere := []string{"organization/default-organization:project/web"}
	sg, err := s.Segments().CreateSegment(ctx, owner, dev.ID, segments.SegmentInput{Name: "Staff", Key: "staff", Type: flagstore.SegmentShared, Scopes: everywhere})
	storetest.Must(t, err)
	segmentFlag(t, s, owner, prod.ID, "pay", sg)
	devOnly, err := s.Segments().CreateSegment(ctx, owner, dev.ID, segments.SegmentInput{Name: "Testers", Key: "testers", Type: flagstore.SegmentShared, Scopes: everywhere})
	storetest.Must(t, err)
	segmentFlag(t, s, owner, dev.ID, "pay", devOnly)
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)

	eve := []string{"eve"}
	for _, env := range []core.Environment{dev, prod} {
		_, err = s.Segments().SetSegmentTargeting(ctx, dave, env.ID, sg.ID, segments.SegmentTargetingInput{Included: &eve})
		storetest.WantRule(t, "add a user from "+env.Name, err, "ChangeRequestRequired")
	}
	_, err = s.Segments().PatchSegment(ctx, dave, dev.ID, sg.ID, []byte(`[{"op":"add","path":"/excluded/-","value":"ann"}]`))
	storetest.WantRule(t, "exclude a user by patch", err, "ChangeRequestRequired")
	if got := storetest.Serves(t, s, owner, prod.ID, "pay", "eve"); got != "false" {
		t.Fatalf("eve gets %q in Prod after the refusals, want false", got)
	}
	if _, err := s.Segments().SetSegmentTargeting(ctx, dave, dev.ID, devOnly.ID, segments.SegmentTargetingInput{Included: &eve}); err != nil {
		t.Fatalf("a shared segment only Dev's flags use: %v", err)
	}
	if got := storetest.Serves(t, s, owner, dev.ID, "pay", "eve"); got != "true" {
		t.Fatalf("eve gets %q in Dev, want true", got)
	}
}

// reviewTeam is a store with Web's Prod and Dev, bob an owner besides owner
// (to review) and dave a Developer.
func reviewTeam(t *testing.T) (s *store.Store, owner *core.Actor, prod, dev core.Environment, bob, dave *core.Actor) {
	t.Helper()
	s, owner, pool := storetest.New(t)
	prod, dev = storetest.ProdAndDev(t, s, owner)
	bob = storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	dave = storetest.Developer(t, s, owner, "dave@example.com")
	return s, owner, prod, dev, bob, dave
}

// requestCast is a store whose Prod has the flag pay, off, and alice, bob
// and carol, owners.
func requestCast(t *testing.T) (s *store.Store, owner *core.Actor, pool *pgxpool.Pool, prod core.Environment, alice, bob, carol *core.Actor) {
	t.Helper()
	s, owner, pool = storetest.New(t)
	prod, _ = storetest.ProdAndDev(t, s, owner)
	alice = storetest.OwnerMember(t, s, owner, pool, "alice@example.com")
	bob = storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	carol = storetest.OwnerMember(t, s, owner, pool, "carol@example.com")
	_, err := s.Flags().CreateFlag(context.Background(), owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	return s, owner, pool, prod, alice, bob, carol
}

// approvedRequest has alice request turning pay on in prod and reviewer
// approve it; the request is approved.
func approvedRequest(t *testing.T, s *store.Store, prod core.Environment, alice, reviewer *core.Actor) flagstore.FlagChangeRequest {
	t.Helper()
	ctx := context.Background()
	on := true
	cr, err := s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", flagstore.FlagChangeRequestInput{IsEnabled: &on, Reason: "Launch",
		Reviewers: []uuid.UUID{reviewer.UserID}})
	storetest.Must(t, err)
	if cr, err = s.Governance().ApproveFlagChangeRequest(ctx, reviewer, prod.ID, cr.ID, governance.ReviewInput{}); err != nil || cr.Status != flagstore.ChangeRequestApproved {
		t.Fatalf("approve: %+v, %v", cr, err)
	}
	return cr
}

// wantNotAppliedAndUnderReview checks that applying cr is refused, the flag
// is still off, and the request is back under review.
func wantNotAppliedAndUnderReview(t *testing.T, s *store.Store, owner, alice *core.Actor, prod core.Environment, cr flagstore.FlagChangeRequest) {
	t.Helper()
	ctx := context.Background()
	_, err := s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr.ID)
	storetest.WantRule(t, "apply with an approval that no longer counts", err, "ChangeRequestNotApproved")
	if f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || f.IsEnabled {
		t.Fatalf("flag after the refused apply: %+v, %v", f, err)
	}
	if got, err := s.Governance().GetFlagChangeRequest(ctx, owner, prod.ID, cr.ID); err != nil || got.Status != flagstore.ChangeRequestPendingReview {
		t.Fatalf("request after the refused apply: %+v, %v", got, err)
	}
}

// TestApprovalOfAMemberWhoLeftStopsCounting: an approval counts only while
// its approver is a member of the organization.
func TestApprovalOfAMemberWhoLeftStopsCounting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, owner, _, prod, alice, bob, carol := requestCast(t)
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob, carol)
	cr := approvedRequest(t, s, prod, alice, bob)

	storetest.Must(t, s.IAM().RemoveMember(ctx, owner, bob.UserID))
	wantNotAppliedAndUnderReview(t, s, owner, alice, prod, cr)

	// An approval from an approver still there applies it.
	on := true
	cr2, err := s.Governance().CreateFlagChangeRequest(ctx, alice, prod.ID, "pay", flagstore.FlagChangeRequestInput{IsEnabled: &on, Reason: "Launch",
		Reviewers: []uuid.UUID{carol.UserID}})
	storetest.Must(t, err)
	_, err = s.Governance().ApproveFlagChangeRequest(ctx, carol, prod.ID, cr2.ID, governance.ReviewInput{})
	storetest.Must(t, err)
	if f, err := s.Governance().ApplyFlagChangeRequest(ctx, alice, prod.ID, cr2.ID); err != nil || !f.IsEnabled {
		t.Fatalf("apply with carol's approval: %+v, %v", f, err)
	}
}

// TestApprovalOfAnApproverNoLongerNamedStopsCounting: an approval counts
// only while its approver is named in the environment's setting, directly
// or through a group they are still in; also when a schedule applies it.
func TestApprovalOfAnApproverNoLongerNamedStopsCounting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, owner, pool, prod, alice, bob, carol := requestCast(t)
	approvers, err := s.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Approvers"})
	storetest.Must(t, err)
	storetest.Must(t, s.IAM().AddGroupMember(ctx, owner, approvers.ID, carol.UserID))
	setting := func(members ...*core.Actor) {
		t.Helper()
		ids := []uuid.UUID{}
		for _, m := range members {
			ids = append(ids, m.UserID)
		}
		_, err := s.Projects().UpdateEnvironment(ctx, owner, prod.ProjectID, prod.ID, core.EnvironmentInput{Name: prod.Name,
			Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1,
				ApproverMemberIDs: ids, ApproverGroupIDs: []uuid.UUID{approvers.ID}}}})
		storetest.Must(t, err)
	}
	setting(bob)

	// Named directly, then no longer.
	cr := approvedRequest(t, s, prod, alice, bob)
	setting(owner)
	wantNotAppliedAndUnderReview(t, s, owner, alice, prod, cr)
	storetest.Must(t, s.Governance().DeleteFlagChangeRequest(ctx, alice, prod.ID, cr.ID))

	// Named through a group, then out of the group.
	cr = approvedRequest(t, s, prod, alice, carol)
	storetest.Must(t, s.IAM().RemoveGroupMember(ctx, owner, approvers.ID, carol.UserID))
	wantNotAppliedAndUnderReview(t, s, owner, alice, prod, cr)
	storetest.Must(t, s.Governance().DeleteFlagChangeRequest(ctx, alice, prod.ID, cr.ID))

	// A schedule whose approval stops counting waits for review again.
	storetest.Must(t, s.IAM().AddGroupMember(ctx, owner, approvers.ID, carol.UserID))
	at := time.Now().Add(time.Hour)
	sch, err := s.Governance().CreateFlagSchedule(ctx, alice, prod.ID, "pay", governance.ScheduleInput{DraftInput: flagstore.DraftInput{TargetFlag: []byte(`{"isEnabled":true}`)},
		Title: "Launch", ScheduledTime: &at, WithChangeRequest: true, Reason: "Launch on time", Reviewers: []uuid.UUID{carol.UserID}})
	storetest.Must(t, err)
	pending, err := s.Governance().FlagChangeRequests(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	_, err = s.Governance().ApproveFlagChangeRequest(ctx, carol, prod.ID, pending[0].ID, governance.ReviewInput{})
	storetest.Must(t, err)
	storetest.Must(t, s.IAM().RemoveGroupMember(ctx, owner, approvers.ID, carol.UserID))
	backdate(t, pool, sch.ID, time.Minute)
	if claimed, err := s.Governance().ApplyDueSchedule(ctx, time.Time{}); err != nil || !claimed {
		t.Fatalf("run the due schedule: claimed %v, %v", claimed, err)
	}
	if status, reason := scheduleStatus(t, pool, sch.ID); status != governance.ScheduleReview {
		t.Fatalf("schedule after its approval stopped counting: %s (%s), want %s", status, reason, governance.ScheduleReview)
	}
	if f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || f.IsEnabled {
		t.Fatalf("the schedule applied: %+v, %v", f, err)
	}
	// Approved again by someone who counts, it applies.
	storetest.Must(t, s.IAM().AddGroupMember(ctx, owner, approvers.ID, carol.UserID))
	_, err = s.Governance().ApproveFlagChangeRequest(ctx, carol, prod.ID, pending[0].ID, governance.ReviewInput{})
	storetest.Must(t, err)
	if _, err := s.Governance().ApplyDueSchedule(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay"); err != nil || !f.IsEnabled {
		t.Fatalf("the schedule approved again did not apply: %+v, %v", f, err)
	}
}
