package instructions

import (
	"math"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// CompareFlags is FeatBit's FlagComparer.Compare: the instructions from
// before to after, in its order (status, archive, name, description, tags,
// variation type, variations, off variation, default rule, individual
// targets, rules). Like FeatBit's, it does not compare a flag's key, its
// experiment settings (exptIncludeAllTargets, a rule's includedInExpt,
// exptRollout): a change of only those has no instruction.
func CompareFlags(before, after Flag) []Instruction {
	out := []Instruction{}
	add := func(kind string, value any) { out = append(out, Instruction{kind, value}) }

	if before.IsEnabled != after.IsEnabled {
		add(pick(after.IsEnabled, TurnFlagOn, TurnFlagOff), "")
	}
	out = append(out, compareAbout(aboutFlag(before), aboutFlag(after), ArchiveFlag, RestoreFlag)...)
	if before.VariationType != after.VariationType {
		add(UpdateVariationType, after.VariationType)
	}

	oldVariations, newVariations := deref(before.Variations), deref(after.Variations)
	for _, v := range exceptBy(oldVariations, newVariations, variationID) {
		add(RemoveVariation, v.ID)
	}
	for _, v := range exceptBy(newVariations, oldVariations, variationID) {
		add(AddVariation, v)
	}
	for _, v := range intersectBy(oldVariations, newVariations, variationID) {
		// Variation.ValueEquals: the same id, name and value.
		if updated := first(newVariations, variationID, v.ID); updated != v {
			add(UpdateVariation, updated)
		}
	}

	if before.DisabledVariationID != after.DisabledVariationID {
		add(UpdateDisabledVariation, after.DisabledVariationID)
	}

	oldDefault, newDefault := derefFallthrough(before.Fallthrough), derefFallthrough(after.Fallthrough)
	if rolloutsChanged(oldDefault.Variations, newDefault.Variations) {
		add(UpdateDefaultRuleVariationOrRollouts, DefaultRuleRolloutVariations{orEmpty(newDefault.Variations)})
	}
	if newDefault.DispatchKey != nil && !sameKey(oldDefault.DispatchKey, newDefault.DispatchKey) {
		add(UpdateDefaultRuleDispatchKey, *newDefault.DispatchKey)
	}

	// Individual targets, for each variation the flag has now.
	for _, v := range newVariations {
		out = append(out, compareTargetUsers(v.ID, targetsOf(before.TargetUsers, v.ID), targetsOf(after.TargetUsers, v.ID))...)
	}

	out = append(out, compareRules(before.Rules, after.Rules, flagRuleID, compareFlagRule)...)
	return out
}

// compareTargetUsers is FlagComparer.CompareTargetUser for one variation;
// nil lists stand for a variation with no target entry.
func compareTargetUsers(variationID string, before, after []string) []Instruction {
	switch {
	case len(before) == 0 && len(after) == 0:
		return nil
	case len(before) == 0:
		return []Instruction{{SetTargetUsers, targeting.TargetUser{KeyIDs: after, VariationID: variationID}}}
	case len(after) == 0:
		return []Instruction{{SetTargetUsers, targeting.TargetUser{KeyIDs: []string{}, VariationID: variationID}}}
	}
	var out []Instruction
	if added := except(after, before); len(added) > 0 {
		out = append(out, Instruction{AddTargetUsers, targeting.TargetUser{KeyIDs: added, VariationID: variationID}})
	}
	if removed := except(before, after); len(removed) > 0 {
		out = append(out, Instruction{RemoveTargetUsers, targeting.TargetUser{KeyIDs: removed, VariationID: variationID}})
	}
	return out
}

// targetsOf is the keys of the first target entry of a variation
// (FeatBit's FirstOrDefault), nil when it has none.
func targetsOf(targets []targeting.TargetUser, variationID string) []string {
	for _, t := range targets {
		if t.VariationID == variationID {
			return t.KeyIDs
		}
	}
	return nil
}

// compareFlagRule is FlagComparer.CompareRule: a rule's name, conditions,
// served variations and dispatch key.
func compareFlagRule(before, after targeting.FlagRule) []Instruction {
	out := compareRuleBody(before.ID, before.Name, after.Name, before.Conditions, after.Conditions)
	if rolloutsChanged(before.Variations, after.Variations) {
		out = append(out, Instruction{UpdateRuleVariationOrRollouts, RuleVariations{before.ID, orEmpty(after.Variations)}})
	}
	if after.DispatchKey != nil && !sameKey(before.DispatchKey, after.DispatchKey) {
		out = append(out, Instruction{UpdateRuleDispatchKey, RuleDispatchKey{before.ID, *after.DispatchKey}})
	}
	return out
}

// rolloutsChanged is FlagComparer.CompareRolloutVariations: another count,
// a variation served before and no longer, or, position by position, a
// rollout range that moved by 0.00001 or more. The experiment share
// (exptRollout) is not compared.
func rolloutsChanged(before, after []targeting.RolloutVariation) bool {
	if len(before) != len(after) {
		return true
	}
	if len(exceptBy(before, after, rolloutID)) > 0 {
		return true
	}
	for i := range before {
		if !sameRollout(before[i].Rollout, after[i].Rollout) {
			return true
		}
	}
	return false
}

// sameRollout is RolloutVariation.IsRolloutEquals. A range that is not two
// numbers (FeatBit would fail on it) is the same only if it is identical.
func sameRollout(a, b []float64) bool {
	const tolerance = 0.00001
	if len(a) != 2 || len(b) != 2 {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	return math.Abs(a[0]-b[0]) < tolerance && math.Abs(a[1]-b[1]) < tolerance
}

func sameKey(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref(v *[]targeting.Variation) []targeting.Variation {
	if v == nil {
		return nil
	}
	return *v
}

func derefFallthrough(f *targeting.Fallthrough) targeting.Fallthrough {
	if f == nil {
		return targeting.Fallthrough{}
	}
	return *f
}

func variationID(v targeting.Variation) string      { return v.ID }
func rolloutID(v targeting.RolloutVariation) string { return v.ID }
func flagRuleID(r targeting.FlagRule) string        { return r.ID }
func segmentRuleID(r targeting.SegmentRule) string  { return r.ID }
func conditionID(c targeting.Condition) string      { return c.ID }

func aboutFlag(f Flag) about { return about{f.IsArchived, f.Name, f.Description, f.Tags} }

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
