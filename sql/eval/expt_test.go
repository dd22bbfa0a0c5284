package eval

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// exptBucket is FeatBit's RolloutOfKey("expt" + dispatchKey) written out
// here, apart from the evaluator: the first four bytes of the MD5 as a
// little-endian int32, over int.MinValue, made positive.
func exptBucket(flagKey, dispatchValue string) float64 {
	sum := md5.Sum([]byte("expt" + flagKey + dispatchValue))
	return math.Abs(float64(int32(binary.LittleEndian.Uint32(sum[:4]))) / float64(math.MinInt32))
}

// usersAround finds a user whose experiment bucket is at most limit and one
// whose bucket is above it, so each case checks both sides of the line.
func usersAround(flagKey string, limit float64) (in, out string) {
	for i := 0; in == "" || out == ""; i++ {
		k := fmt.Sprint("user-", i)
		if exptBucket(flagKey, k) <= limit {
			if in == "" {
				in = k
			}
		} else if out == "" {
			out = k
		}
	}
	return in, out
}

// TestSendToExperimentRule is FeatBit's rule for whether an evaluation goes
// to experiments (Evaluator.cs, RolloutUserVariation), case by case: a
// targeted user only with exptIncludeAllTargets; a rule or the default rule
// always with exptIncludeAllTargets, otherwise only when its includedInExpt
// is set and the user's second hash ("expt" + dispatch key) falls within
// exptRollout / (width of the variation's rollout), capped at 1.
func TestSendToExperimentRule(t *testing.T) {
	const key = "expt-flag"
	isPremium := targeting.Condition{Property: "plan", Op: "Equal", Value: "premium"}
	// A rule serving t to half its traffic ([0, 0.5]), a quarter of all of it
	// in experiments: half of those served t.
	ruleHalf := targeting.FlagRule{ID: "r", Name: "premium", Conditions: []targeting.Condition{isPremium},
		Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 0.5}}}
	lineIn, lineOut := usersAround(key, 0.5)
	type variant func(f *targeting.Flag)
	cases := []struct {
		name  string
		setup variant
		user  EndUser
		want  bool
	}{
		{"disabled flag", func(f *targeting.Flag) { f.IsEnabled = false }, user(lineIn), false},
		{"archived flag", func(f *targeting.Flag) { f.IsArchived = true }, user(lineIn), false},
		{"targeted, include all targets", func(f *targeting.Flag) {
			f.TargetUsers = []targeting.TargetUser{{KeyIDs: []string{lineOut}, VariationID: "f"}}
		}, user(lineOut), true},
		{"targeted, not all targets", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			f.TargetUsers = []targeting.TargetUser{{KeyIDs: []string{lineIn}, VariationID: "f"}}
		}, user(lineIn), false},
		{"rule, include all targets, rule not in experiments", func(f *targeting.Flag) {
			r := ruleHalf
			r.IncludedInExpt = false
			f.Rules = []targeting.FlagRule{r}
		}, user(lineOut, "plan", "premium"), true},
		{"rule not in experiments, default rule is", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			f.Rules = []targeting.FlagRule{ruleHalf}
		}, user(lineIn, "plan", "premium"), false},
		{"rule in experiments, user within its share", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			r := ruleHalf
			r.IncludedInExpt = true
			f.Rules = []targeting.FlagRule{r}
		}, user(lineIn, "plan", "premium"), true},
		{"rule in experiments, user past its share", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			r := ruleHalf
			r.IncludedInExpt = true
			f.Rules = []targeting.FlagRule{r}
		}, user(lineOut, "plan", "premium"), false},
		{"rule in experiments with no experiment rollout", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			r := ruleHalf
			r.IncludedInExpt = true
			r.Variations = []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 0}}
			f.Rules = []targeting.FlagRule{r}
		}, user(lineIn, "plan", "premium"), false},
		{"default rule: exptRollout over a half-width rollout is the share", func(f *targeting.Flag) {
			// t is served to [0, 0.5] with exptRollout 0.25: 0.25/0.5 = half of t's users.
			f.ExptIncludeAllTargets = false
			f.Fallthrough = targeting.Fallthrough{IncludedInExpt: true, Variations: []targeting.RolloutVariation{
				{ID: "t", Rollout: []float64{0, 0.5}, ExptRollout: 0.25}, {ID: "f", Rollout: []float64{0.5, 1}, ExptRollout: 0.25}}}
		}, user(lineOut), false},
		{"default rule: a share over 1 is everyone", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			f.Fallthrough = targeting.Fallthrough{IncludedInExpt: true, Variations: []targeting.RolloutVariation{
				{ID: "t", Rollout: []float64{0, 0.5}, ExptRollout: 1}, {ID: "f", Rollout: []float64{0.5, 1}, ExptRollout: 1}}}
		}, user(lineOut), true},
		{"default rule not in experiments", func(f *targeting.Flag) {
			f.ExptIncludeAllTargets = false
			f.Fallthrough.IncludedInExpt = false
		}, user(lineIn), false},
	}
	for _, c := range cases {
		f := evalFlag(key)
		c.setup(&f)
		if got := Evaluate(&f, c.user, nil).SendToExperiment; got != c.want {
			t.Errorf("%s: sendToExperiment %v, want %v (expt bucket %.4f)", c.name, got, c.want, exptBucket(key, c.user.KeyID))
		}
	}
}

// TestSendToExperimentHashesTheDispatchAttribute: with a dispatch key the
// second hash is of "expt" + flag key + that attribute's value, not the
// user's key.
func TestSendToExperimentHashesTheDispatchAttribute(t *testing.T) {
	const key = "expt-attr"
	in, out := usersAround(key, 0.3)
	attr := "company"
	f := evalFlag(key)
	f.ExptIncludeAllTargets = false
	f.Fallthrough = targeting.Fallthrough{DispatchKey: &attr, IncludedInExpt: true,
		Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 0.3}}}
	// The user's own key is on the other side of the line from their company.
	if !Evaluate(&f, user(out, attr, in), nil).SendToExperiment {
		t.Errorf("a company within the share: not sent")
	}
	if Evaluate(&f, user(in, attr, out), nil).SendToExperiment {
		t.Errorf("a company past the share: sent")
	}
}
