package store

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzApplyPatch: applying any patch to a flag never panics; a patch that
// writes a read-only member is always refused; an accepted patch leaves the
// read-only members as they were.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		`[{"op":"replace","path":"/name","value":"x"}]`, `[{"op":"remove","path":"/id"}]`,
		`[{"op":"move","from":"/tags","path":"/description"}]`, `[{"op":"test","path":"/revision","value":"x"}]`,
		`[{"op":"add","path":"/rules/-","value":{"id":"r"}}]`, `[{"op":"copy","from":"/key","path":"/name"}]`,
		`[]`, `null`, `[{"op":"replace","path":"/~1id","value":1}]`,
		// The copy bomb: each copy doubles the variations (refused past 1 MiB).
		"[" + strings.Repeat(`{"op":"copy","from":"/variations","path":"/variations/-"},`, 21) + `{"op":"copy","from":"/variations","path":"/variations/-"}]`,
	} {
		f.Add([]byte(seed))
	}
	doc := Flag{Name: "Pay", Key: "pay", VariationType: VariationBoolean, Variations: DefaultVariations(VariationBoolean),
		Tags: []string{"a"}, TargetUsers: []TargetUser{}, Rules: []FlagRule{}}
	doc.DisabledVariationID = doc.Variations[1].ID
	f.Fuzz(func(t *testing.T, ops []byte) {
		var out Flag
		err := applyPatch(doc, ops, flagWritable, &out)
		var parsed []patchOp
		json.Unmarshal(ops, &parsed)
		for _, op := range parsed {
			if op.Op != "test" && op.Path != nil && !slices.Contains(flagWritable, member(*op.Path)) && err == nil {
				t.Fatalf("patch %s wrote the read-only %s", ops, *op.Path)
			}
		}
		if err == nil && (out.Key != doc.Key || out.ID != doc.ID || out.Revision != doc.Revision) {
			t.Fatalf("patch %s changed a read-only member", ops)
		}
	})
}

// FuzzTargetingValidation: validating any targeting never panics, and what
// it accepts survives a JSON round trip still valid (what is stored is what
// was checked).
func FuzzTargetingValidation(f *testing.F) {
	for _, seed := range []string{
		`{"rules":[{"id":"r","conditions":[{"id":"c","property":"p","op":"IsOneOf","value":"[\"a\"]"}],"variations":[{"id":"on","rollout":[0,0.3],"exptRollout":1},{"id":"off","rollout":[0.3,1],"exptRollout":1}]}],"fallthrough":{"variations":[{"id":"off","rollout":[0,1],"exptRollout":1}]}}`,
		`{"rules":[{"id":"r","conditions":[{"id":"c","property":"p","op":"MatchRegex","value":"(a+)+$"}],"variations":[{"id":"on","rollout":[0,1]}]}]}`,
		`{"targetUsers":[{"keyIds":["a","a"],"variationId":"on"}]}`,
		`{"fallthrough":{"variations":[{"id":"on","rollout":[0,0.5]},{"id":"off","rollout":[0.5,1]},{"id":"on","rollout":[1,1]}]}}`,
		`{"rules":[{"id":"r","conditions":[{"id":"c","property":"User is in segment","value":"[\"00000000-0000-0000-0000-000000000001\"]"}],"variations":[{"id":"on","rollout":[0,1]}]}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in struct {
			TargetUsers []TargetUser `json:"targetUsers"`
			Rules       []FlagRule   `json:"rules"`
			Fallthrough *Fallthrough `json:"fallthrough"`
		}
		if json.Unmarshal(raw, &in) != nil {
			return
		}
		flag := Flag{Name: "Pay", Key: "pay", VariationType: VariationBoolean, DisabledVariationID: "off",
			Variations:  []Variation{{ID: "on", Name: "On", Value: "true"}, {ID: "off", Name: "Off", Value: "false"}},
			TargetUsers: in.TargetUsers, Rules: in.Rules, Tags: []string{},
			Fallthrough: Fallthrough{Variations: []RolloutVariation{{ID: "on", Rollout: []float64{0, 1}}}}}
		if in.Fallthrough != nil {
			flag.Fallthrough = *in.Fallthrough
		}
		var v validator
		checkFlag(&v, &flag)
		if v.err() != nil {
			return
		}
		stored, _ := json.Marshal(flag)
		var back Flag
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatalf("accepted flag does not decode: %v", err)
		}
		var again validator
		checkFlag(&again, &back)
		if err := again.err(); err != nil {
			t.Fatalf("accepted targeting %s is invalid once stored: %v", raw, err)
		}
	})
}
