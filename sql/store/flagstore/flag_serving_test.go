package flagstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestFlagListServesTargetsWithKeys: the list and the search say which
// variations a flag serves from its individual targets, rules and default
// rule; a group of targets without keys serves nothing, and a group of
// thousands serves its variation once.
func TestFlagListServesTargetsWithKeys(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	on, off := f.Variations[0], f.Variations[1]
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("user-%d", i)
	}
	tg := f.Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: many, VariationID: on.ID}, {KeyIDs: []string{}, VariationID: off.ID}}
	tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "Beta", Conditions: []flagstore.Condition{{ID: "c", Property: "plan", Op: "Equal", Value: "beta"}},
		Variations: []flagstore.RolloutVariation{{ID: on.ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: on.ID, Rollout: []float64{0, 1}, ExptRollout: 1}}
	_, err = s.Flags().SetFlagTargeting(ctx, a, prod.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
	storetest.Must(t, err)

	for _, search := range []string{"", "pay"} { // the list, and a search
		page, err := s.Flags().ListFlags(ctx, a, prod.ID, flagstore.FlagFilter{Name: search, Page: core.Page{Size: 10}})
		storetest.Must(t, err)
		if len(page.Items) != 1 {
			t.Fatalf("%q: %d flags listed, want 1", search, len(page.Items))
		}
		item := page.Items[0]
		if !slices.Equal(item.Serves.EnabledVariations, []string{on.Value}) || item.Serves.DisabledVariation != off.Value {
			t.Errorf("%q: serves %+v, want only %s (the group without keys serves nothing)", search, item.Serves, on.Value)
		}
		sv := item.Serving
		if !slices.Equal(sv.Targets, []string{on.Value}) || len(sv.Rules) != 1 || sv.Rules[0].Name != "Beta" ||
			!slices.Equal(sv.Rules[0].Shares, []flagstore.Share{{Value: on.Value, Percent: 100}}) ||
			!slices.Equal(sv.Default, []flagstore.Share{{Value: on.Value, Percent: 100}}) {
			t.Errorf("%q: serving %+v", search, sv)
		}
	}
}

// TestFlagListFollowsEveryChange: what a list shows of a flag's targeting
// (kept by revision between lists) is its latest: listed, changed, listed
// again, through the list and the search, it serves what it now serves.
func TestFlagListFollowsEveryChange(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	for _, v := range f.Variations {
		tg := f.Targeting()
		tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: v.ID, Rollout: []float64{0, 1}, ExptRollout: 1}}
		_, err = s.Flags().SetFlagTargeting(ctx, a, prod.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
		storetest.Must(t, err)
		for _, search := range []string{"", "pay"} {
			page, err := s.Flags().ListFlags(ctx, a, prod.ID, flagstore.FlagFilter{Name: search, Page: core.Page{Size: 10}})
			storetest.Must(t, err)
			if len(page.Items) != 1 || !slices.Equal(page.Items[0].Serves.EnabledVariations, []string{v.Value}) ||
				!slices.Equal(page.Items[0].Serving.Default, []flagstore.Share{{Value: v.Value, Percent: 100}}) {
				t.Fatalf("%q after serving %s by default: %+v", search, v.Value, page.Items)
			}
		}
		if f, err = s.Flags().GetFlag(ctx, a, prod.ID, "pay"); err != nil {
			t.Fatal(err)
		}
	}
}
