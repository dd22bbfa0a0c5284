package flagcopy

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/google/uuid"
)

// Comparing a flag across environments, as FeatBit's FlagDiffer does: the two
// sides are matched by variation value (variation ids differ between
// environments), rules by their conditions (segments by name, list values as
// sets), so "differs" means a user would be served differently, not that
// the JSON differs.

// OnOffDiff compares whether the flag is on.
type OnOffDiff struct {
	Source      bool `json:"source"`
	Target      bool `json:"target"`
	IsDifferent bool `json:"isDifferent"`
}

// VariationsDiff compares the values a flag can serve (Bunting's addition to
// FeatBit's FlagDiff): different when a value is on one side only.
type VariationsDiff struct {
	Source      []flagstore.Variation `json:"source"`
	Target      []flagstore.Variation `json:"target"`
	IsDifferent bool                  `json:"isDifferent"`
}

// VariationUsers are the individual targets of one variation.
type VariationUsers struct {
	Variation flagstore.Variation `json:"variation"`
	Users     []string            `json:"users"`
}

// IndividualTargetingDiff compares the targets of one variation value; a
// side is nil when its flag has no variation with that value.
type IndividualTargetingDiff struct {
	Source      *VariationUsers `json:"source"`
	Target      *VariationUsers `json:"target"`
	IsDifferent bool            `json:"isDifferent"`
}

// TargetingRuleDiff pairs a rule with the other side's rule of the same
// conditions; a side is nil when there is none.
type TargetingRuleDiff struct {
	Source      *flagstore.FlagRule `json:"source"`
	Target      *flagstore.FlagRule `json:"target"`
	IsDifferent bool                `json:"isDifferent"`
}

// DefaultRuleDiff compares the default rules.
type DefaultRuleDiff struct {
	Source      flagstore.Fallthrough `json:"source"`
	Target      flagstore.Fallthrough `json:"target"`
	IsDifferent bool                  `json:"isDifferent"`
}

// OffVariationDiff compares what the flags serve when off.
type OffVariationDiff struct {
	Source      *flagstore.Variation `json:"source"`
	Target      *flagstore.Variation `json:"target"`
	IsDifferent bool                 `json:"isDifferent"`
}

// FlagDiff is FeatBit's FlagDiff, with the variations compared too.
type FlagDiff struct {
	OnOffState          OnOffDiff                 `json:"onOffState"`
	Variations          VariationsDiff            `json:"variations"`
	IndividualTargeting []IndividualTargetingDiff `json:"individualTargeting"`
	TargetingRule       []TargetingRuleDiff       `json:"targetingRule"`
	DefaultRule         DefaultRuleDiff           `json:"defaultRule"`
	OffVariation        OffVariationDiff          `json:"offVariation"`
}

// FlagDiffOverview says which parts of a flag differ in one target
// environment: FeatBit's FlagDiffOverview, with variations.
type FlagDiffOverview struct {
	TargetEnvID         uuid.UUID `json:"targetEnvId"`
	OnOffState          bool      `json:"onOffState"`
	Variations          bool      `json:"variations"`
	IndividualTargeting bool      `json:"individualTargeting"`
	TargetingRule       bool      `json:"targetingRule"`
	DefaultRule         bool      `json:"defaultRule"`
	OffVariation        bool      `json:"offVariation"`
}

// Overview sums a diff up part by part.
func (d FlagDiff) Overview(targetEnvID uuid.UUID) FlagDiffOverview {
	o := FlagDiffOverview{TargetEnvID: targetEnvID, OnOffState: d.OnOffState.IsDifferent,
		Variations: d.Variations.IsDifferent, DefaultRule: d.DefaultRule.IsDifferent, OffVariation: d.OffVariation.IsDifferent}
	for _, t := range d.IndividualTargeting {
		o.IndividualTargeting = o.IndividualTargeting || t.IsDifferent
	}
	for _, r := range d.TargetingRule {
		o.TargetingRule = o.TargetingRule || r.IsDifferent
	}
	return o
}

// Same tells whether no part differs.
func (o FlagDiffOverview) Same() bool {
	return !(o.OnOffState || o.Variations || o.IndividualTargeting || o.TargetingRule || o.DefaultRule || o.OffVariation)
}

// DiffFlags compares source with target; segmentNames names the segments
// either side's rules use (by id), so that two environments' segments of
// the same name count as the same.
func DiffFlags(source, target flagstore.Flag, segmentNames map[string]string) FlagDiff {
	d := FlagDiff{
		OnOffState: OnOffDiff{source.IsEnabled, target.IsEnabled, source.IsEnabled != target.IsEnabled},
		Variations: VariationsDiff{Source: source.Variations, Target: target.Variations,
			IsDifferent: !sameSet(variationValues(source.Variations), variationValues(target.Variations))},
		IndividualTargeting: diffTargets(source, target),
		TargetingRule:       diffRules(source, target, segmentNames),
		DefaultRule: DefaultRuleDiff{Source: source.Fallthrough, Target: target.Fallthrough,
			IsDifferent: dispatchKey(source.Fallthrough.DispatchKey) != dispatchKey(target.Fallthrough.DispatchKey) ||
				servesDiffer(source, target, source.Fallthrough.Variations, target.Fallthrough.Variations)},
	}
	off := OffVariationDiff{Source: variationByID(source.Variations, source.DisabledVariationID),
		Target: variationByID(target.Variations, target.DisabledVariationID)}
	off.IsDifferent = off.Source == nil || off.Target == nil || off.Source.Value != off.Target.Value
	d.OffVariation = off
	return d
}

func variationValues(vs []flagstore.Variation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Value
	}
	return out
}

func variationByID(vs []flagstore.Variation, id string) *flagstore.Variation {
	for i := range vs {
		if vs[i].ID == id {
			return &vs[i]
		}
	}
	return nil
}

func variationByValue(vs []flagstore.Variation, value string) *flagstore.Variation {
	for i := range vs {
		if vs[i].Value == value {
			return &vs[i]
		}
	}
	return nil
}

// usersOf lists the individual targets served the variation with this id.
func usersOf(f flagstore.Flag, variationID string) []string {
	users := []string{}
	for _, t := range f.TargetUsers {
		if t.VariationID == variationID {
			users = append(users, t.KeyIDs...)
		}
	}
	return users
}

func diffTargets(source, target flagstore.Flag) []IndividualTargetingDiff {
	diffs := []IndividualTargetingDiff{}
	for _, sv := range source.Variations {
		src := &VariationUsers{Variation: sv, Users: usersOf(source, sv.ID)}
		tv := variationByValue(target.Variations, sv.Value)
		if tv == nil {
			diffs = append(diffs, IndividualTargetingDiff{Source: src, IsDifferent: len(src.Users) > 0})
			continue
		}
		tgt := &VariationUsers{Variation: *tv, Users: usersOf(target, tv.ID)}
		diffs = append(diffs, IndividualTargetingDiff{Source: src, Target: tgt, IsDifferent: !sameSet(src.Users, tgt.Users)})
	}
	for _, tv := range target.Variations {
		if variationByValue(source.Variations, tv.Value) == nil {
			tgt := &VariationUsers{Variation: tv, Users: usersOf(target, tv.ID)}
			diffs = append(diffs, IndividualTargetingDiff{Target: tgt, IsDifferent: len(tgt.Users) > 0})
		}
	}
	return diffs
}

func diffRules(source, target flagstore.Flag, names map[string]string) []TargetingRuleDiff {
	diffs := []TargetingRuleDiff{}
	matched := map[int]bool{}
	for i := range source.Rules {
		sr := &source.Rules[i]
		j := slices.IndexFunc(target.Rules, func(tr flagstore.FlagRule) bool {
			return sameConditions(sr.Conditions, tr.Conditions, names)
		})
		// A target rule answers one source rule: the next one of the same
		// conditions answers the next.
		for j >= 0 && matched[j] {
			k := slices.IndexFunc(target.Rules[j+1:], func(tr flagstore.FlagRule) bool {
				return sameConditions(sr.Conditions, tr.Conditions, names)
			})
			if k < 0 {
				j = -1
				break
			}
			j += 1 + k
		}
		if j < 0 {
			diffs = append(diffs, TargetingRuleDiff{Source: sr, IsDifferent: true})
			continue
		}
		matched[j] = true
		tr := &target.Rules[j]
		differs := dispatchKey(sr.DispatchKey) != dispatchKey(tr.DispatchKey) ||
			servesDiffer(source, target, sr.Variations, tr.Variations)
		diffs = append(diffs, TargetingRuleDiff{Source: sr, Target: tr, IsDifferent: differs})
	}
	for j := range target.Rules {
		if !matched[j] {
			diffs = append(diffs, TargetingRuleDiff{Target: &target.Rules[j], IsDifferent: true})
		}
	}
	return diffs
}

// sameConditions tells whether two rules test the same things, in any order.
func sameConditions(a, b []flagstore.Condition, names map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, c := range a {
		if !slices.ContainsFunc(b, func(o flagstore.Condition) bool { return sameCondition(c, o, names) }) {
			return false
		}
	}
	return true
}

func sameCondition(a, b flagstore.Condition, names map[string]string) bool {
	if a.Property != b.Property || a.Op != b.Op {
		return false
	}
	if a.Value == b.Value {
		return true
	}
	var av, bv []string
	if json.Unmarshal([]byte(a.Value), &av) != nil || json.Unmarshal([]byte(b.Value), &bv) != nil {
		return false
	}
	if a.Property == targeting.SegmentIn || a.Property == targeting.SegmentNotIn {
		// Segments are per environment; the same name stands for the same group.
		for i, id := range av {
			av[i] = segmentKey(id, names)
		}
		for i, id := range bv {
			bv[i] = segmentKey(id, names)
		}
	}
	return sameSet(av, bv)
}

func segmentKey(id string, names map[string]string) string {
	if n, ok := names[id]; ok {
		return "name:" + n
	}
	return "id:" + id
}

func dispatchKey(k *string) string {
	if k == nil || *k == "" {
		return "keyId"
	}
	return *k
}

// servesDiffer compares two serves by the values they give and their shares.
func servesDiffer(source, target flagstore.Flag, sv, tv []flagstore.RolloutVariation) bool {
	if len(sv) != len(tv) {
		return true
	}
	for _, s := range sv {
		v := variationByID(source.Variations, s.ID)
		if v == nil {
			return true
		}
		t := variationByValue(target.Variations, v.Value)
		if t == nil {
			return true
		}
		i := slices.IndexFunc(tv, func(r flagstore.RolloutVariation) bool { return r.ID == t.ID })
		if i < 0 || !sameRollout(s, tv[i]) {
			return true
		}
	}
	return false
}

func sameRollout(a, b flagstore.RolloutVariation) bool {
	const eps = 1e-9
	if len(a.Rollout) != len(b.Rollout) || math.Abs(a.ExptRollout-b.ExptRollout) > eps {
		return false
	}
	for i := range a.Rollout {
		if math.Abs(a.Rollout[i]-b.Rollout[i]) > eps {
			return false
		}
	}
	return true
}

// sameSet tells whether two lists hold the same strings, whatever their order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}
