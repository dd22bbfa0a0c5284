package describe

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/sql/targeting"
)

var (
	on  = targeting.Variation{ID: "v-on", Name: "True", Value: "true"}
	off = targeting.Variation{ID: "v-off", Name: "False", Value: "false"}
)

func segmentNames(id string) (string, bool) {
	if id == "seg-beta" {
		return "Beta testers", true
	}
	return "", false
}

func all(id string) []targeting.RolloutVariation {
	return []targeting.RolloutVariation{{ID: id, Rollout: []float64{0, 1}}}
}

func split(onShare float64) []targeting.RolloutVariation {
	return []targeting.RolloutVariation{{ID: "v-on", Rollout: []float64{0, onShare}}, {ID: "v-off", Rollout: []float64{onShare, 1}}}
}

func ptr(s string) *string { return &s }

func TestConditionSaysEveryOperator(t *testing.T) {
	cases := []struct {
		c    targeting.Condition
		want string
	}{
		{targeting.Condition{Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`}, "country is one of NL, DE"},
		{targeting.Condition{Property: "country", Op: "NotOneOf", Value: `["US"]`}, "country is not one of US"},
		{targeting.Condition{Property: "plan", Op: "Equal", Value: "pro"}, "plan is pro"},
		{targeting.Condition{Property: "plan", Op: "NotEqual", Value: "free"}, "plan is not free"},
		{targeting.Condition{Property: "email", Op: "Contains", Value: "@acme"}, "email contains @acme"},
		{targeting.Condition{Property: "email", Op: "NotContain", Value: "test"}, "email does not contain test"},
		{targeting.Condition{Property: "name", Op: "StartsWith", Value: "A"}, "name starts with A"},
		{targeting.Condition{Property: "email", Op: "EndsWith", Value: ".nl"}, "email ends with .nl"},
		{targeting.Condition{Property: "ua", Op: "MatchRegex", Value: "^Mozilla"}, "ua matches ^Mozilla"},
		{targeting.Condition{Property: "ua", Op: "NotMatchRegex", Value: "bot"}, "ua does not match bot"},
		{targeting.Condition{Property: "age", Op: "LessThan", Value: "18"}, "age is less than 18"},
		{targeting.Condition{Property: "age", Op: "BiggerThan", Value: "65"}, "age is greater than 65"},
		{targeting.Condition{Property: "age", Op: "LessEqualThan", Value: "18"}, "age is at most 18"},
		{targeting.Condition{Property: "age", Op: "BiggerEqualThan", Value: "21"}, "age is at least 21"},
		{targeting.Condition{Property: "beta", Op: "IsTrue"}, "beta is true"},
		{targeting.Condition{Property: "beta", Op: "IsFalse"}, "beta is false"},
		{targeting.Condition{Property: targeting.SegmentIn, Value: `["seg-beta"]`}, "user is in segment Beta testers"},
		{targeting.Condition{Property: targeting.SegmentNotIn, Value: `["seg-beta","seg-gone"]`},
			"user is not in segment Beta testers or a deleted segment"},
	}
	for _, c := range cases {
		if got := Condition(c.c, segmentNames); got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.c.Property, c.c.Op, got, c.want)
		}
	}
	// Every operator the targeting model offers has words of its own.
	for _, op := range targeting.Operators() {
		if _, ok := operatorWords[op]; !ok {
			t.Errorf("operator %s has no words", op)
		}
	}
}

func TestFlagSummary(t *testing.T) {
	f := targeting.Flag{IsEnabled: true, Variations: []targeting.Variation{on, off}, DisabledVariationID: "v-off",
		TargetUsers: []targeting.TargetUser{{VariationID: "v-on", KeyIDs: []string{"vip-1", "vip-2"}}, {VariationID: "v-off"}},
		Rules: []targeting.FlagRule{
			{ID: "r1", Name: "EU beta pro", Variations: all("v-on"), Conditions: []targeting.Condition{
				{Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`}, {Property: "plan", Op: "Equal", Value: "pro"},
				{Property: targeting.SegmentIn, Value: `["seg-beta"]`}}},
			{ID: "r2", Name: "Mobile rollout", Variations: split(0.3), DispatchKey: ptr("email"),
				Conditions: []targeting.Condition{{Property: "platform", Op: "Equal", Value: "mobile"}}},
		},
		Fallthrough: targeting.Fallthrough{Variations: all("v-off")}}
	s := FlagSummary(f, segmentNames)
	if s.Status != "On" || s.Off != "When off, serve False" {
		t.Errorf("status %q, off %q", s.Status, s.Off)
	}
	if len(s.Targets) != 1 || s.Targets[0].Sentence != "Serve True to vip-1, vip-2" {
		t.Errorf("targets %+v", s.Targets)
	}
	want := []string{"If country is one of NL, DE and plan is pro and user is in segment Beta testers, serve True",
		"If platform is mobile, serve 30% True, 70% False by email"}
	if len(s.Rules) != 2 || s.Rules[0].Sentence != want[0] || s.Rules[1].Sentence != want[1] || s.Rules[1].Name != "Mobile rollout" {
		t.Errorf("rules %+v", s.Rules)
	}
	if s.Default != "Otherwise serve False" {
		t.Errorf("default %q", s.Default)
	}
	f.Fallthrough = targeting.Fallthrough{Variations: []targeting.RolloutVariation{{ID: "v-on", Rollout: []float64{0, 1.0 / 3}},
		{ID: "v-off", Rollout: []float64{1.0 / 3, 1}}}}
	if got := FlagSummary(f, nil).Default; got != "Otherwise serve 33.33% True, 66.67% False by user key" {
		t.Errorf("thirds: %q", got)
	}
	f.Fallthrough = targeting.Fallthrough{Variations: []targeting.RolloutVariation{{ID: "v-on", Rollout: targeting.RolloutRange(0, 1234)},
		{ID: "v-off", Rollout: targeting.RolloutRange(1234, targeting.WholeRollout-1234)}}}
	if got := FlagSummary(f, nil).Default; got != "Otherwise serve 12.34% True, 87.66% False by user key" {
		t.Errorf("hundredths: %q", got)
	}
	many := make([]string, 12)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	f.TargetUsers = []targeting.TargetUser{{VariationID: "v-on", KeyIDs: many}}
	if got := FlagSummary(f, nil).Targets[0].Sentence; got != "Serve True to a, b, c, d, e, f, g, h, i, j and 2 more" {
		t.Errorf("long target list: %q", got)
	}
}

func flagJSON(t *testing.T, f targeting.Flag) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFlagChangeInWords(t *testing.T) {
	base := func() targeting.Flag {
		return targeting.Flag{Name: "Checkout", Variations: []targeting.Variation{on, off}, DisabledVariationID: "v-off",
			TargetUsers: []targeting.TargetUser{{VariationID: "v-on", KeyIDs: []string{"vip-1", "vip-2"}}},
			Rules: []targeting.FlagRule{{ID: "r2", Name: "Mobile rollout", Variations: split(0.3),
				Conditions: []targeting.Condition{{Property: "platform", Op: "Equal", Value: "mobile"}}}},
			Fallthrough: targeting.Fallthrough{Variations: all("v-off")}, Tags: []string{"web"}}
	}
	cases := []struct {
		name   string
		change func(*targeting.Flag)
		want   []string
	}{
		{"toggle on", func(f *targeting.Flag) { f.IsEnabled = true }, []string{"Turned the flag on"}},
		{"rename", func(f *targeting.Flag) { f.Name = "New checkout" }, []string{"Renamed Checkout → New checkout"}},
		{"description", func(f *targeting.Flag) { f.Description = "for the new flow" }, []string{"Changed the description"}},
		{"archive", func(f *targeting.Flag) { f.IsArchived = true }, []string{"Archived the flag"}},
		{"add target", func(f *targeting.Flag) { f.TargetUsers[0].KeyIDs = append(f.TargetUsers[0].KeyIDs, "vip-3") },
			[]string{"Added vip-3 to True"}},
		{"remove target", func(f *targeting.Flag) { f.TargetUsers[0].KeyIDs = f.TargetUsers[0].KeyIDs[1:] },
			[]string{"Removed vip-1 from True"}},
		{"add rule", func(f *targeting.Flag) {
			f.Rules = append(f.Rules, targeting.FlagRule{ID: "r1", Name: "EU beta pro", Variations: all("v-on"),
				Conditions: []targeting.Condition{{Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`},
					{Property: targeting.SegmentIn, Value: `["seg-beta"]`}}})
		}, []string{"Added rule EU beta pro: if country is one of NL, DE and user is in segment Beta testers, serve True"}},
		{"remove rule", func(f *targeting.Flag) { f.Rules = nil }, []string{"Removed rule Mobile rollout"}},
		{"rollout split", func(f *targeting.Flag) { f.Rules[0].Variations = split(0.5) },
			[]string{"Rollout of Mobile rollout: 30%/70% → 50%/50%"}},
		{"rule serve", func(f *targeting.Flag) { f.Rules[0].Variations = all("v-on") },
			[]string{"Rule Mobile rollout: serve 30% True, 70% False by user key → serve True"}},
		{"rule conditions", func(f *targeting.Flag) { f.Rules[0].Conditions[0].Value = "tablet" },
			[]string{"Changed rule Mobile rollout: if platform is tablet, serve 30% True, 70% False by user key"}},
		{"default", func(f *targeting.Flag) { f.Fallthrough.Variations = split(0.5) },
			[]string{"Default rule: serve False → serve 50% True, 50% False by user key"}},
		{"off variation", func(f *targeting.Flag) { f.DisabledVariationID = "v-on" }, []string{"Off variation: False → True"}},
		{"add variation", func(f *targeting.Flag) {
			f.Variations = append(f.Variations, targeting.Variation{ID: "v-b", Name: "Blue", Value: "blue"})
		}, []string{"Added variation Blue (blue)"}},
		{"variation value", func(f *targeting.Flag) { f.Variations[0].Value = "yes" },
			[]string{"Changed variation True's value true → yes"}},
		{"tags", func(f *targeting.Flag) { f.Tags = []string{"beta"} }, []string{"Added tag beta", "Removed tag web"}},
	}
	for _, c := range cases {
		before, after := base(), base()
		c.change(&after)
		got := Change("FeatureFlag", flagJSON(t, before), flagJSON(t, after), segmentNames)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if got := Change("FeatureFlag", nil, flagJSON(t, base()), nil); !slices.Equal(got, []string{"Created the flag Checkout"}) {
		t.Errorf("create: %q", got)
	}
	if got := Change("FeatureFlag", flagJSON(t, base()), json.RawMessage("null"), nil); !slices.Equal(got, []string{"Deleted the flag Checkout"}) {
		t.Errorf("delete: %q", got)
	}
}

func TestSegmentChangeInWords(t *testing.T) {
	before := targeting.Segment{Name: "Beta", Included: []string{"bob"}}
	after := before
	after.Included = []string{"bob", "alice"}
	after.Excluded = []string{"eve"}
	after.Rules = []targeting.SegmentRule{{ID: "s1", Name: "Staff", Conditions: []targeting.Condition{{Property: "email", Op: "EndsWith", Value: "@acme.com"}}}}
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	want := []string{"Added alice to included users", "Added eve to excluded users",
		"Added rule Staff: users where email ends with @acme.com"}
	if got := Change("Segment", b, a, nil); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOtherChangesInWords(t *testing.T) {
	cases := []struct {
		refType       string
		before, after string
		want          []string
	}{
		{"Project", ``, `{"id":"x","name":"Web shop","key":"web"}`, []string{"Created project Web shop"}},
		{"Project", `{"name":"Web shop"}`, `{"name":"Shop"}`, []string{"Renamed Web shop → Shop"}},
		{"AccessToken", `{"name":"ci","status":"Active"}`, `{"name":"ci","status":"Inactive"}`,
			[]string{"Changed the status: Active → Inactive"}},
		{"Environment", `{"name":"Prod","settings":{"requireComment":false}}`, `{"name":"Prod","settings":{"requireComment":true}}`,
			[]string{"Changed the settings"}},
		{"Policy", `{"name":"Readers"}`, `null`, []string{"Deleted policy Readers"}},
	}
	for _, c := range cases {
		if got := Change(c.refType, json.RawMessage(c.before), json.RawMessage(c.after), nil); !slices.Equal(got, c.want) {
			t.Errorf("%s %s → %s: got %q, want %q", c.refType, c.before, c.after, got, c.want)
		}
	}
}
