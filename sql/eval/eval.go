// Package eval evaluates flags for end users with FeatBit's server
// semantics: what the SDK endpoints serve and what "test a user" shows. It
// needs no database.
package eval

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// EndUser is who a flag is evaluated for, as FeatBit's SDKs describe them.
type EndUser struct {
	KeyID string `json:"keyId"`
	// Name is nil when the user has none; FeatBit's evaluator then matches no
	// condition on "name", not even NotEqual.
	Name                 *string        `json:"name"`
	CustomizedProperties []UserProperty `json:"customizedProperties"`
}

// UserProperty is a named attribute of an end user. Values are strings, as
// FeatBit compares them.
type UserProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// valueOf is the user's value of a property: keyId and name are the user's
// own, anything else the first customized property of that name, and "" when
// there is none (FeatBit's EndUser.ValueOf). ok is false only for an absent
// name, which matches nothing.
func (u EndUser) valueOf(property string) (string, bool) {
	switch {
	case strings.TrimSpace(property) == "":
		return "", true
	case property == "keyId":
		return u.KeyID, true
	case property == "name":
		if u.Name == nil {
			return "", false
		}
		return *u.Name, true
	}
	for _, p := range u.CustomizedProperties {
		if p.Name == property {
			return p.Value, true
		}
	}
	return "", true
}

// Why a flag served what it served. The strings are FeatBit's match reasons
// except for the rule kind, whose reason is the rule's name.
const (
	MatchArchived    = "flag archived"
	MatchDisabled    = "flag disabled"
	MatchTargeted    = "targeted"
	MatchRule        = "rule"
	MatchFallthrough = "default"
)

// Evaluation is the outcome of evaluating a flag for a user.
type Evaluation struct {
	// Variation is what the user gets; nil for an archived flag, and for a
	// rollout no range of which holds the user (a malformed flag).
	Variation *targeting.Variation `json:"variation"`
	// Kind is one of the Match constants.
	Kind string `json:"kind"`
	// Reason is FeatBit's match reason: Kind, or the matched rule's name.
	Reason string `json:"matchReason"`
	// RuleID is the matched rule's id for Kind MatchRule.
	RuleID string `json:"ruleId,omitempty"`
	// Split is true when the variation came from a rollout that divides users
	// between several variations.
	Split bool `json:"split"`
	// SendToExperiment says whether SDK events for this evaluation count in experiments.
	SendToExperiment bool `json:"sendToExperiment"`
}

// SegmentLookup finds a segment by id among those visible where a flag is
// evaluated; unknown ids are skipped, as FeatBit does.
type SegmentLookup func(id uuid.UUID) (*targeting.Segment, bool)

// SegmentMap is a SegmentLookup over a set of segments.
func SegmentMap(segments []targeting.Segment) SegmentLookup {
	m := make(map[uuid.UUID]*targeting.Segment, len(segments))
	for i := range segments {
		m[segments[i].ID] = &segments[i]
	}
	return func(id uuid.UUID) (*targeting.Segment, bool) {
		sg, ok := m[id]
		return sg, ok
	}
}

// Evaluate evaluates a flag for a user with FeatBit's server semantics: an
// archived flag serves nothing; a disabled flag serves its off variation;
// then individual targets, then the rules in order (all conditions of a rule
// must hold), then the fallthrough. Rollouts bucket users exactly as FeatBit
// does, so a user gets the same variation from Bunting as from FeatBit.
//
// It prepares the flag (and each segment it meets) for this one evaluation;
// evaluating the same flag for many users, Prepare it once.
func Evaluate(f *targeting.Flag, u EndUser, segments SegmentLookup) Evaluation {
	var prepared PreparedSegments
	if segments != nil {
		prepared = func(id uuid.UUID) (*PreparedSegment, bool) {
			sg, ok := segments(id)
			if !ok {
				return nil, false
			}
			return PrepareSegment(sg), true
		}
	}
	return Prepare(f).Evaluate(u, prepared)
}

// Prepared is a flag ready to be evaluated for many users: the values of its
// conditions (lists, numbers, patterns, segment ids) parsed once. It reads
// the flag, which must not change while it is used.
type Prepared struct {
	Flag  *targeting.Flag
	rules [][]condition // by rule
}

// Prepare parses a flag's condition values.
func Prepare(f *targeting.Flag) *Prepared {
	p := &Prepared{Flag: f, rules: make([][]condition, len(f.Rules))}
	for i, r := range f.Rules {
		p.rules[i] = prepareConditions(r.Conditions)
	}
	return p
}

// PreparedSegment is a segment with its rules' condition values parsed once.
type PreparedSegment struct {
	Segment *targeting.Segment
	rules   [][]condition
}

// PrepareSegment parses a segment's condition values.
func PrepareSegment(sg *targeting.Segment) *PreparedSegment {
	p := &PreparedSegment{Segment: sg, rules: make([][]condition, len(sg.Rules))}
	for i, r := range sg.Rules {
		p.rules[i] = prepareConditions(r.Conditions)
	}
	return p
}

// PreparedSegments finds a prepared segment by id, as SegmentLookup does.
type PreparedSegments func(id uuid.UUID) (*PreparedSegment, bool)

// Evaluate evaluates the prepared flag for a user, as Evaluate does.
func (p *Prepared) Evaluate(u EndUser, segments PreparedSegments) Evaluation {
	f := p.Flag
	if f.IsArchived {
		return Evaluation{Kind: MatchArchived, Reason: MatchArchived}
	}
	if !f.IsEnabled {
		return Evaluation{Variation: variation(f, f.DisabledVariationID), Kind: MatchDisabled, Reason: MatchDisabled}
	}
	for _, t := range f.TargetUsers {
		for _, k := range t.KeyIDs {
			if k == u.KeyID {
				return Evaluation{Variation: variation(f, t.VariationID), Kind: MatchTargeted, Reason: MatchTargeted,
					SendToExperiment: f.ExptIncludeAllTargets}
			}
		}
	}
	for i, r := range f.Rules {
		if ruleMatches(p.rules[i], u, segments, true) {
			ev := rollout(f, r.Variations, dispatchValue(r.DispatchKey, u), r.IncludedInExpt)
			ev.Kind, ev.Reason, ev.RuleID = MatchRule, r.Name, r.ID
			return ev
		}
	}
	ev := rollout(f, f.Fallthrough.Variations, dispatchValue(f.Fallthrough.DispatchKey, u), f.Fallthrough.IncludedInExpt)
	ev.Kind, ev.Reason = MatchFallthrough, MatchFallthrough
	return ev
}

// variation finds a flag's variation by id, as Flag.Variation does, but
// points into the flag rather than copying: an Evaluation is read, never
// changed.
func variation(f *targeting.Flag, id string) *targeting.Variation {
	for i := range f.Variations {
		if f.Variations[i].ID == id {
			return &f.Variations[i]
		}
	}
	return nil
}

// DispatchKey is what a rollout buckets a user by, for explaining an
// evaluation (Bucket of it is the user's place in the rollout).
func DispatchKey(flagKey string, attribute *string, u EndUser) string {
	return flagKey + dispatchValue(attribute, u)
}

// dispatchValue is the user's part of the dispatch key: a user is bucketed
// by the flag key followed by the user's key, or by the value of the rule's
// dispatch attribute.
func dispatchValue(attribute *string, u EndUser) string {
	if attribute == nil || strings.TrimSpace(*attribute) == "" {
		return u.KeyID
	}
	v, _ := u.valueOf(*attribute) // an absent name buckets as ""
	return v
}

// rollout picks the first variation whose range holds the user's bucket (of
// the flag key followed by value) and decides, as FeatBit does, whether the
// evaluation goes to experiments.
func rollout(f *targeting.Flag, variations []targeting.RolloutVariation, value string, ruleInExpt bool) Evaluation {
	var ev Evaluation
	var width, expt float64
	served := 0
	for _, rv := range variations {
		if len(rv.Rollout) == 2 && rv.Rollout[1] > rv.Rollout[0] {
			served++
		}
	}
	ev.Split = served > 1
	for _, rv := range variations {
		if len(rv.Rollout) == 2 && inRollout(rv.Rollout[0], rv.Rollout[1], "", f.Key, value) {
			ev.Variation = variation(f, rv.ID)
			width, expt = rv.Rollout[1]-rv.Rollout[0], rv.ExptRollout
			break
		}
	}
	switch {
	case f.ExptIncludeAllTargets:
		ev.SendToExperiment = true
	case !ruleInExpt || expt == 0 || width == 0:
		ev.SendToExperiment = false
	default:
		ev.SendToExperiment = inRollout(0, math.Min(1, expt/width), "expt", f.Key, value)
	}
	return ev
}

// Bucket is where a dispatch key falls in [0, 1]: the first four bytes of its
// MD5 as a little-endian signed integer, divided by -2³¹, made positive.
func Bucket(key string) float64 { return bucket("", key, "") }

// bucket is the Bucket of a, b and c joined, without building the string
// when it is short.
func bucket(a, b, c string) float64 {
	var buf [128]byte
	sum := md5.Sum(append(append(append(buf[:0], a...), b...), c...))
	n := int32(binary.LittleEndian.Uint32(sum[:4]))
	return math.Abs(float64(n) / math.MinInt32)
}

// InRollout reports whether a dispatch key falls in the range [lo, hi], both
// ends included; [0, 1] holds everyone and [0, 0] no one.
func InRollout(key string, lo, hi float64) bool { return inRollout(lo, hi, "", key, "") }

// inRollout is InRollout of the key a, b and c joined.
func inRollout(lo, hi float64, a, b, c string) bool {
	if lo == 0 && 1-hi < 1e-5 {
		return true
	}
	if lo == 0 && hi == 0 {
		return false
	}
	x := bucket(a, b, c)
	return x >= lo && x <= hi
}

// condition is a condition with its value parsed once: the list of a
// one-of or segment condition, the number of a comparison, the pattern of a
// regular expression. A value that does not parse matches nothing, as it
// did when parsed at each evaluation.
type condition struct {
	targeting.Condition
	list     []string // the value as a JSON array of strings
	listOK   bool
	segments []uuid.UUID // the ids of list that parse
	number   float64
	numberOK bool
	re       *regexp.Regexp // nil when the pattern does not compile
}

func prepareConditions(cs []targeting.Condition) []condition {
	out := make([]condition, len(cs))
	for i, c := range cs {
		pc := condition{Condition: c}
		switch {
		case c.Property == targeting.SegmentIn || c.Property == targeting.SegmentNotIn || c.Op == "IsOneOf" || c.Op == "NotOneOf":
			pc.listOK = json.Unmarshal([]byte(c.Value), &pc.list) == nil
			for _, s := range pc.list {
				if id, err := uuid.Parse(s); err == nil {
					pc.segments = append(pc.segments, id)
				}
			}
		}
		switch c.Op {
		case "LessThan", "LessEqualThan", "BiggerThan", "BiggerEqualThan":
			pc.number, pc.numberOK = parseNumber(c.Value)
		case "MatchRegex", "NotMatchRegex":
			// Patterns are checked when stored; one that does not compile matches nothing.
			pc.re, _ = regexp.Compile(c.Value)
		}
		out[i] = pc
	}
	return out
}

// ruleMatches reports whether a user meets every condition.
func ruleMatches(conditions []condition, u EndUser, segments PreparedSegments, segmentsAllowed bool) bool {
	for i := range conditions {
		c := &conditions[i]
		switch {
		case segmentsAllowed && c.Property == targeting.SegmentIn:
			if !inAnySegment(c, u, segments) {
				return false
			}
		case segmentsAllowed && c.Property == targeting.SegmentNotIn:
			if inAnySegment(c, u, segments) {
				return false
			}
		default:
			v, ok := u.valueOf(c.Property)
			if !ok || !c.matches(v) {
				return false
			}
		}
	}
	return true
}

// inAnySegment reports whether the user is in any of the segments a
// condition's JSON array of ids names.
func inAnySegment(c *condition, u EndUser, segments PreparedSegments) bool {
	if !c.listOK || segments == nil {
		return false
	}
	for _, id := range c.segments {
		if sg, ok := segments(id); ok && sg.matches(u) {
			return true
		}
	}
	return false
}

// InSegment reports whether a user is in a segment, as a rule naming the
// segment would decide it.
func InSegment(sg *targeting.Segment, u EndUser) bool { return PrepareSegment(sg).matches(u) }

// matches reports whether a user is in the segment: never when excluded,
// always when included, otherwise when any rule holds. Archived segments
// still match, as in FeatBit.
func (p *PreparedSegment) matches(u EndUser) bool {
	sg := p.Segment
	for _, k := range sg.Excluded {
		if k == u.KeyID {
			return false
		}
	}
	for _, k := range sg.Included {
		if k == u.KeyID {
			return true
		}
	}
	for _, r := range p.rules {
		if ruleMatches(r, u, nil, false) {
			return true
		}
	}
	return false
}

// matches compares a user's value with the condition's value; an unknown
// operator matches nothing.
func (c *condition) matches(user string) bool {
	value := c.Value
	switch c.Op {
	case "LessThan", "LessEqualThan", "BiggerThan", "BiggerEqualThan":
		a, okA := parseNumber(user)
		b := c.number
		if !okA || !c.numberOK {
			return false
		}
		switch c.Op {
		case "LessThan":
			return a < b
		case "LessEqualThan":
			return a <= b
		case "BiggerThan":
			return a > b
		}
		return a >= b
	case "Equal":
		return user == value
	case "NotEqual":
		return user != value
	case "Contains":
		return strings.Contains(user, value)
	case "NotContain":
		return !strings.Contains(user, value)
	case "StartsWith":
		return strings.HasPrefix(user, value)
	case "EndsWith":
		return strings.HasSuffix(user, value)
	case "MatchRegex", "NotMatchRegex":
		if c.re == nil {
			return false
		}
		return c.re.MatchString(user) == (c.Op == "MatchRegex")
	case "IsOneOf", "NotOneOf":
		if !c.listOK {
			return false
		}
		return slices.Contains(c.list, user) == (c.Op == "IsOneOf")
	case "IsTrue":
		return strings.EqualFold(user, "true")
	case "IsFalse":
		return strings.EqualFold(user, "false")
	}
	return false
}

// parseNumber parses a number as .NET's double.TryParse does for the
// invariant culture: surrounding spaces, a sign, thousands separators in the
// integral part, an exponent and "Infinity" are allowed; hexadecimal and NaN
// are not.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	unsigned := strings.TrimLeft(s, "+-")
	if strings.EqualFold(unsigned, "infinity") && len(s)-len(unsigned) <= 1 {
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if s == "" || strings.Trim(s, "0123456789+-.eE,") != "" {
		return 0, false
	}
	integral, rest := s, ""
	if i := strings.IndexAny(s, ".eE"); i >= 0 {
		integral, rest = s[:i], s[i:]
	}
	if strings.Contains(rest, ",") || strings.HasPrefix(strings.TrimLeft(integral, "+-"), ",") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(integral, ",", "")+rest, 64)
	if ne, ok := err.(*strconv.NumError); err != nil && !(ok && ne.Err == strconv.ErrRange) {
		return 0, false
	}
	return f, !math.IsNaN(f)
}
