package eval

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/google/uuid"
)

// FeatBit's dispatch test vectors (featbit-node-server-sdk
// tests/evaluation/DispatchAlgorithm.test.ts), and two keys checked for
// parity between FeatBit's .NET and Node evaluators.
func TestBucketMatchesFeatBit(t *testing.T) {
	tests := []struct {
		key  string
		want float64
	}{
		{"test-value", 0.14653629204258323},
		{"qKPKh1S3FolC", 0.9105919692665339},
		{"3eacb184-2d79-49df-9ea7-edd4f10e4c6f", 0.08994403155520558},
		{"disp", 0.8432291173376143},
		{"dispkundefined", 0.461111459415406},
	}
	for _, tt := range tests {
		if got := Bucket(tt.key); got != tt.want {
			t.Errorf("Bucket(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestInRollout(t *testing.T) {
	b := Bucket("test-value") // 0.1465…
	tests := []struct {
		lo, hi float64
		want   bool
	}{
		{0, 1, true},
		{0, 0.999995, true}, // within 1e-5 of everyone
		{0, 0, false},
		{0, 0.1, false},
		{0.1, 0.2, true},
		{b, 0.2, true}, // both ends included
		{0, b, true},
		{0.5, 1, false},
	}
	for _, tt := range tests {
		if got := InRollout("test-value", tt.lo, tt.hi); got != tt.want {
			t.Errorf("InRollout(test-value, %v, %v) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// evalFlag is a boolean flag, on, serving true by default.
func evalFlag(key string) targeting.Flag {
	return targeting.Flag{Key: key, VariationType: targeting.VariationBoolean, IsEnabled: true, DisabledVariationID: "f",
		Variations:  []targeting.Variation{{ID: "t", Name: "True", Value: "true"}, {ID: "f", Name: "False", Value: "false"}},
		TargetUsers: []targeting.TargetUser{}, Rules: []targeting.FlagRule{}, ExptIncludeAllTargets: true,
		Fallthrough: targeting.Fallthrough{IncludedInExpt: true, Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 1}}}}
}

func half() []targeting.RolloutVariation {
	return []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 0.5}, ExptRollout: 1}, {ID: "f", Rollout: []float64{0.5, 1}, ExptRollout: 1}}
}

func rule(id string, conditions ...targeting.Condition) targeting.FlagRule {
	return targeting.FlagRule{ID: id, Name: "rule " + id, Conditions: conditions,
		Variations: []targeting.RolloutVariation{{ID: "f", Rollout: []float64{0, 1}, ExptRollout: 1}}}
}

func user(key string, props ...string) EndUser {
	u := EndUser{KeyID: key}
	for i := 0; i+1 < len(props); i += 2 {
		u.CustomizedProperties = append(u.CustomizedProperties, UserProperty{Name: props[i], Value: props[i+1]})
	}
	return u
}

func value(ev Evaluation) string {
	if ev.Variation == nil {
		return "<none>"
	}
	return ev.Variation.Value
}

func TestEvaluateOrder(t *testing.T) {
	seg := targeting.Segment{ID: uuid.New(), Included: []string{"u-seg", "u-both"}, Excluded: []string{"u-both"}, Rules: []targeting.SegmentRule{
		{ID: "r", Conditions: []targeting.Condition{{Property: "plan", Op: "Equal", Value: "gold"}}}}}
	segs := SegmentMap([]targeting.Segment{seg})
	inSeg := targeting.Condition{Property: targeting.SegmentIn, Value: fmt.Sprintf(`[%q]`, seg.ID)}
	notInSeg := targeting.Condition{Property: targeting.SegmentNotIn, Value: fmt.Sprintf(`[%q]`, seg.ID)}

	targeted := evalFlag("targeted")
	targeted.TargetUsers = []targeting.TargetUser{{KeyIDs: []string{"u-false"}, VariationID: "f"}}
	targeted.Rules = []targeting.FlagRule{rule("r1", targeting.Condition{Property: "keyId", Op: "Equal", Value: "u-false"})}
	off := evalFlag("off")
	off.IsEnabled = false
	off.TargetUsers = targeted.TargetUsers
	archived := evalFlag("archived")
	archived.IsArchived = true
	rules := evalFlag("rules")
	rules.Rules = []targeting.FlagRule{
		rule("country", targeting.Condition{Property: "country", Op: "IsOneOf", Value: `["cn","us"]`},
			targeting.Condition{Property: "age", Op: "BiggerEqualThan", Value: "18"}),
		rule("segment", inSeg),
	}
	excluded := evalFlag("excluded")
	excluded.Rules = []targeting.FlagRule{rule("not-in", notInSeg)}
	split := evalFlag("half")
	split.Fallthrough.Variations = half()

	tests := []struct {
		name       string
		flag       targeting.Flag
		user       EndUser
		want, kind string
		split      bool
	}{
		{"archived serves nothing", archived, user("u1"), "<none>", MatchArchived, false},
		{"off serves the off variation, targets or not", off, user("u-false"), "false", MatchDisabled, false},
		{"individual target before rules", targeted, user("u-false"), "false", MatchTargeted, false},
		{"fallthrough", targeted, user("u1"), "true", MatchFallthrough, false},
		{"all conditions of a rule", rules, user("u1", "country", "us", "age", "20"), "false", MatchRule, false},
		{"one condition fails the rule", rules, user("u1", "country", "us", "age", "17"), "true", MatchFallthrough, false},
		{"in segment: included", rules, user("u-seg"), "false", MatchRule, false},
		{"in segment: excluded wins over included", rules, user("u-both"), "true", MatchFallthrough, false},
		{"in segment: by segment rule", rules, user("u9", "plan", "gold"), "false", MatchRule, false},
		{"not in segment", excluded, user("u9"), "false", MatchRule, false},
		{"not in segment fails for members", excluded, user("u-seg"), "true", MatchFallthrough, false},
		// FeatBit's node SDK gives true,true,false,false,true,false for a…f.
		{"split a", split, user("a"), "true", MatchFallthrough, true},
		{"split b", split, user("b"), "true", MatchFallthrough, true},
		{"split c", split, user("c"), "false", MatchFallthrough, true},
		{"split d", split, user("d"), "false", MatchFallthrough, true},
		{"split e", split, user("e"), "true", MatchFallthrough, true},
		{"split f", split, user("f"), "false", MatchFallthrough, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Evaluate(&tt.flag, tt.user, segs)
			if value(ev) != tt.want || ev.Kind != tt.kind || ev.Split != tt.split {
				t.Errorf("got %s/%s split %v, want %s/%s split %v", value(ev), ev.Kind, ev.Split, tt.want, tt.kind, tt.split)
			}
		})
	}
}

func TestEvaluateRuleReasonAndDispatchKey(t *testing.T) {
	f := evalFlag("disp")
	key := "k"
	f.Rules = []targeting.FlagRule{{ID: "r1", Name: "Beta users", DispatchKey: &key,
		Conditions: []targeting.Condition{{Property: "keyId", Op: "StartsWith", Value: "u"}},
		Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 0.8}, ExptRollout: 1}, {ID: "f", Rollout: []float64{0.8, 1}, ExptRollout: 1}}}}
	// Without the attribute .NET buckets "disp" + "" (0.843…), so false;
	// the node SDK would bucket "dispundefined".
	ev := Evaluate(&f, user("u1"), nil)
	if value(ev) != "false" || ev.Reason != "Beta users" || ev.RuleID != "r1" || !ev.Split {
		t.Errorf("got %s %q %q split %v, want false \"Beta users\" r1 split", value(ev), ev.Reason, ev.RuleID, ev.Split)
	}
	// With it, every user with the same attribute value lands together.
	for _, k := range []string{"u1", "u2", "u3"} {
		if ev := Evaluate(&f, user(k, "k", "team-1"), nil); value(ev) != value(Evaluate(&f, user("u9", "k", "team-1"), nil)) {
			t.Errorf("user %s left its team's bucket", k)
		}
	}
}

func TestOperators(t *testing.T) {
	tests := []struct {
		op, user, value string
		want            bool
	}{
		{"LessThan", "9", "10", true},
		{"LessThan", "10", "10", false},
		{"LessEqualThan", "10", "10", true},
		{"BiggerThan", "10.5", "10", true},
		{"BiggerEqualThan", " 10 ", "10", true},
		{"BiggerThan", "1,000", "999", true}, // thousands separators, as .NET parses
		{"BiggerThan", "10abc", "1", false},  // strict, unlike the node SDK
		{"BiggerThan", "NaN", "1", false},
		{"LessThan", "", "1", false},
		{"BiggerThan", "0x10", "1", false},
		{"BiggerThan", "Infinity", "1", true},
		{"Equal", "abc", "abc", true},
		{"Equal", "abc", "ABC", false},
		{"NotEqual", "abc", "ABC", true},
		{"Contains", "abcdef", "cde", true},
		{"NotContain", "abcdef", "xyz", true},
		{"NotContain", "abcdef", "cde", false},
		{"StartsWith", "abcdef", "abc", true},
		{"EndsWith", "abcdef", "def", true},
		{"EndsWith", "abcdef", "abc", false},
		// .NET: Regex.IsMatch(userValue, pattern) (the node SDK swaps them).
		{"MatchRegex", "ann@example.com", `^.*@example\.com$`, true},
		{"MatchRegex", "abc", "xabcx", false},
		{"NotMatchRegex", "ann@other.org", `@example\.com$`, true},
		{"MatchRegex", "abc", "(", false},
		{"IsOneOf", "us", `["cn","us"]`, true},
		{"IsOneOf", "fr", `["cn","us"]`, false},
		{"NotOneOf", "fr", `["cn","us"]`, true},
		{"IsOneOf", "us", `not json`, false},
		{"IsTrue", "TRUE", "", true},
		{"IsTrue", "yes", "", false},
		{"IsFalse", "false", "IsFalse", true},
		{"Unknown", "a", "a", false},
	}
	for _, tt := range tests {
		c := prepareConditions([]targeting.Condition{{Op: tt.op, Value: tt.value}})[0]
		if got := c.matches(tt.user); got != tt.want {
			t.Errorf("%s(%q, %q) = %v, want %v", tt.op, tt.user, tt.value, got, tt.want)
		}
	}
}

// .NET's EndUser.ValueOf: a missing custom attribute is "", so NotEqual and
// NotOneOf match; a missing name matches nothing at all.
func TestMissingAttributes(t *testing.T) {
	tests := []struct {
		c    targeting.Condition
		u    EndUser
		want bool
	}{
		{targeting.Condition{Property: "plan", Op: "NotEqual", Value: "gold"}, user("u1"), true},
		{targeting.Condition{Property: "plan", Op: "NotOneOf", Value: `["gold"]`}, user("u1"), true},
		{targeting.Condition{Property: "plan", Op: "Equal", Value: ""}, user("u1"), true},
		{targeting.Condition{Property: "plan", Op: "Contains", Value: "g"}, user("u1"), false},
		{targeting.Condition{Property: "name", Op: "NotEqual", Value: "x"}, user("u1"), false},
		{targeting.Condition{Property: "name", Op: "NotEqual", Value: "x"}, EndUser{KeyID: "u1", Name: new("Ann")}, true},
		{targeting.Condition{Property: "keyId", Op: "Equal", Value: "u1"}, user("u1"), true},
	}
	for _, tt := range tests {
		if got := ruleMatches(prepareConditions([]targeting.Condition{tt.c}), tt.u, nil, true); got != tt.want {
			t.Errorf("%+v for %+v = %v, want %v", tt.c, tt.u, got, tt.want)
		}
	}
}

func TestSendToExperiment(t *testing.T) {
	f := evalFlag("expt")
	f.TargetUsers = []targeting.TargetUser{{KeyIDs: []string{"t1"}, VariationID: "t"}}
	if !Evaluate(&f, user("t1"), nil).SendToExperiment {
		t.Error("targeted user with exptIncludeAllTargets: not sent to experiment")
	}
	f.ExptIncludeAllTargets = false
	if Evaluate(&f, user("t1"), nil).SendToExperiment {
		t.Error("targeted user without exptIncludeAllTargets: sent to experiment")
	}
	f.Fallthrough.IncludedInExpt = false
	if Evaluate(&f, user("u1"), nil).SendToExperiment {
		t.Error("fallthrough not included in experiments: sent")
	}
	// Half of the served traffic in the experiment: about half the users.
	f.Fallthrough = targeting.Fallthrough{IncludedInExpt: true, Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 0.5}}}
	in := 0
	for i := range 1000 {
		if Evaluate(&f, user(fmt.Sprint("u", i)), nil).SendToExperiment {
			in++
		}
	}
	if in < 400 || in > 600 {
		t.Errorf("%d of 1000 users sent to a 50%% experiment", in)
	}
}

func TestEvaluationJSON(t *testing.T) {
	f := evalFlag("json")
	b, err := json.Marshal(Evaluate(&f, user("u1"), nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"variation":{"id":"t","name":"True","value":"true"},"kind":"default","matchReason":"default","split":false,"sendToExperiment":true}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
