package eval

import (
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// Rollouts written to a hundredth of a percent split users exactly where
// their ranges say: every user lands in the variation whose range holds the
// bucket of the flag key and the user key, and the shares come out within
// sampling error of what was typed.
func TestFineRolloutSplits(t *testing.T) {
	t.Parallel()
	const users = 200000
	for _, tc := range []struct {
		percent string
		// within is how far the share may stray from the percent, in
		// percentage points: several standard deviations at this sample.
		within float64
	}{
		{"0.01", 0.01}, {"0.05", 0.02}, {"12.34", 0.3}, {"50.5", 0.4}, {"99.99", 0.01},
	} {
		bp, err := targeting.ParsePercent(tc.percent)
		if err != nil {
			t.Fatal(err)
		}
		f := evalFlag("fine")
		f.Fallthrough.Variations = []targeting.RolloutVariation{
			{ID: "t", Rollout: targeting.RolloutRange(0, bp), ExptRollout: 1},
			{ID: "f", Rollout: targeting.RolloutRange(bp, targeting.WholeRollout-bp), ExptRollout: 1}}
		f.Name = "Fine"
		if problems, _ := targeting.CheckFlag(&f); len(problems) > 0 {
			t.Fatalf("%s%%: the store's check refuses its ranges: %+v", tc.percent, problems)
		}
		p := Prepare(&f)
		served := 0
		for i := range users {
			key := "user-" + strconv.Itoa(i)
			ev := p.Evaluate(EndUser{KeyID: key}, nil)
			// The split is FeatBit's: the bucket of the flag key and the
			// user key against the range's ends, both included.
			wantTrue := Bucket("fine"+key) <= float64(bp)/targeting.WholeRollout
			if ev.Variation == nil || (ev.Variation.ID == "t") != wantTrue {
				t.Fatalf("%s%%: %s (bucket %v) got %+v", tc.percent, key, Bucket("fine"+key), ev.Variation)
			}
			if wantTrue {
				served++
			}
		}
		share := float64(served) * 100 / users
		if d := share - float64(bp)/100; d > tc.within || d < -tc.within {
			t.Errorf("%s%%: served to %.4f%% of %d users", tc.percent, share, users)
		}
	}
}
