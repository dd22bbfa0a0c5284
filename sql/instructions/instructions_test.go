package instructions_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/instructions"
	"github.com/bunting-flags/bunting/sql/jsonbody"
)

// The expected instructions below are written from FeatBit's source
// (modules/back-end/src/Domain/SemanticPatch/FlagComparer.cs,
// SegmentComparer.cs and the Instruction.*.cs value types), as the JSON its
// API answers: camelCase names, "" for a kind without value.

// baseFlag is a flag as FeatBit's UI holds it and posts it to compare: the
// flag view plus the UI's own fields (originalData, isNotPercentageRollout,
// a condition's multipleValue and type), which the comparer does not read.
const baseFlag = `{
  "id": "0b1e0c3a-58a4-4a7e-9f9e-0c7d3c4b8a01", "envId": "5f7e2a1c-1111-4a7e-9f9e-0c7d3c4b8a01",
  "revision": "9d7e2a1c-2222-4a7e-9f9e-0c7d3c4b8a01",
  "name": "Checkout", "description": "The new checkout", "key": "checkout",
  "variationType": "boolean",
  "variations": [{"id": "v-on", "name": "On", "value": "true"}, {"id": "v-off", "name": "Off", "value": "false"}],
  "targetUsers": [{"variationId": "v-on", "keyIds": ["alice", "bob"]}, {"variationId": "v-off", "keyIds": []}],
  "rules": [{
    "id": "r1", "name": "Dutch", "dispatchKey": null, "includedInExpt": false, "isNotPercentageRollout": true,
    "conditions": [
      {"id": "c1", "property": "country", "op": "IsOneOf", "value": "[\"NL\",\"BE\"]", "multipleValue": ["NL", "BE"], "type": "multi"},
      {"id": "c2", "property": "plan", "op": "Equal", "value": "pro"},
      {"id": "c3", "property": "User is in segment", "op": "", "value": "[\"s1\"]"}
    ],
    "variations": [{"id": "v-on", "rollout": [0, 1], "exptRollout": 1, "percentage": 100}]
  }],
  "isEnabled": false, "disabledVariationId": "v-off",
  "fallthrough": {"dispatchKey": null, "includedInExpt": true, "isNotPercentageRollout": true,
    "variations": [{"id": "v-off", "rollout": [0, 1], "exptRollout": 1}]},
  "exptIncludeAllTargets": true, "tags": ["web", "beta"], "isArchived": false,
  "creatorId": "7a7e2a1c-3333-4a7e-9f9e-0c7d3c4b8a01", "updatorId": "7a7e2a1c-3333-4a7e-9f9e-0c7d3c4b8a01",
  "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z",
  "originalData": {"name": "Checkout", "variations": [], "rules": [], "tags": []}
}`

const baseSegment = `{
  "id": "s1", "name": "Beta", "key": "beta", "type": "environment-specific", "scopes": [],
  "tags": ["qa"], "description": "Beta testers", "updatedAt": "2026-01-02T03:04:05Z",
  "included": ["alice", "bob"], "excluded": ["mallory"],
  "rules": [{"id": "r1", "name": "Staff", "conditions": [
    {"id": "c1", "property": "email", "op": "EndsWith", "value": "@example.com"},
    {"id": "c2", "property": "team", "op": "NotOneOf", "value": "[\"ops\"]", "multipleValue": ["ops"], "type": "multi", "isSingleOperator": false}
  ]}],
  "isArchived": false
}`

// edit returns doc (JSON text) with change applied to it as a map.
func edit(t *testing.T, doc string, change func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// parse reads JSON text for the cases' literals.
func parse(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad case JSON %s: %v", text, err)
	}
	return v
}

func rule(m map[string]any, i int) map[string]any { return m["rules"].([]any)[i].(map[string]any) }

func condition(m map[string]any, r, c int) map[string]any {
	return rule(m, r)["conditions"].([]any)[c].(map[string]any)
}

func sameInstructions(t *testing.T, got []instructions.Instruction, want string) {
	t.Helper()
	text, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(text, &g); err != nil {
		t.Fatal(err)
	}
	if w := parse(t, want); !reflect.DeepEqual(g, w) {
		t.Fatalf("instructions\n got %s\nwant %s", text, strings.Join(strings.Fields(want), " "))
	}
}

func TestCompareFlagsEveryKind(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"nothing", func(m map[string]any) {}, `[]`},
		{"turn on", func(m map[string]any) { m["isEnabled"] = true }, `[{"kind":"TurnFlagOn","value":""}]`},
		{"archive", func(m map[string]any) { m["isArchived"] = true }, `[{"kind":"ArchiveFlag","value":""}]`},
		{"name", func(m map[string]any) { m["name"] = "New checkout" }, `[{"kind":"UpdateName","value":"New checkout"}]`},
		{"description", func(m map[string]any) { m["description"] = "" }, `[{"kind":"UpdateDescription","value":""}]`},
		{"tags: removed, then added", func(m map[string]any) { m["tags"] = []any{"beta", "mobile", "mobile"} },
			`[{"kind":"RemoveTags","value":["web"]},{"kind":"AddTags","value":["mobile"]}]`},
		{"variation type", func(m map[string]any) { m["variationType"] = "string" },
			`[{"kind":"UpdateVariationType","value":"string"}]`},
		{"variations: removed, added, updated", func(m map[string]any) {
			m["variations"] = []any{
				map[string]any{"id": "v-on", "name": "Enabled", "value": "true"},
				map[string]any{"id": "v-new", "name": "Maybe", "value": "false"},
			}
			m["targetUsers"] = []any{} // the targets of v-on go too: SetTargetUsers of v-on
			m["disabledVariationId"] = "v-new"
			m["fallthrough"].(map[string]any)["variations"] = []any{map[string]any{"id": "v-new", "rollout": []any{0, 1}, "exptRollout": 1}}
			m["rules"] = []any{}
		}, `[
			{"kind":"RemoveVariation","value":"v-off"},
			{"kind":"AddVariation","value":{"id":"v-new","name":"Maybe","value":"false"}},
			{"kind":"UpdateVariation","value":{"id":"v-on","name":"Enabled","value":"true"}},
			{"kind":"UpdateDisabledVariation","value":"v-new"},
			{"kind":"UpdateDefaultRuleVariationOrRollouts","value":{"rolloutVariations":[{"id":"v-new","rollout":[0,1],"exptRollout":1}]}},
			{"kind":"SetTargetUsers","value":{"keyIds":[],"variationId":"v-on"}},
			{"kind":"SetRules","value":[]}]`},
		{"off variation", func(m map[string]any) { m["disabledVariationId"] = "v-on" },
			`[{"kind":"UpdateDisabledVariation","value":"v-on"}]`},
		{"default rule: a percentage rollout", func(m map[string]any) {
			m["fallthrough"].(map[string]any)["variations"] = []any{
				map[string]any{"id": "v-on", "rollout": []any{0, 0.25}, "exptRollout": 0.5, "percentage": 25},
				map[string]any{"id": "v-off", "rollout": []any{0.25, 1}, "exptRollout": 0.5},
			}
		}, `[{"kind":"UpdateDefaultRuleVariationOrRollouts","value":{"rolloutVariations":[
			{"id":"v-on","rollout":[0,0.25],"exptRollout":0.5},{"id":"v-off","rollout":[0.25,1],"exptRollout":0.5}]}}]`},
		{"default rule: a rollout within 0.00001, and the experiment share, are no change", func(m map[string]any) {
			m["fallthrough"].(map[string]any)["variations"] = []any{map[string]any{"id": "v-off", "rollout": []any{0.000001, 1}, "exptRollout": 0.3}}
		}, `[]`},
		{"default rule: dispatch key set", func(m map[string]any) { m["fallthrough"].(map[string]any)["dispatchKey"] = "email" },
			`[{"kind":"UpdateDefaultRuleDispatchKey","value":"email"}]`},
		{"individual targets: set for a variation with none", func(m map[string]any) {
			m["targetUsers"] = []any{
				map[string]any{"variationId": "v-on", "keyIds": []any{"alice", "bob"}},
				map[string]any{"variationId": "v-off", "keyIds": []any{"carol"}},
			}
		}, `[{"kind":"SetTargetUsers","value":{"keyIds":["carol"],"variationId":"v-off"}}]`},
		{"individual targets: all removed", func(m map[string]any) {
			m["targetUsers"] = []any{map[string]any{"variationId": "v-on", "keyIds": []any{}}}
		}, `[{"kind":"SetTargetUsers","value":{"keyIds":[],"variationId":"v-on"}}]`},
		{"individual targets: added, then removed", func(m map[string]any) {
			m["targetUsers"] = []any{map[string]any{"variationId": "v-on", "keyIds": []any{"bob", "dave"}}}
		}, `[{"kind":"AddTargetUsers","value":{"keyIds":["dave"],"variationId":"v-on"}},
			{"kind":"RemoveTargetUsers","value":{"keyIds":["alice"],"variationId":"v-on"}}]`},
		{"rules: one added", func(m map[string]any) {
			m["rules"] = append(m["rules"].([]any), map[string]any{"id": "r2", "name": "Pro", "dispatchKey": "email", "includedInExpt": true,
				"conditions": []any{map[string]any{"id": "c9", "property": "plan", "op": "Equal", "value": "pro", "type": "string"}},
				"variations": []any{map[string]any{"id": "v-on", "rollout": []any{0, 1}, "exptRollout": 1}}})
		}, `[{"kind":"AddRule","value":{"id":"r2","name":"Pro","dispatchKey":"email","includedInExpt":true,
			"conditions":[{"id":"c9","property":"plan","op":"Equal","value":"pro"}],
			"variations":[{"id":"v-on","rollout":[0,1],"exptRollout":1}]}}]`},
		{"rules: a copy of a rule added under another id", func(m map[string]any) {
			r2 := map[string]any{}
			for k, v := range rule(m, 0) {
				r2[k] = v
			}
			r2["id"] = "r2"
			m["rules"] = append(m["rules"].([]any), r2)
		}, `[{"kind":"AddRule","value":{"id":"r2","name":"Dutch","dispatchKey":null,"includedInExpt":false,
			"conditions":[{"id":"c1","property":"country","op":"IsOneOf","value":"[\"NL\",\"BE\"]"},
				{"id":"c2","property":"plan","op":"Equal","value":"pro"},
				{"id":"c3","property":"User is in segment","op":"","value":"[\"s1\"]"}],
			"variations":[{"id":"v-on","rollout":[0,1],"exptRollout":1}]}}]`},
		{"rules: all cleared", func(m map[string]any) { m["rules"] = []any{} }, `[{"kind":"SetRules","value":[]}]`},
		{"rule name", func(m map[string]any) { rule(m, 0)["name"] = "Benelux" },
			`[{"kind":"UpdateRuleName","value":{"ruleId":"r1","name":"Benelux"}}]`},
		{"rule conditions: removed, then added", func(m map[string]any) {
			rule(m, 0)["conditions"] = []any{
				condition(m, 0, 0), condition(m, 0, 2),
				map[string]any{"id": "c4", "property": "age", "op": "BiggerThan", "value": "18", "type": "number"},
			}
		}, `[{"kind":"RemoveRuleConditions","value":{"ruleId":"r1","conditionIds":["c2"]}},
			{"kind":"AddRuleConditions","value":{"ruleId":"r1","conditions":[{"id":"c4","property":"age","op":"BiggerThan","value":"18"}]}}]`},
		{"rule condition updated", func(m map[string]any) { condition(m, 0, 1)["op"] = "NotEqual" },
			`[{"kind":"UpdateRuleCondition","value":{"ruleId":"r1","condition":{"id":"c2","property":"plan","op":"NotEqual","value":"pro"}}}]`},
		{"is-one-of values: removed, then added", func(m map[string]any) { condition(m, 0, 0)["value"] = `["BE","LU"]` },
			`[{"kind":"RemoveValuesFromRuleCondition","value":{"ruleId":"r1","conditionId":"c1","values":["NL"]}},
			{"kind":"AddValuesToRuleCondition","value":{"ruleId":"r1","conditionId":"c1","values":["LU"]}}]`},
		{"is-one-of values reordered: no change", func(m map[string]any) { condition(m, 0, 0)["value"] = `["BE","NL"]` }, `[]`},
		{"is-one-of turned not-one-of: the condition is replaced", func(m map[string]any) { condition(m, 0, 0)["op"] = "NotOneOf" },
			`[{"kind":"UpdateRuleCondition","value":{"ruleId":"r1","condition":{"id":"c1","property":"country","op":"NotOneOf","value":"[\"NL\",\"BE\"]"}}}]`},
		{"segment condition: segments added", func(m map[string]any) { condition(m, 0, 2)["value"] = `["s1","s2"]` },
			`[{"kind":"AddValuesToRuleCondition","value":{"ruleId":"r1","conditionId":"c3","values":["s2"]}}]`},
		{"rule rollout", func(m map[string]any) {
			rule(m, 0)["variations"] = []any{map[string]any{"id": "v-off", "rollout": []any{0, 1}, "exptRollout": 1}}
		}, `[{"kind":"UpdateRuleVariationOrRollouts","value":{"ruleId":"r1","rolloutVariations":[{"id":"v-off","rollout":[0,1],"exptRollout":1}]}}]`},
		{"rule dispatch key", func(m map[string]any) { rule(m, 0)["dispatchKey"] = "country" },
			`[{"kind":"UpdateRuleDispatchKey","value":{"ruleId":"r1","dispatchKey":"country"}}]`},
		{"rule dispatch key cleared: no instruction (FeatBit compares only a key set)", func(m map[string]any) {
			rule(m, 0)["dispatchKey"] = nil
		}, `[]`},
		{"what FeatBit does not compare: key, experiment settings", func(m map[string]any) {
			m["key"] = "checkout-2"
			m["exptIncludeAllTargets"] = false
			rule(m, 0)["includedInExpt"] = true
			m["fallthrough"].(map[string]any)["includedInExpt"] = false
		}, `[]`},
		{"several at once, in FeatBit's order", func(m map[string]any) {
			m["isEnabled"] = true
			m["name"] = "Checkout 2"
			m["tags"] = []any{"web"}
			m["fallthrough"].(map[string]any)["dispatchKey"] = "email"
			rule(m, 0)["name"] = "NL"
			m["targetUsers"] = []any{map[string]any{"variationId": "v-on", "keyIds": []any{"alice"}}}
		}, `[{"kind":"TurnFlagOn","value":""},
			{"kind":"UpdateName","value":"Checkout 2"},
			{"kind":"RemoveTags","value":["beta"]},
			{"kind":"UpdateDefaultRuleDispatchKey","value":"email"},
			{"kind":"RemoveTargetUsers","value":{"keyIds":["bob"],"variationId":"v-on"}},
			{"kind":"UpdateRuleName","value":{"ruleId":"r1","name":"NL"}}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, err := instructions.DecodeFlag([]byte(baseFlag))
			if err != nil {
				t.Fatal(err)
			}
			after, err := instructions.DecodeFlag([]byte(edit(t, baseFlag, c.change)))
			if err != nil {
				t.Fatal(err)
			}
			sameInstructions(t, instructions.CompareFlags(before, after), c.want)
		})
	}
}

func TestCompareFlagsTheOtherWay(t *testing.T) {
	// Turning off, restoring and setting rules where there were none are
	// the reverse of cases above.
	changed := edit(t, baseFlag, func(m map[string]any) {
		m["isEnabled"] = true
		m["isArchived"] = true
		m["rules"] = []any{}
	})
	got := instructions.Compare(instructions.RefFlag, []byte(changed), []byte(baseFlag))
	sameInstructions(t, got, `[{"kind":"TurnFlagOff","value":""},{"kind":"RestoreFlag","value":""},
		{"kind":"SetRules","value":[{"id":"r1","name":"Dutch","dispatchKey":null,"includedInExpt":false,
			"conditions":[{"id":"c1","property":"country","op":"IsOneOf","value":"[\"NL\",\"BE\"]"},
				{"id":"c2","property":"plan","op":"Equal","value":"pro"},
				{"id":"c3","property":"User is in segment","op":"","value":"[\"s1\"]"}],
			"variations":[{"id":"v-on","rollout":[0,1],"exptRollout":1}]}]}]`)
}

func TestCompareFlagsRuleRemoved(t *testing.T) {
	twoRules := edit(t, baseFlag, func(m map[string]any) {
		m["rules"] = append(m["rules"].([]any), map[string]any{"id": "r2", "name": "Pro", "conditions": []any{}, "variations": []any{}})
	})
	got := instructions.Compare(instructions.RefFlag, []byte(twoRules), []byte(baseFlag))
	sameInstructions(t, got, `[{"kind":"RemoveRule","value":"r2"}]`)
}

func TestCompareSegmentsEveryKind(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"nothing", func(m map[string]any) {}, `[]`},
		{"archive", func(m map[string]any) { m["isArchived"] = true }, `[{"kind":"Archive","value":""}]`},
		{"name and description", func(m map[string]any) { m["name"] = "Beta 2"; m["description"] = "" },
			`[{"kind":"UpdateName","value":"Beta 2"},{"kind":"UpdateDescription","value":""}]`},
		{"tags", func(m map[string]any) { m["tags"] = []any{"ops"} },
			`[{"kind":"RemoveTags","value":["qa"]},{"kind":"AddTags","value":["ops"]}]`},
		{"included: added, then removed", func(m map[string]any) { m["included"] = []any{"bob", "carol"} },
			`[{"kind":"AddTargetUsersToIncluded","value":["carol"]},{"kind":"RemoveTargetUsersFromIncluded","value":["alice"]}]`},
		{"excluded: added, then removed", func(m map[string]any) { m["excluded"] = []any{"eve"} },
			`[{"kind":"AddTargetUsersToExcluded","value":["eve"]},{"kind":"RemoveTargetUsersFromExcluded","value":["mallory"]}]`},
		{"rules cleared", func(m map[string]any) { m["rules"] = []any{} }, `[{"kind":"SetRules","value":[]}]`},
		{"rule added", func(m map[string]any) {
			m["rules"] = append(m["rules"].([]any), map[string]any{"id": "r2", "name": "Pro", "conditions": []any{
				map[string]any{"id": "c9", "property": "plan", "op": "Equal", "value": "pro"}}})
		}, `[{"kind":"AddRule","value":{"id":"r2","name":"Pro","conditions":[{"id":"c9","property":"plan","op":"Equal","value":"pro"}]}}]`},
		{"rule replaced: added, then removed", func(m map[string]any) {
			m["rules"] = []any{map[string]any{"id": "r2", "name": "Pro", "conditions": []any{}}}
		}, `[{"kind":"AddRule","value":{"id":"r2","name":"Pro","conditions":[]}},{"kind":"RemoveRule","value":"r1"}]`},
		{"rule name", func(m map[string]any) { rule(m, 0)["name"] = "Employees" },
			`[{"kind":"UpdateRuleName","value":{"ruleId":"r1","name":"Employees"}}]`},
		{"rule conditions removed and added", func(m map[string]any) {
			rule(m, 0)["conditions"] = []any{condition(m, 0, 1), map[string]any{"id": "c3", "property": "beta", "op": "IsTrue", "value": "IsTrue"}}
		}, `[{"kind":"RemoveRuleConditions","value":{"ruleId":"r1","conditionIds":["c1"]}},
			{"kind":"AddRuleConditions","value":{"ruleId":"r1","conditions":[{"id":"c3","property":"beta","op":"IsTrue","value":"IsTrue"}]}}]`},
		{"rule condition updated", func(m map[string]any) { condition(m, 0, 0)["value"] = "@example.org" },
			`[{"kind":"UpdateRuleCondition","value":{"ruleId":"r1","condition":{"id":"c1","property":"email","op":"EndsWith","value":"@example.org"}}}]`},
		{"not-one-of values", func(m map[string]any) { condition(m, 0, 1)["value"] = `["sales"]` },
			`[{"kind":"RemoveValuesFromRuleCondition","value":{"ruleId":"r1","conditionId":"c2","values":["ops"]}},
			{"kind":"AddValuesToRuleCondition","value":{"ruleId":"r1","conditionId":"c2","values":["sales"]}}]`},
		{"scopes are not compared", func(m map[string]any) { m["scopes"] = []any{"p1:e1"} }, `[]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := instructions.Compare(instructions.RefSegment, []byte(baseSegment), []byte(edit(t, baseSegment, c.change)))
			sameInstructions(t, got, c.want)
		})
	}
	restored := instructions.Compare(instructions.RefSegment, []byte(edit(t, baseSegment, func(m map[string]any) { m["isArchived"] = true })), []byte(baseSegment))
	sameInstructions(t, restored, `[{"kind":"Restore","value":""}]`)
}

func TestCompareOfAuditEntriesWithoutChanges(t *testing.T) {
	for name, c := range map[string]struct {
		refType           string
		previous, current string
	}{
		"a creation":                      {instructions.RefFlag, "", baseFlag},
		"a removal":                       {instructions.RefSegment, baseSegment, "null"},
		"another type":                    {"Project", `{"name":"a"}`, `{"name":"b"}`},
		"a snapshot that is not its type": {instructions.RefFlag, baseSegment, baseSegment},
	} {
		got := instructions.Compare(c.refType, []byte(c.previous), []byte(c.current))
		if got == nil || len(got) != 0 {
			t.Errorf("%s: %#v, want an empty list", name, got)
		}
	}
}

func TestDecodeRefusesWhatIsNotOfItsType(t *testing.T) {
	for name, c := range map[string]struct {
		text    string
		segment bool
		want    error
	}{
		"a segment as a flag":        {baseSegment, false, instructions.ErrNotFlag},
		"a flag as a segment":        {baseFlag, true, instructions.ErrNotSeg},
		"not JSON":                   {`{"name":`, false, instructions.ErrMalformed},
		"a name that is a number":    {`{"name":1,"variations":[],"fallthrough":{}}`, false, instructions.ErrMalformed},
		"a condition value number":   {`{"name":"a","included":[],"rules":[{"id":"r","conditions":[{"id":"c","value":18}]}]}`, true, instructions.ErrMalformed},
		"a list":                     {`[]`, false, instructions.ErrMalformed},
		"an object of no flag field": {`{"colour":"red"}`, false, instructions.ErrMalformed},
		"a member named twice":       {`{"name":"a","Name":"b","variations":[],"fallthrough":{}}`, false, instructions.ErrMalformed},
		"50,000 empty rules": {`{"name":"a","variations":[],"fallthrough":{},"rules":[` + strings.Repeat(`{},`, 50000) + `{}]}`,
			false, jsonbody.ErrTooCostly},
	} {
		var err error
		if c.segment {
			_, err = instructions.DecodeSegment([]byte(c.text))
		} else {
			_, err = instructions.DecodeFlag([]byte(c.text))
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}
