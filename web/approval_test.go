package web_test

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestRefusedChangesWhereApprovalIsNeededSayWhy: in Prod, whose changes need
// approval, a Developer's change to who is in a segment a Prod flag uses,
// and archiving a flag, are refused on the page with words that say why
// (422, not an error page); nothing changes.
func TestRefusedChangesWhereApprovalIsNeededSayWhy(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	sg := a.makeSegment(env, "Beta", "beta")
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "Beta",
		Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	_, err := a.st.Flags().SetFlagTargeting(ctx, owner, env.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	a.needApproval(env, owner.UserID)
	a.addMember("dave@example.com", core.DeveloperPolicyID)
	b := a.signedIn("dave@example.com", memberPassword)

	vals := formValues(b.get(segmentPath(sg)).status(http.StatusOK).must("segment-targeting-form"))
	vals.Set("included", "eve")
	b.post(segmentPath(sg)+"/targeting", vals).status(http.StatusUnprocessableEntity)
	want := "Flags in Web/" + env.Name + " use this segment, and changes there need approval"
	if got := b.last.text("form-error"); !strings.HasPrefix(got, want) {
		t.Errorf("refused segment change says %q, want it to start %q", got, want)
	}
	if !b.last.has("segment-targeting-form") {
		t.Error("the refused segment change does not show its form again")
	}
	if got := a.segment(env, sg); !slices.Equal(got.Included, []string{}) {
		t.Errorf("the refused change stored %v", got.Included)
	}

	p := b.get("/flags/pay/archive").status(http.StatusOK)
	b.post(p.formAction("confirm-form"), formValues(p.must("confirm-form"))).status(http.StatusUnprocessableEntity)
	if got := b.last.text("form-error"); !strings.Contains(got, "archiving, restoring or deleting a flag changes what applications get") {
		t.Errorf("refused archiving says %q", got)
	}
	if a.flag(env, "pay").IsArchived {
		t.Error("the refused archiving archived the flag")
	}
}
