// Package describe says in words what a flag or a segment does and how a
// change changed it, for people who do not read the JSON model: the flag
// page's summary, the history pages and the audit log all use it, so a rule
// reads the same everywhere. It needs no database: segment names come from a
// Names lookup the caller fills.
package describe

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// Names gives the name of a segment by id; ok is false for a segment that
// no longer exists (or is not visible), which reads as "a deleted segment".
type Names func(segmentID string) (name string, ok bool)

// maxListed bounds how many values or user keys a sentence lists before it
// says how many more there are.
const maxListed = 10

// operatorWords are the condition operators as a sentence says them, between
// the property and the value.
var operatorWords = map[string]string{
	"Equal":           "is",
	"NotEqual":        "is not",
	"Contains":        "contains",
	"NotContain":      "does not contain",
	"StartsWith":      "starts with",
	"EndsWith":        "ends with",
	"MatchRegex":      "matches",
	"NotMatchRegex":   "does not match",
	"IsOneOf":         "is one of",
	"NotOneOf":        "is not one of",
	"LessThan":        "is less than",
	"BiggerThan":      "is greater than",
	"LessEqualThan":   "is at most",
	"BiggerEqualThan": "is at least",
	"IsTrue":          "is true",
	"IsFalse":         "is false",
}

// Condition says one condition: "country is one of NL, DE", "user is in
// segment Beta testers", "plan matches ^pro-".
func Condition(c targeting.Condition, segments Names) string {
	switch c.Property {
	case targeting.SegmentIn, targeting.SegmentNotIn:
		verb := "is in segment"
		if c.Property == targeting.SegmentNotIn {
			verb = "is not in segment"
		}
		var ids []string
		_ = json.Unmarshal([]byte(c.Value), &ids)
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = segmentName(id, segments)
		}
		return "user " + verb + " " + joinOr(names)
	}
	words, ok := operatorWords[c.Op]
	if !ok {
		words = c.Op
	}
	switch c.Op {
	case "IsTrue", "IsFalse":
		return c.Property + " " + words
	case "IsOneOf", "NotOneOf":
		var vs []string
		if json.Unmarshal([]byte(c.Value), &vs) != nil {
			return c.Property + " " + words + " " + c.Value
		}
		return c.Property + " " + words + " " + list(vs)
	}
	return c.Property + " " + words + " " + c.Value
}

// Conditions joins a rule's conditions with "and".
func Conditions(cs []targeting.Condition, segments Names) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = Condition(c, segments)
	}
	return strings.Join(parts, " and ")
}

// Serve says what a rule serves: "serve True", or a rollout "serve 30% True,
// 70% False by email" (by the user key when no attribute is named).
func Serve(rv []targeting.RolloutVariation, dispatchKey *string, variations []targeting.Variation) string {
	if single, ok := singleVariation(rv); ok {
		return "serve " + VariationName(single, variations)
	}
	return "serve " + Rollout(rv, variations) + " by " + dispatchAttribute(dispatchKey)
}

// Rollout lists a rollout's shares in the order of its ranges, "30% True,
// 70% False"; variations given no users are left out.
func Rollout(rv []targeting.RolloutVariation, variations []targeting.Variation) string {
	parts := []string{}
	for _, r := range rv {
		if p := share(r); p > 0 {
			parts = append(parts, percent(p)+" "+VariationName(r.ID, variations))
		}
	}
	return strings.Join(parts, ", ")
}

// shares is a rollout's percentages alone, "30%/70%", for a change of split.
func shares(rv []targeting.RolloutVariation) string {
	parts := []string{}
	for _, r := range rv {
		if p := share(r); p > 0 {
			parts = append(parts, percent(p))
		}
	}
	return strings.Join(parts, "/")
}

// share is the percentage of users a range of a rollout holds.
func share(r targeting.RolloutVariation) float64 {
	if len(r.Rollout) != 2 {
		return 0
	}
	return (r.Rollout[1] - r.Rollout[0]) * 100
}

// singleVariation is the variation a serve gives everyone, if it is one.
func singleVariation(rv []targeting.RolloutVariation) (string, bool) {
	if len(rv) == 1 && len(rv[0].Rollout) == 2 && rv[0].Rollout[0] <= 1e-6 && rv[0].Rollout[1] >= 1-1e-6 {
		return rv[0].ID, true
	}
	return "", false
}

func dispatchAttribute(key *string) string {
	if key == nil || *key == "" {
		return "user key"
	}
	return *key
}

// percent writes a share with at most two decimals, the finest a rollout
// is written in (targeting.ParsePercent): "30%", "12.34%", "33.33%".
func percent(p float64) string {
	return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) + "%"
}

// VariationName is a variation's name (its value when unnamed), or "a
// removed variation" for an id the flag no longer has.
func VariationName(id string, variations []targeting.Variation) string {
	for _, v := range variations {
		if v.ID == id {
			return variationLabel(v)
		}
	}
	return "a removed variation"
}

func variationLabel(v targeting.Variation) string {
	if v.Name != "" {
		return v.Name
	}
	return v.Value
}

func segmentName(id string, segments Names) string {
	if segments != nil {
		if name, ok := segments(id); ok {
			return name
		}
	}
	return "a deleted segment"
}

// list writes values as "a, b, c", the first maxListed and then "and N more".
func list(vs []string) string {
	if len(vs) > maxListed {
		return strings.Join(vs[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(vs)-maxListed)
	}
	return strings.Join(vs, ", ")
}

// joinOr writes names as "A", "A or B", "A, B or C".
func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return "(none)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Summary is a flag's behaviour in sentences, part by part, as its page
// shows it before any editor.
type Summary struct {
	// Status is "On" or "Off"; Off says what the flag serves when off.
	Status, Off string
	// Targets are the individual targets, one sentence per variation.
	Targets []Part
	// Rules are the rules in the order they are tried.
	Rules []Part
	// Default is what everyone else gets.
	Default string
}

// Part is one sentence, with the name of what it describes (a rule's name).
type Part struct {
	Name, Sentence string
}

// FlagSummary describes a flag.
func FlagSummary(f targeting.Flag, segments Names) Summary {
	s := Summary{Status: "Off", Off: "When off, serve " + VariationName(f.DisabledVariationID, f.Variations)}
	if f.IsEnabled {
		s.Status = "On"
	}
	for _, t := range f.TargetUsers {
		if len(t.KeyIDs) == 0 {
			continue
		}
		s.Targets = append(s.Targets, Part{Name: VariationName(t.VariationID, f.Variations),
			Sentence: "Serve " + VariationName(t.VariationID, f.Variations) + " to " + list(t.KeyIDs)})
	}
	for _, r := range f.Rules {
		s.Rules = append(s.Rules, Part{Name: r.Name, Sentence: FlagRule(r, f.Variations, segments)})
	}
	s.Default = "Otherwise " + Serve(f.Fallthrough.Variations, f.Fallthrough.DispatchKey, f.Variations)
	return s
}

// FlagRule says a flag rule: "If country is one of NL, DE, serve True"; a
// rule without conditions serves everyone it reaches.
func FlagRule(r targeting.FlagRule, variations []targeting.Variation, segments Names) string {
	serve := Serve(r.Variations, r.DispatchKey, variations)
	if len(r.Conditions) == 0 {
		return "For everyone, " + serve
	}
	return "If " + Conditions(r.Conditions, segments) + ", " + serve
}

// SegmentRule says a segment rule: "Users whose country is one of NL, DE".
func SegmentRule(r targeting.SegmentRule, segments Names) string {
	if len(r.Conditions) == 0 {
		return "Every user"
	}
	return "Users where " + Conditions(r.Conditions, segments)
}
