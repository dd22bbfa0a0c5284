package describe

import (
	"fmt"
	"strconv"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// RuleLabel is how a rule is named to people: its name, or "Rule 2" by its
// place when it has none.
func RuleLabel(name string, i int) string {
	if name != "" {
		return name
	}
	return "Rule " + strconv.Itoa(i+1)
}

// Explain says why a user got what an evaluation served them: the target
// list, the rule (as its sentence) or the default rule that decided, and for
// a rollout where the user's bucket fell.
func Explain(f targeting.Flag, u eval.EndUser, ev eval.Evaluation, segments Names) []string {
	var why []string
	var serve []targeting.RolloutVariation
	var by *string
	served := "nothing"
	if ev.Variation != nil {
		served = VariationName(ev.Variation.ID, f.Variations)
	}
	switch ev.Kind {
	case eval.MatchArchived:
		return []string{"The flag is archived: SDKs no longer receive it."}
	case eval.MatchDisabled:
		return []string{"The flag is off, so every user gets the off variation."}
	case eval.MatchTargeted:
		return []string{u.KeyID + " is an individual target of " + served + "."}
	case eval.MatchRule:
		for i, r := range f.Rules {
			if r.ID == ev.RuleID {
				why = append(why, "Not an individual target; the first rule that matches is "+RuleLabel(r.Name, i)+": "+
					FlagRule(r, f.Variations, segments)+".")
				serve, by = r.Variations, r.DispatchKey
			}
		}
	default:
		why = append(why, "No individual target or rule matches, so the default rule applies: "+
			FlagSummary(f, segments).Default+".")
		serve, by = f.Fallthrough.Variations, f.Fallthrough.DispatchKey
	}
	if ev.Split && ev.Variation != nil {
		bucket := eval.Bucket(eval.DispatchKey(f.Key, by, u)) * 100
		for _, rv := range serve {
			if rv.ID == ev.Variation.ID && len(rv.Rollout) == 2 {
				why = append(why, fmt.Sprintf("Split by %s: the user's bucket is %.2f%%, in %s–%s, which serves %s.",
					dispatchAttribute(by), bucket, percent(rv.Rollout[0]*100), percent(rv.Rollout[1]*100), served))
			}
		}
	}
	return why
}
