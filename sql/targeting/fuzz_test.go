package targeting

import (
	"encoding/json"
	"testing"
)

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
		if problems, _ := CheckFlag(&flag); len(problems) > 0 {
			return
		}
		stored, _ := json.Marshal(flag)
		var back Flag
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatalf("accepted flag does not decode: %v", err)
		}
		if problems, _ := CheckFlag(&back); len(problems) > 0 {
			t.Fatalf("accepted targeting %s is invalid once stored: %v", raw, problems)
		}
	})
}
