package flagcopy

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/google/uuid"
)

// compared is a boolean flag with variation ids of its own, as each
// environment's copy of a flag has.
func compared(env string) flagstore.Flag {
	on, off := env+"-on", env+"-off"
	return flagstore.Flag{Variations: []flagstore.Variation{{ID: on, Name: "True", Value: "true"}, {ID: off, Name: "False", Value: "false"}},
		DisabledVariationID: off, TargetUsers: []flagstore.TargetUser{},
		Fallthrough: flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 1}}}}}
}

func rule(name string, serve string, conds ...flagstore.Condition) flagstore.FlagRule {
	return flagstore.FlagRule{ID: uuid.NewString(), Name: name, Conditions: conds, Variations: []flagstore.RolloutVariation{{ID: serve, Rollout: []float64{0, 1}}}}
}

// TestDiffFlagsMatchesByMeaning: variation ids differ between environments,
// list values and conditions may come in any order, and each environment
// has its own segment of the same name; none of that is a difference.
func TestDiffFlagsMatchesByMeaning(t *testing.T) {
	src, tgt := compared("p"), compared("d")
	names := map[string]string{"seg-p": "Beta", "seg-d": "Beta", "seg-x": "Staff"}
	src.Rules = []flagstore.FlagRule{rule("EU", "p-on", flagstore.Condition{Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`},
		flagstore.Condition{Property: targeting.SegmentIn, Value: `["seg-p"]`})}
	tgt.Rules = []flagstore.FlagRule{rule("Europe", "d-on", flagstore.Condition{Property: targeting.SegmentIn, Value: `["seg-d"]`},
		flagstore.Condition{Property: "country", Op: "IsOneOf", Value: `["DE","NL"]`})}
	if o := DiffFlags(src, tgt, names).Overview(uuid.Nil); !o.Same() {
		t.Fatalf("equivalent flags differ: %+v", o)
	}
	for _, tc := range []struct {
		name string
		edit func(f *flagstore.Flag)
		part func(o FlagDiffOverview) bool
	}{
		{"on", func(f *flagstore.Flag) { f.IsEnabled = true }, func(o FlagDiffOverview) bool { return o.OnOffState }},
		{"another segment", func(f *flagstore.Flag) { f.Rules[0].Conditions[0].Value = `["seg-x"]` }, func(o FlagDiffOverview) bool { return o.TargetingRule }},
		{"another value served", func(f *flagstore.Flag) { f.Rules[0].Variations[0].ID = "d-off" }, func(o FlagDiffOverview) bool { return o.TargetingRule }},
		{"a rollout", func(f *flagstore.Flag) {
			f.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: "d-on", Rollout: []float64{0, .5}}, {ID: "d-off", Rollout: []float64{.5, 1}}}
		}, func(o FlagDiffOverview) bool { return o.DefaultRule }},
		{"off serves true", func(f *flagstore.Flag) { f.DisabledVariationID = "d-on" }, func(o FlagDiffOverview) bool { return o.OffVariation }},
		{"a target", func(f *flagstore.Flag) {
			f.TargetUsers = []flagstore.TargetUser{{VariationID: "d-on", KeyIDs: []string{"bob"}}}
		},
			func(o FlagDiffOverview) bool { return o.IndividualTargeting }},
		{"a third value", func(f *flagstore.Flag) {
			f.Variations = append(f.Variations, flagstore.Variation{ID: "d-3", Value: "maybe"})
		},
			func(o FlagDiffOverview) bool { return o.Variations }},
	} {
		changed := tgt.Clone()
		tc.edit(&changed)
		if o := DiffFlags(src, changed, names).Overview(uuid.Nil); !tc.part(o) || o.Same() {
			t.Errorf("%s: overview %+v", tc.name, o)
		}
	}
}

// TestCopySettingsMapsVariationsByValue: copied settings serve the target's
// own variations; append keeps the target's rules and adds those that differ.
func TestCopySettingsMapsVariationsByValue(t *testing.T) {
	src, tgt := compared("p"), compared("d")
	src.IsEnabled, src.DisabledVariationID = true, "p-on"
	src.Variations = append(src.Variations, flagstore.Variation{ID: "p-3", Name: "Maybe", Value: "maybe"})
	src.TargetUsers = []flagstore.TargetUser{{VariationID: "p-off", KeyIDs: []string{"alice"}}}
	shared := rule("Same", "p-on", flagstore.Condition{Property: "plan", Op: "Equal", Value: "pro"})
	src.Rules = []flagstore.FlagRule{shared, rule("New", "p-3", flagstore.Condition{Property: "country", Op: "Equal", Value: "NL"})}
	tgt.TargetUsers = []flagstore.TargetUser{{VariationID: "d-off", KeyIDs: []string{"bob"}}}
	tgt.Rules = []flagstore.FlagRule{rule("Same here", "d-on", flagstore.Condition{Property: "plan", Op: "Equal", Value: "pro"})}

	copySettings(src, &tgt, nil, FlagSettingCopyOptions{OnOffState: true, OffVariation: true,
		IndividualTargeting: CopyOption{Copy: true, Mode: CopyAppend}, TargetingRule: CopyOption{Copy: true, Mode: CopyAppend}})
	if !tgt.IsEnabled || tgt.DisabledVariationID != "d-on" || len(tgt.Variations) != 3 || tgt.Variations[2].Value != "maybe" {
		t.Fatalf("state, off variation, variations: %+v", tgt)
	}
	if len(tgt.TargetUsers) != 1 || tgt.TargetUsers[0].VariationID != "d-off" || !slices.Equal(tgt.TargetUsers[0].KeyIDs, []string{"bob", "alice"}) {
		t.Errorf("targets %+v, want bob then alice on the target's False", tgt.TargetUsers)
	}
	if len(tgt.Rules) != 2 || tgt.Rules[0].Name != "Same here" || tgt.Rules[1].Name != "New" || tgt.Rules[1].Variations[0].ID != tgt.Variations[2].ID {
		t.Errorf("rules %+v, want the target's own and New serving the added variation", tgt.Rules)
	}
	if DiffFlags(src, tgt, nil).Overview(uuid.Nil).IndividualTargeting == false {
		t.Error("appended targets should still differ: bob is only in the target")
	}
}
