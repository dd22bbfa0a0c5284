package targeting

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// valid is a string flag that passes every check: three variations, a
// target, a rule on an attribute and a segment, a 30/70 default rule.
func valid() Flag {
	key := "country"
	return Flag{
		Key: "checkout", VariationType: VariationString, DisabledVariationID: "c",
		Variations:  []Variation{{ID: "a", Name: "A", Value: "red"}, {ID: "b", Name: "B", Value: "green"}, {ID: "c", Name: "C", Value: "off"}},
		TargetUsers: []TargetUser{{KeyIDs: []string{"u1", "u2"}, VariationID: "a"}},
		Rules: []FlagRule{{ID: "r1", Name: "EU", DispatchKey: &key,
			Conditions: []Condition{{ID: "c1", Property: "country", Op: "IsOneOf", Value: `["fr","de"]`},
				{ID: "c2", Property: SegmentIn, Value: `["11111111-1111-1111-1111-111111111111"]`}},
			Variations: []RolloutVariation{{ID: "b", Rollout: []float64{0, 1}, ExptRollout: 1}}}},
		Fallthrough: Fallthrough{IncludedInExpt: true, Variations: []RolloutVariation{
			{ID: "a", Rollout: []float64{0, 0.3}, ExptRollout: 1}, {ID: "b", Rollout: []float64{0.3, 1}, ExptRollout: 1}}},
		Tags: []string{"team-a", "beta"},
	}
}

// problem is what a test expects of the first problem found.
type problem struct{ field, path, message string }

func first(ps []Problem) problem {
	if len(ps) == 0 {
		return problem{}
	}
	return problem{ps[0].Field, ps[0].Path, ps[0].Message}
}

func TestCheckFlag(t *testing.T) {
	long := strings.Repeat("x", 129)
	tests := []struct {
		name   string
		change func(f *Flag)
		want   problem
	}{
		{"valid", func(f *Flag) {}, problem{}},
		{"no variation type", func(f *Flag) { f.VariationType = "" }, problem{"variationType", "variationType", ""}},
		{"unknown variation type", func(f *Flag) { f.VariationType = "date" }, problem{"variationType", "variationType", ""}},
		{"no variations", func(f *Flag) { f.Variations = nil }, problem{"variations", "variations", "a flag needs at least one variation"}},
		{"101 variations", func(f *Flag) {
			f.Variations = make([]Variation, 101)
		}, problem{"variations", "variations", "at most 100 variations"}},
		{"variation without id", func(f *Flag) { f.Variations[1].ID = "" }, problem{"variations", "variations[1].id", "a variation needs an id of at most 128 characters"}},
		{"variation id of 129 characters", func(f *Flag) { f.Variations[1].ID = long }, problem{"variations", "variations[1].id", "a variation needs an id of at most 128 characters"}},
		{"two variations with one id", func(f *Flag) { f.Variations[2].ID = "a" }, problem{"variations", "variations[2].id", "two variations have the id a"}},
		{"blank variation name", func(f *Flag) { f.Variations[0].Name = " " }, problem{"variations", "variations[0].name", "required"}},
		{"variation name of 129 characters", func(f *Flag) { f.Variations[0].Name = long }, problem{"variations", "variations[0].name", "at most 128 characters"}},
		{"blank string value", func(f *Flag) { f.Variations[0].Value = "  " }, problem{"variations", "variations[0].value", "required"}},
		{"value with NUL", func(f *Flag) { f.Variations[0].Value = "a\x00" }, problem{"variations", "variations[0].value", "too long or not text"}},
		{"boolean value other than true or false", func(f *Flag) {
			f.VariationType = VariationBoolean
			f.Variations = []Variation{{ID: "a", Name: "T", Value: "TRUE"}}
			f.DisabledVariationID = "a"
			f.Rules, f.TargetUsers = nil, nil
			f.Fallthrough.Variations = []RolloutVariation{{ID: "a", Rollout: []float64{0, 1}}}
		}, problem{"variations", "variations[0].value", "must be true or false"}},
		{"number that is not one", func(f *Flag) { f.VariationType = VariationNumber; f.Variations[2].Value = "12abc" }, problem{"variations", "variations[0].value", "not a number"}},
		{"number that is infinite", func(f *Flag) {
			f.VariationType = VariationNumber
			f.Variations[0].Value, f.Variations[1].Value, f.Variations[2].Value = "1", " 2.5e3 ", "Inf"
		}, problem{"variations", "variations[2].value", "not a number"}},
		{"json that does not parse", func(f *Flag) {
			f.VariationType = VariationJSON
			f.Variations[0].Value, f.Variations[1].Value, f.Variations[2].Value = `{}`, `[1,2]`, `{"a":}`
		}, problem{"variations", "variations[2].value", "not valid JSON: '}' looking for beginning of value at character 6"}},
		{"off variation unknown", func(f *Flag) { f.DisabledVariationID = "z" }, problem{"disabledVariationId", "disabledVariationId", ""}},
		{"tag with a colon", func(f *Flag) { f.Tags = []string{"a:b"} }, problem{"tags", "tags", ""}},
		{"tag with a semicolon", func(f *Flag) { f.Tags = []string{"a;b"} }, problem{"tags", "tags", ""}},
		{"tag with a comma", func(f *Flag) { f.Tags = []string{"a,b"} }, problem{"tags", "tags", ""}},
		{"tag with spaces around", func(f *Flag) { f.Tags = []string{" a"} }, problem{"tags", "tags", ""}},
		{"empty tag", func(f *Flag) { f.Tags = []string{""} }, problem{"tags", "tags", ""}},
		{"tag twice", func(f *Flag) { f.Tags = []string{"a", "a"} }, problem{"tags", "tags", ""}},
		{"tag of 65 characters", func(f *Flag) { f.Tags = []string{strings.Repeat("t", 65)} }, problem{"tags", "tags", ""}},
		{"51 tags", func(f *Flag) {
			f.Tags = nil
			for i := range 51 {
				f.Tags = append(f.Tags, "t"+strings.Repeat("x", i))
			}
		}, problem{"tags", "tags", ""}},
		{"target of an unknown variation", func(f *Flag) { f.TargetUsers[0].VariationID = "z" }, problem{"targetUsers", "targetUsers[0].variationId", "not one of the flag's variations"}},
		{"empty user key", func(f *Flag) { f.TargetUsers[0].KeyIDs[1] = "" }, problem{"targetUsers", "targetUsers[0].keyIds[1]", "an empty user key"}},
		{"user key of 513 characters", func(f *Flag) { f.TargetUsers[0].KeyIDs[0] = strings.Repeat("k", 513) }, problem{"targetUsers", "targetUsers[0].keyIds[0]", "a user key of at most 512 characters"}},
		{"user targeted twice", func(f *Flag) {
			f.TargetUsers = append(f.TargetUsers, TargetUser{KeyIDs: []string{"u2"}, VariationID: "b"})
		}, problem{"targetUsers", "targetUsers[1].keyIds[0]", "u2 is targeted twice; a user may be targeted once"}},
		{"default rule serves nothing", func(f *Flag) { f.Fallthrough.Variations = nil }, problem{"fallthrough", "fallthrough.variations", "choose what the rule serves"}},
		{"default rule leaves a gap", func(f *Flag) { f.Fallthrough.Variations[1].Rollout = []float64{0.4, 1} }, problem{"fallthrough", "fallthrough.variations", "the percentages must add up to 100% without overlapping"}},
		{"default rule overlaps", func(f *Flag) { f.Fallthrough.Variations[1].Rollout = []float64{0.2, 1} }, problem{"fallthrough", "fallthrough.variations", "the percentages must add up to 100% without overlapping"}},
		{"default rule short of 100%", func(f *Flag) { f.Fallthrough.Variations[1].Rollout = []float64{0.3, 0.99} }, problem{"fallthrough", "fallthrough.variations", "the percentages must add up to 100% without overlapping"}},
		{"default rule range reversed", func(f *Flag) { f.Fallthrough.Variations[0].Rollout = []float64{0.3, 0} }, problem{"fallthrough", "fallthrough.variations", "a rollout range needs a start and an end between 0 and 1"}},
		{"default rule range past 1", func(f *Flag) { f.Fallthrough.Variations[1].Rollout = []float64{0.3, 1.5} }, problem{"fallthrough", "fallthrough.variations", "a rollout range needs a start and an end between 0 and 1"}},
		{"default rule range of one number", func(f *Flag) { f.Fallthrough.Variations[1].Rollout = []float64{0.3} }, problem{"fallthrough", "fallthrough.variations", "a rollout range needs a start and an end between 0 and 1"}},
		{"experiment share over 1", func(f *Flag) { f.Fallthrough.Variations[1].ExptRollout = 1.1 }, problem{"fallthrough", "fallthrough.variations", "a rollout range needs a start and an end between 0 and 1"}},
		{"default rule serves an unknown variation", func(f *Flag) { f.Fallthrough.Variations[0].ID = "z" }, problem{"fallthrough", "fallthrough.variations", "serves z, which is not one of the flag's variations"}},
		{"default rule dispatch key of 129 characters", func(f *Flag) { f.Fallthrough.DispatchKey = &long }, problem{"fallthrough", "fallthrough.dispatchKey", "at most 128 characters"}},
		{"ranges in any order, a 0% variation", func(f *Flag) {
			f.Fallthrough.Variations = []RolloutVariation{{ID: "b", Rollout: []float64{0.5, 1}}, {ID: "c", Rollout: []float64{0.5, 0.5}}, {ID: "a", Rollout: []float64{0, 0.5}}}
		}, problem{}},
		{"rule without id", func(f *Flag) { f.Rules[0].ID = "" }, problem{"rules", "rules[0].id", "each rule needs an id of its own"}},
		{"two rules with one id", func(f *Flag) { f.Rules = append(f.Rules, f.Rules[0]) }, problem{"rules", "rules[1].id", "each rule needs an id of its own"}},
		{"rule name of 129 characters", func(f *Flag) { f.Rules[0].Name = long }, problem{"rules", "rules[0].name", "at most 128 characters"}},
		{"rule without conditions", func(f *Flag) { f.Rules[0].Conditions = nil }, problem{"rules", "rules[0].conditions", "a rule needs at least one condition"}},
		{"101 conditions", func(f *Flag) {
			f.Rules[0].Conditions = slices.Repeat([]Condition{{Property: "p", Op: "Equal", Value: "v"}}, 101)
		}, problem{"rules", "rules[0].conditions", "at most 100 conditions"}},
		{"condition without property", func(f *Flag) { f.Rules[0].Conditions[0].Property = " " }, problem{"rules", "rules[0].conditions[0].property", "required"}},
		{"unknown operator", func(f *Flag) { f.Rules[0].Conditions[0].Op = "Near" }, problem{"rules", "rules[0].conditions[0].value", "unknown operator Near"}},
		{"number operator on text", func(f *Flag) {
			f.Rules[0].Conditions[0] = Condition{Property: "age", Op: "BiggerThan", Value: "ten"}
		}, problem{"rules", "rules[0].conditions[0].value", "not a number"}},
		{"regular expression that does not compile", func(f *Flag) {
			f.Rules[0].Conditions[0] = Condition{Property: "email", Op: "MatchRegex", Value: "a("}
		}, problem{"rules", "rules[0].conditions[0].value", "not a regular expression: missing closing ): `a(`"}},
		{"one-of value that is not a list", func(f *Flag) { f.Rules[0].Conditions[0].Value = "fr" }, problem{"rules", "rules[0].conditions[0].value", "not a list of values"}},
		{"one-of an empty list", func(f *Flag) { f.Rules[0].Conditions[0].Value = "[]" }, problem{"rules", "rules[0].conditions[0].value", "give at least one value"}},
		{"segment condition naming none", func(f *Flag) { f.Rules[0].Conditions[1].Value = "[]" }, problem{"rules", "rules[0].conditions[1].value", "choose at least one segment"}},
		{"segment condition naming a non-id", func(f *Flag) { f.Rules[0].Conditions[1].Value = `["beta"]` }, problem{"rules", "rules[0].conditions[1].value", "not a segment id: beta"}},
		{"rule dispatch key of 129 characters", func(f *Flag) { f.Rules[0].DispatchKey = &long }, problem{"rules", "rules[0].dispatchKey", "at most 128 characters"}},
		{"rule serving an unknown variation", func(f *Flag) { f.Rules[0].Variations[0].ID = "z" }, problem{"rules", "rules[0].variations", "serves z, which is not one of the flag's variations"}},
		{"every operator of FeatBit's", func(f *Flag) {
			f.Rules[0].Conditions = []Condition{
				{Property: "n", Op: "LessThan", Value: "1"}, {Property: "n", Op: "BiggerThan", Value: "-1.5"},
				{Property: "n", Op: "LessEqualThan", Value: "1e3"}, {Property: "n", Op: "BiggerEqualThan", Value: " 2 "},
				{Property: "s", Op: "Equal", Value: ""}, {Property: "s", Op: "NotEqual", Value: "x"},
				{Property: "s", Op: "Contains", Value: "x"}, {Property: "s", Op: "NotContain", Value: "x"},
				{Property: "s", Op: "StartsWith", Value: "x"}, {Property: "s", Op: "EndsWith", Value: "x"},
				{Property: "s", Op: "MatchRegex", Value: `^\d+$`}, {Property: "s", Op: "NotMatchRegex", Value: "x"},
				{Property: "s", Op: "IsOneOf", Value: `["x"]`}, {Property: "s", Op: "NotOneOf", Value: `["x","y"]`},
				{Property: "b", Op: "IsTrue", Value: "IsTrue"}, {Property: "b", Op: "IsFalse", Value: "IsFalse"},
				{Property: SegmentNotIn, Value: `["22222222-2222-2222-2222-222222222222"]`},
			}
		}, problem{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := valid()
			tt.change(&f)
			ps, _ := CheckFlag(&f)
			if got := first(ps); got != tt.want {
				t.Errorf("got %+v, want %+v (all: %+v)", got, tt.want, ps)
			}
			for _, p := range ps {
				if p.Problem != "invalid" && p.Problem != "required" {
					t.Errorf("problem %q, want invalid or required", p.Problem)
				}
			}
		})
	}
}

// A flag's problems come in the order its fields are checked, one per field.
func TestCheckFlagReportsEveryField(t *testing.T) {
	f := valid()
	f.VariationType = ""
	f.DisabledVariationID = "z"
	f.Tags = []string{"a:b"}
	f.TargetUsers[0].VariationID = "z"
	f.Fallthrough.Variations = nil
	f.Rules[0].ID = ""
	ps, _ := CheckFlag(&f)
	var fields []string
	for _, p := range ps {
		fields = append(fields, p.Field+"_is_"+p.Problem)
	}
	want := []string{"variationType_is_required", "disabledVariationId_is_invalid", "tags_is_invalid", "targetUsers_is_invalid", "fallthrough_is_invalid", "rules_is_invalid"}
	if !slices.Equal(fields, want) {
		t.Errorf("got %v, want %v", fields, want)
	}
}

// The segments a flag's rules name, each once, in id order.
func TestCheckFlagSegmentReferences(t *testing.T) {
	f := valid()
	a, b := "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000"
	f.Rules = append(f.Rules, FlagRule{ID: "r2", Conditions: []Condition{{Property: SegmentNotIn, Value: `["` + b + `","` + a + `"]`}},
		Variations: []RolloutVariation{{ID: "a", Rollout: []float64{0, 1}}}})
	f.Rules[0].Conditions[1].Value = `["` + b + `"]`
	ps, refs := CheckFlag(&f)
	if len(ps) != 0 {
		t.Fatalf("problems %+v", ps)
	}
	if want := []uuid.UUID{uuid.MustParse(a), uuid.MustParse(b)}; !slices.Equal(refs, want) {
		t.Errorf("refs %v, want %v", refs, want)
	}
}

func TestCheckSegment(t *testing.T) {
	ok := func() Segment {
		return Segment{Included: []string{"u1"}, Excluded: []string{"u2"}, Tags: []string{"t"},
			Rules: []SegmentRule{{ID: "r1", Name: "gold", Conditions: []Condition{{Property: "plan", Op: "Equal", Value: "gold"}}}}}
	}
	tests := []struct {
		name   string
		change func(sg *Segment)
		want   problem
	}{
		{"valid", func(sg *Segment) {}, problem{}},
		{"no rules, no users", func(sg *Segment) { *sg = Segment{} }, problem{}},
		{"empty included key", func(sg *Segment) { sg.Included = []string{""} }, problem{"included", "included", ""}},
		{"excluded key of 513 characters", func(sg *Segment) { sg.Excluded = []string{strings.Repeat("k", 513)} }, problem{"excluded", "excluded", ""}},
		{"a rule naming a segment", func(sg *Segment) {
			sg.Rules[0].Conditions[0] = Condition{Property: SegmentIn, Value: `["11111111-1111-1111-1111-111111111111"]`}
		}, problem{"rules", "rules[0].conditions[0].property", "a segment's rules cannot name segments"}},
		{"two rules with one id", func(sg *Segment) { sg.Rules = append(sg.Rules, sg.Rules[0]) }, problem{"rules", "rules[1].id", "each rule needs an id of its own"}},
		{"rule without conditions", func(sg *Segment) { sg.Rules[0].Conditions = nil }, problem{"rules", "rules[0].conditions", "a rule needs at least one condition"}},
		{"bad regular expression", func(sg *Segment) {
			sg.Rules[0].Conditions[0].Op, sg.Rules[0].Conditions[0].Value = "NotMatchRegex", "["
		}, problem{"rules", "rules[0].conditions[0].value", "not a regular expression: missing closing ]: `[`"}},
		{"tag with a comma", func(sg *Segment) { sg.Tags = []string{"a,b"} }, problem{"tags", "tags", ""}},
	}
	for _, tt := range tests {
		sg := ok()
		tt.change(&sg)
		if got := first(CheckSegment(&sg)); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestStorable(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want bool
	}{
		{"", 0, true},
		{"abc", 3, true},
		{"abcd", 3, false},
		{"ééé", 3, true}, // runes, not bytes
		{"a\x00", 5, false},
		{"a\xff", 5, false},
	}
	for _, tt := range tests {
		if got := Storable(tt.s, tt.max); got != tt.want {
			t.Errorf("Storable(%q, %d) = %v, want %v", tt.s, tt.max, got, tt.want)
		}
	}
}

// The sixteen operators of FeatBit, in the order an editor lists them.
func TestOperators(t *testing.T) {
	want := []string{"LessThan", "BiggerThan", "LessEqualThan", "BiggerEqualThan", "Equal", "NotEqual", "Contains", "NotContain",
		"StartsWith", "EndsWith", "MatchRegex", "NotMatchRegex", "IsOneOf", "NotOneOf", "IsTrue", "IsFalse"}
	got := Operators()
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got[0] = "changed"
	if Operators()[0] != "LessThan" {
		t.Error("changing the answer changed the operators")
	}
}

// What the flag list shows a flag serves: the values its targets, its
// non-empty rule ranges and its default rule hand out, and its off value.
func TestServes(t *testing.T) {
	f := valid()
	if got := f.Serves(); !slices.Equal(got.EnabledVariations, []string{"red", "green"}) || got.DisabledVariation != "off" {
		t.Errorf("got %+v, want [red green] and off", got)
	}
	f.TargetUsers = []TargetUser{{KeyIDs: nil, VariationID: "c"}}                                                           // a target without users serves nothing
	f.Fallthrough.Variations = []RolloutVariation{{ID: "a", Rollout: []float64{0, 0}}, {ID: "c", Rollout: []float64{0, 1}}} // a 0% range serves nothing
	f.Rules = nil
	if got := f.Serves(); !slices.Equal(got.EnabledVariations, []string{"off"}) {
		t.Errorf("got %v, want [off]", got.EnabledVariations)
	}
	if got := (Flag{}).Serves(); got.EnabledVariations == nil || len(got.EnabledVariations) != 0 || got.DisabledVariation != "" {
		t.Errorf("an empty flag serves %#v, want an empty list", got)
	}
}

func TestVariationAndTargeting(t *testing.T) {
	f := valid()
	if v := f.Variation("b"); v == nil || v.Value != "green" {
		t.Errorf("Variation(b) = %+v, want green", v)
	}
	if v := f.Variation("z"); v != nil {
		t.Errorf("Variation(z) = %+v, want nil", v)
	}
	v := f.Variation("a")
	v.Value = "changed"
	if f.Variations[0].Value != "red" {
		t.Error("Variation returns the flag's own variation, not a copy")
	}
	f.ExptIncludeAllTargets = false
	tg := f.Targeting()
	if tg.ExptIncludeAllTargets == nil || *tg.ExptIncludeAllTargets || len(tg.Rules) != 1 || len(tg.TargetUsers) != 1 || len(tg.Fallthrough.Variations) != 2 {
		t.Errorf("Targeting = %+v", tg)
	}
	tg.Rules[0].Conditions[0].Value = "changed"
	if f.Rules[0].Conditions[0].Value != `["fr","de"]` {
		t.Error("Targeting shares the flag's rules")
	}
}
