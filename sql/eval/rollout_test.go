package eval

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// featbitBucket is FeatBit's documented dispatch algorithm, written again
// here so the tests do not take the code's word for it: the MD5 of the key,
// its first four bytes as a little-endian int32, divided by int.MinValue,
// made positive.
func featbitBucket(key string) float64 {
	sum := md5.Sum([]byte(key))
	n := int32(binary.LittleEndian.Uint32(sum[:4]))
	return math.Abs(float64(n) / -2147483648.0)
}

// Buckets of the keys the rollout tests use, computed outside Go (Python's
// hashlib and struct, by the algorithm above) and written out.
func TestBucketValues(t *testing.T) {
	tests := []struct {
		key  string
		want float64
	}{
		{"checkoutu1", 0.7776368111371994},
		{"checkoutu2", 0.6227346789091825},
		{"checkoutu3", 0.5539921573363245},
		{"checkoutu4", 0.31222820561379194},
		{"checkoutu5", 0.39402954606339335},
		{"checkoutu6", 0.4913886897265911},
		{"checkoutann", 0.1710097612813115},
		{"checkoutbob", 0.6133162742480636},
		{"pricingteam-1", 0.18658131547272205},
		{"pricing", 0.9086100640706718},
		{"exptcheckoutu1", 0.8988597872667015},
		{"exptcheckoutu3", 0.16271618520841002},
	}
	for _, tt := range tests {
		if got := Bucket(tt.key); got != tt.want {
			t.Errorf("Bucket(%q) = %v, want %v", tt.key, got, tt.want)
		}
		if got := featbitBucket(tt.key); got != tt.want {
			t.Errorf("the documented algorithm gives %v for %q, want %v", got, tt.key, tt.want)
		}
	}
	// And for many more keys, including long ones past the code's stack buffer.
	for i := range 2000 {
		key := fmt.Sprintf("flag-%d-user-%d", i%7, i)
		if i%100 == 0 {
			key += string(make([]byte, 200+i%50))
		}
		if got, want := Bucket(key), featbitBucket(key); got != want {
			t.Fatalf("Bucket(%q) = %v, the documented algorithm %v", key, got, want)
		}
	}
}

// A three-way split of the default rule: each user gets the first variation
// whose range holds their bucket of "checkout" followed by their key.
func TestRolloutServesByBucket(t *testing.T) {
	f := evalFlag("checkout")
	f.Variations = []targeting.Variation{{ID: "a", Name: "A", Value: "a"}, {ID: "b", Name: "B", Value: "b"}, {ID: "c", Name: "C", Value: "c"}}
	f.Fallthrough.Variations = []targeting.RolloutVariation{
		{ID: "a", Rollout: []float64{0, 0.35}}, {ID: "b", Rollout: []float64{0.35, 0.6}}, {ID: "c", Rollout: []float64{0.6, 1}}}
	p := Prepare(&f)
	tests := []struct{ user, want string }{
		{"u1", "c"},  // 0.7776
		{"u2", "c"},  // 0.6227
		{"u3", "b"},  // 0.5540
		{"u4", "a"},  // 0.3122
		{"u5", "b"},  // 0.3940
		{"u6", "b"},  // 0.4914
		{"ann", "a"}, // 0.1710
		{"bob", "c"}, // 0.6133
	}
	for _, tt := range tests {
		ev := p.Evaluate(user(tt.user), nil)
		if value(ev) != tt.want || !ev.Split || ev.Kind != MatchFallthrough {
			t.Errorf("user %s: got %s (split %v, %s), want %s split default", tt.user, value(ev), ev.Split, ev.Kind, tt.want)
		}
	}
	// Both ends of a range hold: u4's bucket is the end of a and the start
	// of b, and the first range wins.
	edge := 0.31222820561379194
	f.Fallthrough.Variations = []targeting.RolloutVariation{{ID: "a", Rollout: []float64{0, edge}}, {ID: "b", Rollout: []float64{edge, 1}}}
	if got := value(Evaluate(&f, user("u4"), nil)); got != "a" {
		t.Errorf("a bucket on the boundary: got %s, want a (the first range)", got)
	}
	// A 0% variation serves no one, and a split with one served variation is no split.
	f.Fallthrough.Variations = []targeting.RolloutVariation{{ID: "a", Rollout: []float64{0, 0}}, {ID: "b", Rollout: []float64{0, 1}}}
	if ev := Evaluate(&f, user("ann"), nil); value(ev) != "b" || ev.Split {
		t.Errorf("0%% a, 100%% b: got %s split %v, want b, no split", value(ev), ev.Split)
	}
	// A rollout no range of which holds the user (a malformed flag) serves nothing.
	f.Fallthrough.Variations = []targeting.RolloutVariation{{ID: "a", Rollout: []float64{0, 0.1}}}
	if ev := Evaluate(&f, user("u1"), nil); ev.Variation != nil {
		t.Errorf("no range holds the user: got %s, want none", value(ev))
	}
}

// A rule's dispatch key buckets by an attribute: everyone with the same
// value lands together, and a user without it buckets as "".
func TestRolloutByDispatchAttribute(t *testing.T) {
	f := evalFlag("pricing")
	team := "team"
	f.Rules = []targeting.FlagRule{{ID: "r", Name: "everyone", DispatchKey: &team,
		Conditions: []targeting.Condition{{Property: "keyId", Op: "NotEqual", Value: ""}},
		Variations: half()}}
	tests := []struct {
		user       EndUser
		want, disp string
	}{
		{user("u1", "team", "team-1"), "true", "pricingteam-1"}, // 0.1866
		{user("u2", "team", "team-1"), "true", "pricingteam-1"},
		{user("u3"), "false", "pricing"}, // 0.9086
	}
	for _, tt := range tests {
		if got := value(Evaluate(&f, tt.user, nil)); got != tt.want {
			t.Errorf("user %s: got %s, want %s", tt.user.KeyID, got, tt.want)
		}
		if got := DispatchKey(f.Key, &team, tt.user); got != tt.disp {
			t.Errorf("DispatchKey for %s = %q, want %q", tt.user.KeyID, got, tt.disp)
		}
	}
	blank := "  "
	if got := DispatchKey("pricing", &blank, user("u9")); got != "pricingu9" {
		t.Errorf("a blank dispatch attribute: %q, want the user's key (pricingu9)", got)
	}
	if got := DispatchKey("pricing", nil, user("u9")); got != "pricingu9" {
		t.Errorf("no dispatch attribute: %q, want pricingu9", got)
	}
}

// Whether an evaluation counts in an experiment: the variation's
// exptRollout share of its own range, bucketed by "expt", the flag key and
// the user.
func TestRolloutExperimentShare(t *testing.T) {
	f := evalFlag("checkout")
	f.ExptIncludeAllTargets = false
	f.Fallthrough = targeting.Fallthrough{IncludedInExpt: true, Variations: []targeting.RolloutVariation{{ID: "t", Rollout: []float64{0, 1}, ExptRollout: 0.5}}}
	tests := []struct {
		user string
		want bool
	}{
		{"u1", false}, // expt bucket 0.8989
		{"u2", false}, // 0.5465
		{"u3", true},  // 0.1627
		{"u4", false}, // 0.6290
	}
	for _, tt := range tests {
		if got := Evaluate(&f, user(tt.user), nil).SendToExperiment; got != tt.want {
			t.Errorf("user %s: sent to experiment %v, want %v", tt.user, got, tt.want)
		}
	}
	// A share above the range's width is everyone in the range.
	f.Fallthrough.Variations[0].ExptRollout = 1
	if !Evaluate(&f, user("u1"), nil).SendToExperiment {
		t.Error("exptRollout 1: u1 not sent")
	}
	// No share: nobody.
	f.Fallthrough.Variations[0].ExptRollout = 0
	if Evaluate(&f, user("u3"), nil).SendToExperiment {
		t.Error("exptRollout 0: u3 sent")
	}
}

// FeatBit's operators as a rule sees them, on an end user's attributes.
func TestEvaluateOperatorsOnUsers(t *testing.T) {
	tests := []struct {
		op, value, attribute string
		want                 bool
	}{
		{"IsOneOf", `["fr","de"]`, "de", true},
		{"IsOneOf", `["fr","de"]`, "DE", false}, // ordinal
		{"NotOneOf", `["fr","de"]`, "us", true},
		{"NotOneOf", `["fr","de"]`, "fr", false},
		{"StartsWith", "beta-", "beta-42", true},
		{"StartsWith", "beta-", "Beta-42", false},
		{"EndsWith", "@example.com", "ann@example.com", true},
		{"EndsWith", "@example.com", "ann@example.org", false},
		{"Contains", "", "anything", true},
		{"Contains", "pro", "enterprise", false},
		{"NotContain", "pro", "enterprise", true},
		{"NotContain", "ter", "enterprise", false},
		{"MatchRegex", `^v\d+\.\d+$`, "v2.13", true},
		{"MatchRegex", `^v\d+\.\d+$`, "v2.13-rc", false},
		{"NotMatchRegex", `rc`, "v2.13-rc", false},
		{"NotMatchRegex", `rc`, "v2.13", true},
		{"BiggerThan", "18", "18.5", true},
		{"BiggerThan", "18", "18", false},
		{"BiggerEqualThan", "18", "18", true},
		{"BiggerEqualThan", "18", "17.999", false},
		{"LessThan", "1e3", "999", true},
		{"LessThan", "1e3", "1000", false},
		{"LessEqualThan", "-5", "-5.0", true},
		{"LessEqualThan", "-5", "-4", false},
		{"LessThan", "10", "ten", false},
		{"IsTrue", "IsTrue", "True", true},
		{"IsTrue", "IsTrue", "1", false},
		{"IsFalse", "IsFalse", "FALSE", true},
		{"IsFalse", "IsFalse", "true", false},
		{"Equal", "gold", "gold", true},
		{"NotEqual", "gold", "Gold", true},
	}
	for _, tt := range tests {
		f := evalFlag("ops")
		f.Rules = []targeting.FlagRule{rule("r", targeting.Condition{Property: "attr", Op: tt.op, Value: tt.value})}
		ev := Evaluate(&f, user("u1", "attr", tt.attribute), nil)
		if got := ev.Kind == MatchRule; got != tt.want {
			t.Errorf("%s %q on %q: matched %v, want %v", tt.op, tt.value, tt.attribute, got, tt.want)
		}
	}
}

// Segments: excluded beats included, included beats rules, a rule needs all
// its conditions; a flag's segment condition holds when any listed segment
// holds, and unknown segment ids are skipped.
func TestSegments(t *testing.T) {
	gold := targeting.Segment{ID: uuid.MustParse("11111111-1111-1111-1111-111111111111"), Included: []string{"vip", "banned"}, Excluded: []string{"banned"},
		Rules: []targeting.SegmentRule{{ID: "r", Conditions: []targeting.Condition{
			{Property: "plan", Op: "Equal", Value: "gold"}, {Property: "country", Op: "IsOneOf", Value: `["fr"]`}}}}}
	beta := targeting.Segment{ID: uuid.MustParse("22222222-2222-2222-2222-222222222222"), Included: []string{"tester"}, IsArchived: true}
	tests := []struct {
		u    EndUser
		want bool
	}{
		{user("vip"), true},
		{user("banned", "plan", "gold", "country", "fr"), false},
		{user("u1", "plan", "gold", "country", "fr"), true},
		{user("u1", "plan", "gold", "country", "de"), false},
		{user("u1"), false},
	}
	for _, tt := range tests {
		if got := InSegment(&gold, tt.u); got != tt.want {
			t.Errorf("InSegment(gold, %+v) = %v, want %v", tt.u, got, tt.want)
		}
	}
	segs := SegmentMap([]targeting.Segment{gold, beta})
	f := evalFlag("seg")
	unknown := "33333333-3333-3333-3333-333333333333"
	f.Rules = []targeting.FlagRule{rule("in", targeting.Condition{Property: targeting.SegmentIn, Value: `["` + unknown + `","` + gold.ID.String() + `","` + beta.ID.String() + `"]`})}
	flagTests := []struct {
		u    EndUser
		want string
	}{
		{user("vip"), MatchRule},
		{user("tester"), MatchRule}, // archived segments still match, as in FeatBit
		{user("nobody"), MatchFallthrough},
	}
	for _, tt := range flagTests {
		if got := Evaluate(&f, tt.u, segs).Kind; got != tt.want {
			t.Errorf("user %s: %s, want %s", tt.u.KeyID, got, tt.want)
		}
	}
	// Without a segment lookup, or with a value that is not a list, nobody is in a segment.
	if got := Evaluate(&f, user("vip"), nil).Kind; got != MatchFallthrough {
		t.Errorf("no lookup: %s, want default", got)
	}
	f.Rules[0].Conditions[0].Value = "not json"
	if got := Evaluate(&f, user("vip"), segs).Kind; got != MatchFallthrough {
		t.Errorf("value not a list: %s, want default", got)
	}
	f.Rules[0].Conditions[0] = targeting.Condition{Property: targeting.SegmentNotIn, Value: `["` + gold.ID.String() + `"]`}
	for u, want := range map[string]string{"vip": MatchFallthrough, "banned": MatchRule} {
		if got := Evaluate(&f, user(u), segs).Kind; got != want {
			t.Errorf("not in gold, user %s: %s, want %s", u, got, want)
		}
	}
}
