package describe

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/targeting"
)

func TestRuleLabel(t *testing.T) {
	tests := []struct {
		name string
		i    int
		want string
	}{
		{"Beta users", 0, "Beta users"},
		{"", 0, "Rule 1"},
		{"", 4, "Rule 5"},
	}
	for _, tt := range tests {
		if got := RuleLabel(tt.name, tt.i); got != tt.want {
			t.Errorf("RuleLabel(%q, %d) = %q, want %q", tt.name, tt.i, got, tt.want)
		}
	}
}

func TestServeAndRollout(t *testing.T) {
	unnamed := targeting.Variation{ID: "v-x", Value: "blue"}
	vs := []targeting.Variation{on, off, unnamed}
	third := []targeting.RolloutVariation{{ID: "v-on", Rollout: []float64{0, 1.0 / 3}}, {ID: "v-off", Rollout: []float64{1.0 / 3, 2.0 / 3}}, {ID: "v-x", Rollout: []float64{2.0 / 3, 1}}}
	tests := []struct {
		name string
		rv   []targeting.RolloutVariation
		by   *string
		want string
	}{
		{"everyone one variation", all("v-on"), nil, "serve True"},
		{"an unnamed variation by its value", all("v-x"), nil, "serve blue"},
		{"a removed variation", all("v-gone"), nil, "serve a removed variation"},
		{"a split by user key", split(0.3), nil, "serve 30% True, 70% False by user key"},
		{"a split by an attribute", split(0.25), ptr("email"), "serve 25% True, 75% False by email"},
		{"an empty attribute is the user key", split(0.5), ptr(""), "serve 50% True, 50% False by user key"},
		{"thirds, two decimals", third, nil, "serve 33.33% True, 33.33% False, 33.33% blue by user key"},
		{"a 0% variation left out", []targeting.RolloutVariation{{ID: "v-on", Rollout: []float64{0, 0}}, {ID: "v-off", Rollout: []float64{0, 0.4}}, {ID: "v-x", Rollout: []float64{0.4, 1}}}, nil, "serve 40% False, 60% blue by user key"},
	}
	for _, tt := range tests {
		if got := Serve(tt.rv, tt.by, vs); got != tt.want {
			t.Errorf("%s: Serve = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Rollout(split(0.1), vs); got != "10% True, 90% False" {
		t.Errorf("Rollout = %q, want \"10%% True, 90%% False\"", got)
	}
}

func TestRuleSentences(t *testing.T) {
	vs := []targeting.Variation{on, off}
	country := targeting.Condition{Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`}
	beta := targeting.Condition{Property: targeting.SegmentIn, Value: `["seg-beta","seg-gone"]`}
	tests := []struct {
		got, want string
	}{
		{FlagRule(targeting.FlagRule{Conditions: []targeting.Condition{country}, Variations: all("v-on")}, vs, segmentNames), "If country is one of NL, DE, serve True"},
		{FlagRule(targeting.FlagRule{Conditions: []targeting.Condition{country, beta}, Variations: split(0.5), DispatchKey: ptr("team")}, vs, segmentNames),
			"If country is one of NL, DE and user is in segment Beta testers or a deleted segment, serve 50% True, 50% False by team"},
		{FlagRule(targeting.FlagRule{Variations: all("v-off")}, vs, nil), "For everyone, serve False"},
		{SegmentRule(targeting.SegmentRule{Conditions: []targeting.Condition{country}}, nil), "Users where country is one of NL, DE"},
		{SegmentRule(targeting.SegmentRule{}, nil), "Every user"},
		{Conditions([]targeting.Condition{{Property: "plan", Op: "Equal", Value: "gold"}, {Property: "age", Op: "BiggerEqualThan", Value: "18"}}, nil), "plan is gold and age is at least 18"},
		{Condition(targeting.Condition{Property: "x", Op: "Near", Value: "y"}, nil), "x Near y"},
		{Condition(targeting.Condition{Property: "x", Op: "IsOneOf", Value: "not json"}, nil), "x is one of not json"},
		{Condition(targeting.Condition{Property: targeting.SegmentNotIn, Value: `["seg-beta"]`}, segmentNames), "user is not in segment Beta testers"},
		{Condition(targeting.Condition{Property: targeting.SegmentIn, Value: `[]`}, segmentNames), "user is in segment (none)"},
		{Condition(targeting.Condition{Property: targeting.SegmentIn, Value: `["a","b","seg-beta"]`}, nil), "user is in segment a deleted segment, a deleted segment or a deleted segment"},
		{Condition(targeting.Condition{Property: "k", Op: "IsOneOf", Value: `["1","2","3","4","5","6","7","8","9","10","11","12"]`}, nil), "k is one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more"},
		{VariationName("v-off", []targeting.Variation{on, off}), "False"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Explain says why a user got what they got, in the order evaluation decides.
func TestExplain(t *testing.T) {
	f := targeting.Flag{Key: "checkout", IsEnabled: true, DisabledVariationID: "v-off", Variations: []targeting.Variation{on, off},
		TargetUsers: []targeting.TargetUser{{KeyIDs: []string{"ann"}, VariationID: "v-off"}},
		Rules:       []targeting.FlagRule{{ID: "r1", Conditions: []targeting.Condition{{Property: "plan", Op: "Equal", Value: "gold"}}, Variations: all("v-off")}},
		Fallthrough: targeting.Fallthrough{Variations: []targeting.RolloutVariation{
			{ID: "v-on", Rollout: []float64{0, 0.35}}, {ID: "v-off", Rollout: []float64{0.35, 1}}}}}
	explain := func(f targeting.Flag, u eval.EndUser) string {
		return strings.Join(Explain(f, u, eval.Evaluate(&f, u, nil), nil), " | ")
	}
	off := f
	off.IsEnabled = false
	archived := f
	archived.IsArchived = true
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"archived", explain(archived, eval.EndUser{KeyID: "ann"}), "The flag is archived: SDKs no longer receive it."},
		{"off", explain(off, eval.EndUser{KeyID: "ann"}), "The flag is off, so every user gets the off variation."},
		{"targeted", explain(f, eval.EndUser{KeyID: "ann"}), "ann is an individual target of False."},
		{"a rule", explain(f, eval.EndUser{KeyID: "bob", CustomizedProperties: []eval.UserProperty{{Name: "plan", Value: "gold"}}}),
			"Not an individual target; the first rule that matches is Rule 1: If plan is gold, serve False."},
		// Bucket of "checkoutu4" is 0.31222820561379194 (FeatBit's MD5 dispatch, computed outside Go).
		{"a split", explain(f, eval.EndUser{KeyID: "u4"}),
			"No individual target or rule matches, so the default rule applies: Otherwise serve 35% True, 65% False by user key. | " +
				"Split by user key: the user's bucket is 31.22%, in 0%–35%, which serves True."},
		// Bucket of "checkoutu1" is 0.7776368111371994.
		{"the other side of the split", explain(f, eval.EndUser{KeyID: "u1"}),
			"No individual target or rule matches, so the default rule applies: Otherwise serve 35% True, 65% False by user key. | " +
				"Split by user key: the user's bucket is 77.76%, in 35%–100%, which serves False."},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestBookkeepingAndCompact(t *testing.T) {
	for _, m := range []string{"id", "revision", "createdAt", "updatedAt", "creatorId", "updatorId", "envId", "workspaceId", "organizationId", "projectId", "isEnvironmentSpecific"} {
		if !Bookkeeping(m) {
			t.Errorf("Bookkeeping(%q) = false, want true", m)
		}
	}
	for _, m := range []string{"name", "rules", "isEnabled", "tags", "Id"} {
		if Bookkeeping(m) {
			t.Errorf("Bookkeeping(%q) = true, want false", m)
		}
	}
	tests := []struct{ in, want string }{
		{`{ "a" : [ 1, 2 ] }`, `{"a":[1,2]}`},
		{"\n\"x\"\n", `"x"`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(Compact(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("Compact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The segments a change names, each once, in the order met, for one lookup of their names.
func TestSegmentIDs(t *testing.T) {
	flag := func(ids ...string) json.RawMessage {
		b, _ := json.Marshal(targeting.Flag{Rules: []targeting.FlagRule{{Conditions: []targeting.Condition{
			{Property: "plan", Op: "Equal", Value: "gold"},
			{Property: targeting.SegmentIn, Value: `["` + strings.Join(ids, `","`) + `"]`}}}}})
		return b
	}
	segment := json.RawMessage(`{"rules":[{"conditions":[{"property":"User is not in segment","value":"[\"s9\"]"}]}]}`)
	tests := []struct {
		name    string
		refType string
		raws    []json.RawMessage
		want    []string
	}{
		{"a flag before and after", "FeatureFlag", []json.RawMessage{flag("s1", "s2"), flag("s2", "s3")}, []string{"s1", "s2", "s3"}},
		{"a creation", "FeatureFlag", []json.RawMessage{nil, flag("s1")}, []string{"s1"}},
		{"a segment's rules", "Segment", []json.RawMessage{segment}, []string{"s9"}},
		{"another type", "Project", []json.RawMessage{flag("s1")}, nil},
		{"not JSON", "FeatureFlag", []json.RawMessage{json.RawMessage("{")}, nil},
	}
	for _, tt := range tests {
		if got := SegmentIDs(tt.refType, tt.raws...); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	f := targeting.Flag{Rules: []targeting.FlagRule{
		{Conditions: []targeting.Condition{{Property: targeting.SegmentNotIn, Value: `["b","a"]`}}},
		{Conditions: []targeting.Condition{{Property: targeting.SegmentIn, Value: `["a","c"]`}}}}}
	if got := FlagSegmentIDs(f); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("FlagSegmentIDs = %v, want [b a c]", got)
	}
}

// The sentences of a flag's and a segment's simple changes, called directly.
func TestFlagAndSegmentChangeSentences(t *testing.T) {
	base := targeting.Flag{Name: "Checkout", Key: "checkout", Variations: []targeting.Variation{on, off}, DisabledVariationID: "v-off",
		Fallthrough: targeting.Fallthrough{Variations: all("v-on")}, ExptIncludeAllTargets: true}
	flagTests := []struct {
		name   string
		change func(f *targeting.Flag)
		want   []string
	}{
		{"nothing", func(f *targeting.Flag) {}, nil},
		{"archive and turn on", func(f *targeting.Flag) { f.IsArchived, f.IsEnabled = true, true }, []string{"Archived the flag", "Turned the flag on"}},
		{"describe", func(f *targeting.Flag) { f.Description = "why" }, []string{"Changed the description"}},
		{"variation type", func(f *targeting.Flag) { f.VariationType = "string" }, []string{"Changed the variation type  → string"}},
		{"off variation", func(f *targeting.Flag) { f.DisabledVariationID = "v-on" }, []string{"Off variation: False → True"}},
		{"experiments", func(f *targeting.Flag) { f.ExptIncludeAllTargets = false }, []string{"Experiments no longer include all targeted users"}},
		{"key", func(f *targeting.Flag) { f.Key = "pay" }, []string{"Changed the key checkout → pay"}},
	}
	for _, tt := range flagTests {
		before, after := base, base.Clone()
		tt.change(&after)
		if got := FlagChange(&before, &after, nil); !slices.Equal(got, tt.want) {
			t.Errorf("flag %s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := FlagChange(nil, &base, nil); !slices.Equal(got, []string{"Created the flag Checkout"}) {
		t.Errorf("creation: %q", got)
	}
	if got := FlagChange(&base, nil, nil); !slices.Equal(got, []string{"Deleted the flag Checkout"}) {
		t.Errorf("deletion: %q", got)
	}
	if got := FlagChange(nil, nil, nil); got != nil {
		t.Errorf("neither: %q", got)
	}
	sg := targeting.Segment{Name: "Beta", Description: "testers", Scopes: []string{"organization/acme:project/web:env/prod"}}
	segTests := []struct {
		name   string
		change func(before, after *targeting.Segment)
		want   []string
	}{
		{"nothing", func(b, a *targeting.Segment) {}, nil},
		{"restore", func(b, a *targeting.Segment) { b.IsArchived = true }, []string{"Restored the segment"}},
		{"rename and clear description", func(b, a *targeting.Segment) { a.Name, a.Description = "Gamma", "" }, []string{"Renamed Beta → Gamma", "Removed the description"}},
		{"scopes", func(b, a *targeting.Segment) { a.Scopes = []string{"organization/acme:project/*"} }, []string{"Changed where the segment can be used: organization/acme:project/*"}},
	}
	for _, tt := range segTests {
		before, after := sg.Clone(), sg.Clone()
		tt.change(&before, &after)
		if got := SegmentChange(&before, &after, nil); !slices.Equal(got, tt.want) {
			t.Errorf("segment %s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := SegmentChange(nil, &sg, nil); !slices.Equal(got, []string{"Created the segment Beta"}) {
		t.Errorf("segment creation: %q", got)
	}
	if got := SegmentChange(&sg, nil, nil); !slices.Equal(got, []string{"Deleted the segment Beta"}) {
		t.Errorf("segment deletion: %q", got)
	}
}
