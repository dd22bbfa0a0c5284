// Package targeting is what a flag serves to whom and what a segment holds:
// flags, segments, their variations, targets, rules and conditions, and the
// checks that keep them well formed. It needs no database, so the store,
// the evaluator (package eval) and their fuzz tests share it.
package targeting

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Flag is a feature flag of an environment.
type Flag struct {
	ID                    uuid.UUID    `json:"id"`
	CreatedAt             time.Time    `json:"createdAt"`
	UpdatedAt             time.Time    `json:"updatedAt"`
	CreatorID             uuid.UUID    `json:"creatorId"`
	UpdatorID             uuid.UUID    `json:"updatorId"`
	EnvID                 uuid.UUID    `json:"envId"`
	Revision              uuid.UUID    `json:"revision"`
	Name                  string       `json:"name"`
	Description           string       `json:"description"`
	Key                   string       `json:"key"`
	VariationType         string       `json:"variationType"`
	Variations            []Variation  `json:"variations"`
	TargetUsers           []TargetUser `json:"targetUsers"`
	Rules                 []FlagRule   `json:"rules"`
	IsEnabled             bool         `json:"isEnabled"`
	DisabledVariationID   string       `json:"disabledVariationId"`
	Fallthrough           Fallthrough  `json:"fallthrough"`
	ExptIncludeAllTargets bool         `json:"exptIncludeAllTargets"`
	Tags                  []string     `json:"tags"`
	IsArchived            bool         `json:"isArchived"`
}

// Segment is a reusable group of end users: listed ones, and those matching rules.
type Segment struct {
	ID                    uuid.UUID     `json:"id"`
	CreatedAt             time.Time     `json:"createdAt"`
	UpdatedAt             time.Time     `json:"updatedAt"`
	WorkspaceID           uuid.UUID     `json:"workspaceId"`
	EnvID                 uuid.UUID     `json:"envId"`
	Name                  string        `json:"name"`
	Key                   string        `json:"key"`
	Type                  string        `json:"type"`
	Scopes                []string      `json:"scopes"`
	Description           string        `json:"description"`
	Included              []string      `json:"included"`
	Excluded              []string      `json:"excluded"`
	Rules                 []SegmentRule `json:"rules"`
	Tags                  []string      `json:"tags"`
	IsArchived            bool          `json:"isArchived"`
	IsEnvironmentSpecific bool          `json:"isEnvironmentSpecific"`
}

// Variation is one value a flag can serve. Values are strings whatever the
// flag's type, and must parse as that type.
type Variation struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TargetUser serves a variation to the listed end users.
type TargetUser struct {
	KeyIDs      []string `json:"keyIds"`
	VariationID string   `json:"variationId"`
}

// Condition is one test of an end user's property. For segment conditions
// Property is SegmentIn or SegmentNotIn and Value a JSON array of segment ids.
type Condition struct {
	ID       string `json:"id"`
	Property string `json:"property"`
	Op       string `json:"op"`
	Value    string `json:"value"`
}

// RolloutVariation serves a variation to the users whose bucket falls in
// Rollout, a [min, max] range within [0, 1].
type RolloutVariation struct {
	ID          string    `json:"id"`
	Rollout     []float64 `json:"rollout"`
	ExptRollout float64   `json:"exptRollout"`
}

// FlagRule serves its variations to users meeting all its conditions.
type FlagRule struct {
	ID             string             `json:"id"`
	Name           string             `json:"name"`
	DispatchKey    *string            `json:"dispatchKey"`
	IncludedInExpt bool               `json:"includedInExpt"`
	Conditions     []Condition        `json:"conditions"`
	Variations     []RolloutVariation `json:"variations"`
}

// Fallthrough is the default rule: what users no target or rule matched get.
type Fallthrough struct {
	DispatchKey    *string            `json:"dispatchKey"`
	IncludedInExpt bool               `json:"includedInExpt"`
	Variations     []RolloutVariation `json:"variations"`
}

// SegmentRule matches users meeting all its conditions.
type SegmentRule struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
}

// Segment condition properties.
const (
	SegmentIn    = "User is in segment"
	SegmentNotIn = "User is not in segment"
)

// Operators of conditions, by FeatBit's names.
var (
	numericOps  = []string{"LessThan", "BiggerThan", "LessEqualThan", "BiggerEqualThan"}
	stringOps   = []string{"Equal", "NotEqual", "Contains", "NotContain", "StartsWith", "EndsWith"}
	regexOps    = []string{"MatchRegex", "NotMatchRegex"}
	multiOps    = []string{"IsOneOf", "NotOneOf"}
	booleanOps  = []string{"IsTrue", "IsFalse"}
	allOperator = slices.Concat(numericOps, stringOps, regexOps, multiOps, booleanOps)
)

// Operators lists every condition operator, for editors.
func Operators() []string { return slices.Clone(allOperator) }

// Variation types.
const (
	VariationBoolean = "boolean"
	VariationString  = "string"
	VariationNumber  = "number"
	VariationJSON    = "json"
)

// Limits of targeting content, in characters or items. Keys and names have
// the store's limits for every key and name.
const (
	MaxKeyLen        = 128
	MaxNameLen       = 128
	MaxTags          = 50
	MaxKeyIDLen      = 512
	maxTagLen        = 64
	maxVariations    = 100
	maxRules         = 500
	maxConditions    = 100
	maxValueLen      = 32 << 10
	rolloutTolerance = 1e-6
)

// Problem is a field found wrong and what is wrong with it ("required" or
// "invalid"); the store turns it into its error code.
type Problem struct {
	Field, Problem string
}

// problems collects the problems of one flag or segment.
type problems []Problem

func (p *problems) add(field, problem string) { *p = append(*p, Problem{field, problem}) }

// CheckFlag checks a flag's variations and targeting, everything but its
// name, key and description, and returns what is wrong in the order the
// fields are checked, and the segments its rules name.
func CheckFlag(f *Flag) ([]Problem, []uuid.UUID) {
	var v problems
	checkVariations(&v, f.VariationType, f.Variations)
	ids := map[string]bool{}
	for _, vr := range f.Variations {
		ids[vr.ID] = true
	}
	if !ids[f.DisabledVariationID] {
		v.add("disabledVariationId", "invalid")
	}
	checkTags(&v, f.Tags)
	checkTargetUsers(&v, f.TargetUsers, ids)
	checkFallthrough(&v, f.Fallthrough, ids)
	refs := checkFlagRules(&v, f.Rules, ids)
	return v, refs
}

// CheckSegment checks a segment's users, rules and tags: everything but its
// name, key, type, description and scopes.
func CheckSegment(sg *Segment) []Problem {
	var v problems
	for field, users := range map[string][]string{"included": sg.Included, "excluded": sg.Excluded} {
		if slices.ContainsFunc(users, func(u string) bool { return u == "" || !Storable(u, MaxKeyIDLen) }) {
			v.add(field, "invalid")
		}
	}
	checkSegmentRules(&v, sg.Rules)
	checkTags(&v, sg.Tags)
	return v
}

// checkVariations checks a flag's variation type and variations: unique
// non-empty ids, names, and values that parse as the type.
func checkVariations(v *problems, typ string, variations []Variation) {
	switch typ {
	case "":
		v.add("variationType", "required")
	case VariationBoolean, VariationString, VariationNumber, VariationJSON:
	default:
		v.add("variationType", "invalid")
	}
	if len(variations) == 0 || len(variations) > maxVariations {
		v.add("variations", "invalid")
		return
	}
	ids := map[string]bool{}
	for _, vr := range variations {
		if vr.ID == "" || ids[vr.ID] || len(vr.ID) > MaxKeyLen || strings.TrimSpace(vr.Name) == "" ||
			!Storable(vr.Name, MaxNameLen) || !Storable(vr.Value, maxValueLen) || !validValue(typ, vr.Value) {
			v.add("variations", "invalid")
			return
		}
		ids[vr.ID] = true
	}
}

// validValue reports whether a variation value parses as the variation type.
func validValue(typ, value string) bool {
	switch typ {
	case VariationBoolean:
		return value == "true" || value == "false"
	case VariationNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case VariationJSON:
		return json.Valid([]byte(value))
	case VariationString:
		return strings.TrimSpace(value) != ""
	}
	return true // an unknown type is reported on variationType
}

// Storable reports whether text can be kept: valid UTF-8, no NUL, at most max runes.
func Storable(s string, max int) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0) && utf8.RuneCountInString(s) <= max
}

// checkTags checks a tag list: non-empty tags without the characters that
// structure resource names (":", ";", ","), unique.
func checkTags(v *problems, tags []string) {
	if len(tags) > MaxTags {
		v.add("tags", "invalid")
		return
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if strings.TrimSpace(t) != t || t == "" || strings.ContainsAny(t, ":;,") || !Storable(t, maxTagLen) || seen[t] {
			v.add("tags", "invalid")
			return
		}
		seen[t] = true
	}
}

// checkTargetUsers checks individual targets: known variations, non-empty
// user keys, and no user targeted twice.
func checkTargetUsers(v *problems, targets []TargetUser, variationIDs map[string]bool) {
	users := map[string]bool{}
	for _, t := range targets {
		if !variationIDs[t.VariationID] {
			v.add("targetUsers", "invalid")
			return
		}
		for _, k := range t.KeyIDs {
			if k == "" || users[k] || !Storable(k, MaxKeyIDLen) {
				v.add("targetUsers", "invalid")
				return
			}
			users[k] = true
		}
	}
}

// checkFlagRules checks flag rules and returns the segments their conditions name.
func checkFlagRules(v *problems, rules []FlagRule, variationIDs map[string]bool) []uuid.UUID {
	var segments []uuid.UUID
	ids := map[string]bool{}
	if len(rules) > maxRules {
		v.add("rules", "invalid")
		return nil
	}
	for _, r := range rules {
		refs, ok := checkConditions(r.Conditions, true)
		if r.ID == "" || ids[r.ID] || !Storable(r.Name, MaxNameLen) || !ok ||
			!validDispatchKey(r.DispatchKey) || !validRollout(r.Variations, variationIDs) {
			v.add("rules", "invalid")
			return nil
		}
		ids[r.ID] = true
		segments = append(segments, refs...)
	}
	slices.SortFunc(segments, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(segments)
}

// checkFallthrough checks the default rule.
func checkFallthrough(v *problems, f Fallthrough, variationIDs map[string]bool) {
	if !validDispatchKey(f.DispatchKey) || !validRollout(f.Variations, variationIDs) {
		v.add("fallthrough", "invalid")
	}
}

// checkSegmentRules checks a segment's rules, which may not name segments.
func checkSegmentRules(v *problems, rules []SegmentRule) {
	ids := map[string]bool{}
	if len(rules) > maxRules {
		v.add("rules", "invalid")
		return
	}
	for _, r := range rules {
		if _, ok := checkConditions(r.Conditions, false); !ok || r.ID == "" || ids[r.ID] || !Storable(r.Name, MaxNameLen) {
			v.add("rules", "invalid")
			return
		}
		ids[r.ID] = true
	}
}

func validDispatchKey(k *string) bool {
	return k == nil || Storable(*k, MaxNameLen)
}

// checkConditions checks a rule's conditions and returns the segments they name.
func checkConditions(conditions []Condition, segmentsAllowed bool) ([]uuid.UUID, bool) {
	if len(conditions) == 0 || len(conditions) > maxConditions {
		return nil, false
	}
	var segments []uuid.UUID
	for _, c := range conditions {
		if !Storable(c.ID, MaxKeyLen) || !Storable(c.Property, MaxNameLen) || strings.TrimSpace(c.Property) == "" ||
			!Storable(c.Value, maxValueLen) {
			return nil, false
		}
		if c.Property == SegmentIn || c.Property == SegmentNotIn {
			var ids []string
			if !segmentsAllowed || json.Unmarshal([]byte(c.Value), &ids) != nil || len(ids) == 0 {
				return nil, false
			}
			for _, s := range ids {
				id, err := uuid.Parse(s)
				if err != nil {
					return nil, false
				}
				segments = append(segments, id)
			}
			continue
		}
		if !validOperand(c.Op, c.Value) {
			return nil, false
		}
	}
	return segments, true
}

// validOperand checks an operator and the value it compares with.
func validOperand(op, value string) bool {
	switch {
	case slices.Contains(numericOps, op):
		_, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		return err == nil
	case slices.Contains(regexOps, op):
		_, err := regexp.Compile(value)
		return err == nil
	case slices.Contains(multiOps, op):
		var values []string
		return json.Unmarshal([]byte(value), &values) == nil
	case slices.Contains(stringOps, op), slices.Contains(booleanOps, op):
		return true
	}
	return false
}

// validRollout reports whether rollouts name known variations and their
// ranges, in order, cover [0, 1] exactly once.
func validRollout(variations []RolloutVariation, variationIDs map[string]bool) bool {
	if len(variations) == 0 {
		return false
	}
	ranges := make([][]float64, 0, len(variations))
	for _, rv := range variations {
		if !variationIDs[rv.ID] || len(rv.Rollout) != 2 || rv.ExptRollout < 0 || rv.ExptRollout > 1 {
			return false
		}
		lo, hi := rv.Rollout[0], rv.Rollout[1]
		if lo < 0 || hi > 1 || lo > hi {
			return false
		}
		ranges = append(ranges, rv.Rollout)
	}
	slices.SortStableFunc(ranges, func(a, b []float64) int {
		if a[0] != b[0] {
			return cmpFloat(a[0], b[0])
		}
		return cmpFloat(a[1], b[1])
	})
	at := 0.0
	for _, r := range ranges {
		if math.Abs(r[0]-at) > rolloutTolerance {
			return false // a gap or an overlap
		}
		at = r[1]
	}
	return math.Abs(at-1) <= rolloutTolerance
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
