package sdkdata_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// A rollout of 0.01% is stored as typed and evaluated as stored: the user
// whose bucket falls in the first hundredth of a percent gets the first
// variation, the next user past it the second; shares that miss 100% by a
// hundredth are refused.
func TestFineRolloutIsStoredAndServedExactly(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	env, _ := storetest.ProdAndDev(t, s, a)
	f, err := s.Flags().CreateFlag(ctx, a, env.ID, flagstore.FlagInput{Name: "Pay", Key: "pay", IsEnabled: true})
	storetest.Must(t, err)
	set := func(bp, total int) error {
		tg := f.Targeting()
		tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: targeting.RolloutRange(0, bp), ExptRollout: 1},
			{ID: f.Variations[1].ID, Rollout: targeting.RolloutRange(bp, total-bp), ExptRollout: 1}}
		_, err := s.Flags().SetFlagTargeting(ctx, a, env.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
		return err
	}
	var ve *core.ValidationError
	if err := set(1, targeting.WholeRollout-1); !errors.As(err, &ve) {
		t.Errorf("shares adding up to 99.99%%: %v, want a validation error", err)
	}
	storetest.Must(t, set(1, targeting.WholeRollout))
	got, err := s.Flags().GetFlag(ctx, a, env.ID, "pay")
	storetest.Must(t, err)
	if r := got.Fallthrough.Variations; !slices.Equal(r[0].Rollout, []float64{0, 0.0001}) || !slices.Equal(r[1].Rollout, []float64{0.0001, 1}) {
		t.Fatalf("stored %+v", r)
	}
	// Users whose bucket is in the first hundredth of a percent, and just past it.
	var inside, outside string
	for i := 0; inside == "" || outside == ""; i++ {
		key := "user-" + strconv.Itoa(i)
		switch b := eval.Bucket("pay" + key); {
		case b <= 0.0001 && inside == "":
			inside = key
		case b > 0.0001 && b < 0.0002 && outside == "":
			outside = key
		}
	}
	for key, want := range map[string]string{inside: f.Variations[0].ID, outside: f.Variations[1].ID} {
		ev, err := s.SDK().EvaluateFlag(ctx, a, env.ID, "pay", eval.EndUser{KeyID: key})
		storetest.Must(t, err)
		if ev.Variation == nil || ev.Variation.ID != want {
			t.Errorf("%s (bucket %v): served %+v, want %s", key, eval.Bucket("pay"+key), ev.Variation, want)
		}
	}
}
