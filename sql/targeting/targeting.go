// Package targeting is what a flag serves to whom and what a segment holds:
// flags, segments, their variations, targets, rules and conditions, and the
// checks that keep them well formed. It needs no database, so the store,
// the evaluator (package eval) and their fuzz tests share it.
package targeting

import (
	"encoding/json"
	"errors"
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
	MaxTagLen        = 64
	MaxVariations    = 100
	maxRules         = 500
	maxConditions    = 100
	maxValueLen      = 32 << 10
	rolloutTolerance = 1e-6
)

// Problem is a field found wrong and what is wrong with it ("required" or
// "invalid"); the store turns it into its error code. Path points at the
// part that is wrong ("rules[0].conditions[1].value") and Message says why
// in words ("not a number"), for whoever marks the field.
type Problem struct {
	Field, Problem string
	Path, Message  string
}

// problems collects the problems of one flag or segment: one per field,
// the first found, with where and why.
type problems []Problem

func (p *problems) add(field, problem string) { p.at(field, problem, field, "") }

func (p *problems) at(field, problem, path, message string) {
	*p = append(*p, Problem{Field: field, Problem: problem, Path: path, Message: message})
}

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
	switch {
	case len(variations) == 0:
		v.at("variations", "invalid", "variations", "a flag needs at least one variation")
		return
	case len(variations) > MaxVariations:
		v.at("variations", "invalid", "variations", "at most "+strconv.Itoa(MaxVariations)+" variations")
		return
	}
	ids := map[string]bool{}
	for i, vr := range variations {
		at := func(member, message string) {
			v.at("variations", "invalid", index("variations", i)+"."+member, message)
		}
		switch {
		case vr.ID == "" || len(vr.ID) > MaxKeyLen:
			at("id", "a variation needs an id of at most "+strconv.Itoa(MaxKeyLen)+" characters")
		case ids[vr.ID]:
			at("id", "two variations have the id "+vr.ID)
		case strings.TrimSpace(vr.Name) == "":
			at("name", "required")
		case !Storable(vr.Name, MaxNameLen):
			at("name", "at most "+strconv.Itoa(MaxNameLen)+" characters")
		case !Storable(vr.Value, maxValueLen):
			at("value", "too long or not text")
		default:
			if why := valueProblem(typ, vr.Value); why != "" {
				at("value", why)
			} else {
				ids[vr.ID] = true
				continue
			}
		}
		return
	}
}

// index writes a list member's path, "rules[2]".
func index(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]" }

// valueProblem says why a variation value does not parse as the variation
// type; "" when it does.
func valueProblem(typ, value string) string {
	switch typ {
	case VariationBoolean:
		if value != "true" && value != "false" {
			return "must be true or false"
		}
	case VariationNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "not a number"
		}
	case VariationJSON:
		var x any
		if err := json.Unmarshal([]byte(value), &x); err != nil {
			return "not valid JSON: " + jsonReason(err)
		}
	case VariationString:
		if strings.TrimSpace(value) == "" {
			return "required"
		}
	}
	return "" // an unknown type is reported on variationType
}

// jsonReason is a JSON syntax error in words, with where it is.
func jsonReason(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return strings.TrimPrefix(syn.Error(), "invalid character ") + " at character " + strconv.FormatInt(syn.Offset, 10)
	}
	return err.Error()
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
		if strings.TrimSpace(t) != t || t == "" || strings.ContainsAny(t, ":;,") || !Storable(t, MaxTagLen) || seen[t] {
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
	for i, t := range targets {
		if !variationIDs[t.VariationID] {
			v.at("targetUsers", "invalid", index("targetUsers", i)+".variationId", "not one of the flag's variations")
			return
		}
		for j, k := range t.KeyIDs {
			path := index(index("targetUsers", i)+".keyIds", j)
			switch {
			case k == "":
				v.at("targetUsers", "invalid", path, "an empty user key")
			case !Storable(k, MaxKeyIDLen):
				v.at("targetUsers", "invalid", path, "a user key of at most "+strconv.Itoa(MaxKeyIDLen)+" characters")
			case users[k]:
				v.at("targetUsers", "invalid", path, k+" is targeted twice; a user may be targeted once")
			default:
				users[k] = true
				continue
			}
			return
		}
	}
}

// checkFlagRules checks flag rules and returns the segments their conditions name.
func checkFlagRules(v *problems, rules []FlagRule, variationIDs map[string]bool) []uuid.UUID {
	var segments []uuid.UUID
	ids := map[string]bool{}
	if len(rules) > maxRules {
		v.at("rules", "invalid", "rules", "at most "+strconv.Itoa(maxRules)+" rules")
		return nil
	}
	for i, r := range rules {
		rule := index("rules", i)
		refs, path, why := checkRule(rule, r.ID, r.Name, r.Conditions, ids, true)
		switch {
		case why != "":
		case !validDispatchKey(r.DispatchKey):
			path, why = rule+".dispatchKey", "at most "+strconv.Itoa(MaxNameLen)+" characters"
		default:
			if why = rolloutProblem(r.Variations, variationIDs); why != "" {
				path = rule + ".variations"
			}
		}
		if why != "" {
			v.at("rules", "invalid", path, why)
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
	switch {
	case !validDispatchKey(f.DispatchKey):
		v.at("fallthrough", "invalid", "fallthrough.dispatchKey", "at most "+strconv.Itoa(MaxNameLen)+" characters")
	default:
		if why := rolloutProblem(f.Variations, variationIDs); why != "" {
			v.at("fallthrough", "invalid", "fallthrough.variations", why)
		}
	}
}

// checkSegmentRules checks a segment's rules, which may not name segments.
func checkSegmentRules(v *problems, rules []SegmentRule) {
	ids := map[string]bool{}
	if len(rules) > maxRules {
		v.at("rules", "invalid", "rules", "at most "+strconv.Itoa(maxRules)+" rules")
		return
	}
	for i, r := range rules {
		_, path, why := checkRule(index("rules", i), r.ID, r.Name, r.Conditions, ids, false)
		if why != "" {
			v.at("rules", "invalid", path, why)
			return
		}
		ids[r.ID] = true
	}
}

// checkRule checks what flag and segment rules share: an id of their own
// (ids holds those seen), a storable name and their conditions; path is
// where within rules the first problem is, from the rule's own path.
func checkRule(rule, id, name string, conditions []Condition, ids map[string]bool, segmentsAllowed bool) (refs []uuid.UUID, path, why string) {
	switch {
	case id == "" || ids[id]:
		return nil, rule + ".id", "each rule needs an id of its own"
	case !Storable(name, MaxNameLen):
		return nil, rule + ".name", "at most " + strconv.Itoa(MaxNameLen) + " characters"
	}
	refs, path, why = checkConditions(conditions, segmentsAllowed)
	if why != "" {
		return nil, rule + "." + path, why
	}
	return refs, "", ""
}

func validDispatchKey(k *string) bool {
	return k == nil || Storable(*k, MaxNameLen)
}

// checkConditions checks a rule's conditions and returns the segments they
// name, or the path of the first wrong one within the rule and why.
func checkConditions(conditions []Condition, segmentsAllowed bool) (segments []uuid.UUID, path, why string) {
	switch {
	case len(conditions) == 0:
		return nil, "conditions", "a rule needs at least one condition"
	case len(conditions) > maxConditions:
		return nil, "conditions", "at most " + strconv.Itoa(maxConditions) + " conditions"
	}
	for j, c := range conditions {
		at := index("conditions", j)
		switch {
		case !Storable(c.ID, MaxKeyLen):
			return nil, at + ".id", "an id of at most " + strconv.Itoa(MaxKeyLen) + " characters"
		case strings.TrimSpace(c.Property) == "":
			return nil, at + ".property", "required"
		case !Storable(c.Property, MaxNameLen):
			return nil, at + ".property", "at most " + strconv.Itoa(MaxNameLen) + " characters"
		case !Storable(c.Value, maxValueLen):
			return nil, at + ".value", "too long or not text"
		}
		if c.Property == SegmentIn || c.Property == SegmentNotIn {
			var ids []string
			switch {
			case !segmentsAllowed:
				return nil, at + ".property", "a segment's rules cannot name segments"
			case json.Unmarshal([]byte(c.Value), &ids) != nil || len(ids) == 0:
				return nil, at + ".value", "choose at least one segment"
			}
			for _, s := range ids {
				id, err := uuid.Parse(s)
				if err != nil {
					return nil, at + ".value", "not a segment id: " + s
				}
				segments = append(segments, id)
			}
			continue
		}
		if why := operandProblem(c.Op, c.Value); why != "" {
			return nil, at + ".value", why
		}
	}
	return segments, "", ""
}

// operandProblem says what is wrong with an operator and the value it
// compares with; "" when nothing is.
func operandProblem(op, value string) string {
	switch {
	case slices.Contains(numericOps, op):
		if _, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
			return "not a number"
		}
	case slices.Contains(regexOps, op):
		if _, err := regexp.Compile(value); err != nil {
			return "not a regular expression: " + strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		}
	case slices.Contains(multiOps, op):
		var values []string
		if json.Unmarshal([]byte(value), &values) != nil {
			return "not a list of values"
		}
		if len(values) == 0 {
			return "give at least one value"
		}
	case slices.Contains(stringOps, op), slices.Contains(booleanOps, op):
	default:
		return "unknown operator " + op
	}
	return ""
}

// rolloutProblem says what is wrong with what a rule serves: unknown
// variations, or ranges that do not cover [0, 1] exactly once; "" when
// nothing is.
func rolloutProblem(variations []RolloutVariation, variationIDs map[string]bool) string {
	if len(variations) == 0 {
		return "choose what the rule serves"
	}
	ranges := make([][]float64, 0, len(variations))
	for _, rv := range variations {
		switch {
		case !variationIDs[rv.ID]:
			return "serves " + rv.ID + ", which is not one of the flag's variations"
		case len(rv.Rollout) != 2 || rv.ExptRollout < 0 || rv.ExptRollout > 1:
			return "a rollout range needs a start and an end between 0 and 1"
		}
		lo, hi := rv.Rollout[0], rv.Rollout[1]
		if lo < 0 || hi > 1 || lo > hi {
			return "a rollout range needs a start and an end between 0 and 1"
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
			return "the percentages must add up to 100% without overlapping"
		}
		at = r[1]
	}
	if math.Abs(at-1) > rolloutTolerance {
		return "the percentages must add up to 100% without overlapping"
	}
	return ""
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
