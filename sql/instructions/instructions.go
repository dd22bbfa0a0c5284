// Package instructions computes FeatBit's semantic patch of a change: the
// list of {kind, value} instructions that turn a flag or a segment as it
// was into what it became. FeatBit's admin UI needs it twice, with the same
// comparer behind both: its Save dialog posts the flag or segment before
// and after the user's edits to POST /envs/{envId}/audit-logs/compare and
// enables Save only when the answer lists an instruction, and its history
// lists (a flag's, a segment's, the Audit Logs page) show each audit entry's
// instructions. Kinds, value shapes and the order they come in are FeatBit's
// (modules/back-end/src/Domain/SemanticPatch: FlagComparer.cs,
// SegmentComparer.cs, FlagInstructionKind.cs, SegmentInstructionKind.cs,
// Instruction.Models.cs and the Instruction.*.cs value types). Like
// describe, beside it, it needs no database.
package instructions

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Instruction is one change: a kind and its value. Value is "" for the
// kinds that need none (TurnFlagOn, ArchiveFlag, …), as FeatBit sends it.
type Instruction struct {
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

// Flag instruction kinds (FlagInstructionKind.cs).
const (
	TurnFlagOn                           = "TurnFlagOn"
	TurnFlagOff                          = "TurnFlagOff"
	ArchiveFlag                          = "ArchiveFlag"
	RestoreFlag                          = "RestoreFlag"
	UpdateName                           = "UpdateName"
	UpdateDescription                    = "UpdateDescription"
	AddTags                              = "AddTags"
	RemoveTags                           = "RemoveTags"
	UpdateVariationType                  = "UpdateVariationType"
	AddVariation                         = "AddVariation"
	RemoveVariation                      = "RemoveVariation"
	UpdateVariation                      = "UpdateVariation"
	UpdateDisabledVariation              = "UpdateDisabledVariation"
	UpdateDefaultRuleVariationOrRollouts = "UpdateDefaultRuleVariationOrRollouts"
	UpdateDefaultRuleDispatchKey         = "UpdateDefaultRuleDispatchKey"
	SetTargetUsers                       = "SetTargetUsers"
	AddTargetUsers                       = "AddTargetUsers"
	RemoveTargetUsers                    = "RemoveTargetUsers"
	UpdateRuleVariationOrRollouts        = "UpdateRuleVariationOrRollouts"
	UpdateRuleDispatchKey                = "UpdateRuleDispatchKey"
)

// Kinds of rules, shared by flags and segments under the same names
// (FlagInstructionKind.cs, SegmentInstructionKind.cs).
const (
	AddRule                       = "AddRule"
	RemoveRule                    = "RemoveRule"
	SetRules                      = "SetRules"
	UpdateRuleName                = "UpdateRuleName"
	AddRuleConditions             = "AddRuleConditions"
	RemoveRuleConditions          = "RemoveRuleConditions"
	UpdateRuleCondition           = "UpdateRuleCondition"
	AddValuesToRuleCondition      = "AddValuesToRuleCondition"
	RemoveValuesFromRuleCondition = "RemoveValuesFromRuleCondition"
)

// Segment-only kinds (SegmentInstructionKind.cs). A segment's name,
// description and tags use UpdateName, UpdateDescription, AddTags and
// RemoveTags, as a flag's do.
const (
	Archive                       = "Archive"
	Restore                       = "Restore"
	AddTargetUsersToIncluded      = "AddTargetUsersToIncluded"
	RemoveTargetUsersFromIncluded = "RemoveTargetUsersFromIncluded"
	AddTargetUsersToExcluded      = "AddTargetUsersToExcluded"
	RemoveTargetUsersFromExcluded = "RemoveTargetUsersFromExcluded"
)

// The values of rule instructions (Instruction.Models.cs): each names its
// rule by ruleId.
type (
	RuleName struct {
		RuleID string `json:"ruleId"`
		Name   string `json:"name"`
	}
	RuleDispatchKey struct {
		RuleID      string `json:"ruleId"`
		DispatchKey string `json:"dispatchKey"`
	}
	RuleConditionIDs struct {
		RuleID       string   `json:"ruleId"`
		ConditionIDs []string `json:"conditionIds"`
	}
	RuleConditions struct {
		RuleID     string                `json:"ruleId"`
		Conditions []targeting.Condition `json:"conditions"`
	}
	RuleCondition struct {
		RuleID    string              `json:"ruleId"`
		Condition targeting.Condition `json:"condition"`
	}
	RuleConditionValues struct {
		RuleID      string   `json:"ruleId"`
		ConditionID string   `json:"conditionId"`
		Values      []string `json:"values"`
	}
	RuleVariations struct {
		RuleID            string                       `json:"ruleId"`
		RolloutVariations []targeting.RolloutVariation `json:"rolloutVariations"`
	}
	DefaultRuleRolloutVariations struct {
		RolloutVariations []targeting.RolloutVariation `json:"rolloutVariations"`
	}
)

// Reference types of audit entries whose changes have instructions
// (AuditLogRefTypes.cs).
const (
	RefFlag    = "FeatureFlag"
	RefSegment = "Segment"
)

// Errors of Decode: the text is not JSON of the expected shape, or it is the
// other kind of thing (a segment where a flag was expected, or a flag where
// a segment was). Text whose decoding would cost more than jsonbody allows
// is jsonbody.ErrTooCostly.
var (
	ErrMalformed = errors.New("instructions: not a flag or segment as JSON")
	ErrNotFlag   = errors.New("instructions: not a feature flag")
	ErrNotSeg    = errors.New("instructions: not a segment")
)

// Flag is what the comparer reads of a flag. FeatBit's UI sends the flag as
// it holds it, with the fields of the flag view and its own (originalData,
// isNotPercentageRollout, a condition's multipleValue…); those are not
// read, as FeatBit's deserializer skips them too.
type Flag struct {
	Name                string                 `json:"name"`
	Description         string                 `json:"description"`
	Tags                []string               `json:"tags"`
	IsEnabled           bool                   `json:"isEnabled"`
	IsArchived          bool                   `json:"isArchived"`
	VariationType       string                 `json:"variationType"`
	Variations          *[]targeting.Variation `json:"variations"`
	DisabledVariationID string                 `json:"disabledVariationId"`
	Fallthrough         *targeting.Fallthrough `json:"fallthrough"`
	TargetUsers         []targeting.TargetUser `json:"targetUsers"`
	Rules               []targeting.FlagRule   `json:"rules"`
}

// Segment is what the comparer reads of a segment.
type Segment struct {
	Name        string                  `json:"name"`
	Description string                  `json:"description"`
	Tags        []string                `json:"tags"`
	IsArchived  bool                    `json:"isArchived"`
	Included    []string                `json:"included"`
	Excluded    []string                `json:"excluded"`
	Rules       []targeting.SegmentRule `json:"rules"`
	// Only to tell a flag from a segment: a segment has neither.
	Variations  *json.RawMessage `json:"variations"`
	Fallthrough *json.RawMessage `json:"fallthrough"`
}

// DecodeFlag reads a flag's JSON text strictly (jsonbody: a wrong type, a
// member named twice or an object naming no field of a flag is refused, at
// a bounded cost), and refuses a document without the variations and the
// default rule every flag has, such as a segment.
func DecodeFlag(text []byte) (Flag, error) {
	var f Flag
	if err := decode(text, &f); err != nil {
		return Flag{}, err
	}
	if f.Variations == nil || f.Fallthrough == nil {
		return Flag{}, ErrNotFlag
	}
	return f, nil
}

// DecodeSegment reads a segment's JSON text as DecodeFlag a flag's, and
// refuses a flag (a document with variations or a default rule) or a
// document that has neither its included nor its excluded users.
func DecodeSegment(text []byte) (Segment, error) {
	var s Segment
	if err := decode(text, &s); err != nil {
		return Segment{}, err
	}
	if s.Variations != nil || s.Fallthrough != nil {
		return Segment{}, ErrNotSeg
	}
	return s, nil
}

func decode(text []byte, v any) error {
	if err := jsonbody.Decode(text, v); err != nil {
		if errors.Is(err, jsonbody.ErrTooCostly) {
			return err
		}
		return ErrMalformed
	}
	return nil
}

// Compare is the instructions of an audit entry: refType is its reference
// type and previous and current its snapshots as JSON (null or empty when
// the thing did not exist). A creation, a removal, any other type, or a
// snapshot that is not one of its type has none, as FeatBit's history
// answers an empty list for them.
func Compare(refType string, previous, current []byte) []Instruction {
	if isNone(previous) || isNone(current) {
		return []Instruction{}
	}
	switch refType {
	case RefFlag:
		before, err1 := DecodeFlag(previous)
		after, err2 := DecodeFlag(current)
		if err1 == nil && err2 == nil {
			return CompareFlags(before, after)
		}
	case RefSegment:
		before, err1 := DecodeSegment(previous)
		after, err2 := DecodeSegment(current)
		if err1 == nil && err2 == nil {
			return CompareSegments(before, after)
		}
	}
	return []Instruction{}
}

func isNone(text []byte) bool {
	t := bytes.TrimSpace(text)
	return len(t) == 0 || string(t) == "null"
}

// except is LINQ's Except: the distinct values of a that are not in b, in
// a's order.
func except(a, b []string) []string {
	out := []string{}
	seen := make(map[string]bool, len(a)+len(b))
	for _, v := range b {
		seen[v] = true
	}
	for _, v := range a {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// exceptBy is LINQ's ExceptBy over ids: the items of a, the first of each
// id, whose id is in no item of b, in a's order.
func exceptBy[T any](a, b []T, id func(T) string) []T {
	seen := make(map[string]bool, len(a)+len(b))
	for _, v := range b {
		seen[id(v)] = true
	}
	var out []T
	for _, v := range a {
		if k := id(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// intersectBy is LINQ's IntersectBy over ids: the items of a, the first of
// each id, whose id is in some item of b, in a's order.
func intersectBy[T any](a, b []T, id func(T) string) []T {
	in := make(map[string]bool, len(b))
	for _, v := range b {
		in[id(v)] = true
	}
	var out []T
	for _, v := range a {
		if k := id(v); in[k] {
			delete(in, k)
			out = append(out, v)
		}
	}
	return out
}

// first is the first item of items with the given id (LINQ's First).
func first[T any](items []T, id func(T) string, want string) T {
	for _, v := range items {
		if id(v) == want {
			return v
		}
	}
	var zero T
	return zero
}

// orEmpty is s, or an empty list for nil, so a value reads [] as FeatBit's does.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
