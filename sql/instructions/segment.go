package instructions

import (
	"encoding/json"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// CompareSegments is FeatBit's SegmentComparer.Compare: archive, name,
// description, tags, included users, excluded users, rules. A segment's
// scopes are not compared, as FeatBit's are not.
func CompareSegments(before, after Segment) []Instruction {
	out := []Instruction{}
	add := func(kind string, value any) { out = append(out, Instruction{kind, value}) }
	out = append(out, compareAbout(aboutSegment(before), aboutSegment(after), Archive, Restore)...)
	for _, list := range []struct {
		before, after []string
		adds, removes string
	}{
		{before.Included, after.Included, AddTargetUsersToIncluded, RemoveTargetUsersFromIncluded},
		{before.Excluded, after.Excluded, AddTargetUsersToExcluded, RemoveTargetUsersFromExcluded},
	} {
		if added := except(list.after, list.before); len(added) > 0 {
			add(list.adds, added)
		}
		if removed := except(list.before, list.after); len(removed) > 0 {
			add(list.removes, removed)
		}
	}
	out = append(out, compareRules(before.Rules, after.Rules, segmentRuleID, compareSegmentRule)...)
	return out
}

func compareSegmentRule(before, after targeting.SegmentRule) []Instruction {
	return compareRuleBody(before.ID, before.Name, after.Name, before.Conditions, after.Conditions)
}

func aboutSegment(sg Segment) about { return about{sg.IsArchived, sg.Name, sg.Description, sg.Tags} }

// about is what both comparers compare first, in this order: archived,
// name, description, tags.
type about struct {
	archived          bool
	name, description string
	tags              []string
}

// compareAbout: archive or restore (archive and restore are the flag's or the
// segment's kinds), the name, the description, then the tags removed and
// those added (CompareTags of both comparers).
func compareAbout(before, after about, archive, restore string) []Instruction {
	var out []Instruction
	if before.archived != after.archived {
		out = append(out, Instruction{pick(after.archived, archive, restore), ""})
	}
	if before.name != after.name {
		out = append(out, Instruction{UpdateName, after.name})
	}
	if before.description != after.description {
		out = append(out, Instruction{UpdateDescription, after.description})
	}
	if removed := except(before.tags, after.tags); len(removed) > 0 {
		out = append(out, Instruction{RemoveTags, removed})
	}
	if added := except(after.tags, before.tags); len(added) > 0 {
		out = append(out, Instruction{AddTags, added})
	}
	return out
}

// compareRules is CompareRules of both comparers: when either side has no
// rules the whole list is set (an empty one clears them); otherwise each
// rule added, each removed, then the changes of each rule both have, in the
// order the rules had before.
func compareRules[R any](before, after []R, id func(R) string, compare func(before, after R) []Instruction) []Instruction {
	switch {
	case len(before) == 0 && len(after) == 0:
		return nil
	case len(before) == 0 || len(after) == 0:
		return []Instruction{{SetRules, orEmpty(after)}}
	}
	var out []Instruction
	for _, r := range exceptBy(after, before, id) {
		out = append(out, Instruction{AddRule, r})
	}
	for _, r := range exceptBy(before, after, id) {
		out = append(out, Instruction{RemoveRule, id(r)})
	}
	for _, r := range intersectBy(before, after, id) {
		out = append(out, compare(first(before, id, id(r)), first(after, id, id(r)))...)
	}
	return out
}

// compareRuleBody is what both comparers' CompareRule share: the name, the
// conditions removed, those added, then each condition both have.
func compareRuleBody(ruleID, oldName, newName string, before, after []targeting.Condition) []Instruction {
	var out []Instruction
	if oldName != newName {
		out = append(out, Instruction{UpdateRuleName, RuleName{ruleID, newName}})
	}
	if removed := exceptBy(before, after, conditionID); len(removed) > 0 {
		ids := make([]string, len(removed))
		for i, c := range removed {
			ids[i] = c.ID
		}
		out = append(out, Instruction{RemoveRuleConditions, RuleConditionIDs{ruleID, ids}})
	}
	if added := exceptBy(after, before, conditionID); len(added) > 0 {
		out = append(out, Instruction{AddRuleConditions, RuleConditions{ruleID, added}})
	}
	for _, c := range intersectBy(before, after, conditionID) {
		out = append(out, compareCondition(ruleID, first(before, conditionID, c.ID), first(after, conditionID, c.ID))...)
	}
	return out
}

// compareCondition is CompareCondition of both comparers. A segment
// condition, or an is-one-of or not-one-of condition whose property and
// operator stay, changes by the values added to or removed from its list;
// any other change replaces the condition. Values listed in another order
// or twice are the same values: no instruction. A list that is not a JSON
// list of strings (FeatBit fails on it) replaces the condition.
func compareCondition(ruleID string, before, after targeting.Condition) []Instruction {
	segment := before.Property == after.Property &&
		(before.Property == targeting.SegmentIn || before.Property == targeting.SegmentNotIn)
	multi := before.Property == after.Property && before.Op == after.Op &&
		(before.Op == "IsOneOf" || before.Op == "NotOneOf")
	if (segment || multi) && before.Value != after.Value {
		var oldValues, newValues []string
		if json.Unmarshal([]byte(before.Value), &oldValues) == nil && json.Unmarshal([]byte(after.Value), &newValues) == nil {
			var out []Instruction
			if removed := except(oldValues, newValues); len(removed) > 0 {
				out = append(out, Instruction{RemoveValuesFromRuleCondition, RuleConditionValues{ruleID, after.ID, removed}})
			}
			if added := except(newValues, oldValues); len(added) > 0 {
				out = append(out, Instruction{AddValuesToRuleCondition, RuleConditionValues{ruleID, after.ID, added}})
			}
			return out
		}
	}
	// Condition.ValueEquals: the same id, property, operator and value.
	if before != after {
		return []Instruction{{UpdateRuleCondition, RuleCondition{ruleID, after}}}
	}
	return nil
}
