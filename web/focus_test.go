package web

import (
	"encoding/json"
	"testing"
)

// A header carries bytes the browser reads as Latin-1: the events' JSON
// escapes every other character, and reads back whole.
func TestASCIIJSONReadsBackWhole(t *testing.T) {
	for _, text := range []string{"Targeting saved.", "Group “Release crew” deleted.", "Flag 🚀 saved", `quote " and \ backslash`} {
		b, err := json.Marshal(map[string]string{"bunting:announce": text})
		if err != nil {
			t.Fatal(err)
		}
		header := asciiJSON(b)
		for _, r := range header {
			if r > 127 {
				t.Fatalf("%q: header %q holds %q", text, header, r)
			}
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(header), &got); err != nil || got["bunting:announce"] != text {
			t.Errorf("%q: read back %q (%v)", text, got["bunting:announce"], err)
		}
	}
}

// The rule editor's buttons give the keyboard to what they added, to what
// took the place of what they removed, and to the same button on a moved rule.
func TestEditRulesFocused(t *testing.T) {
	rules := func(n int, conds ...int) []ruleForm {
		out := make([]ruleForm, n)
		for i := range out {
			out[i] = ruleForm{index: itoa(i), id: "r" + itoa(i)}
			c := 1
			if i < len(conds) {
				c = conds[i]
			}
			for j := range c {
				out[i].conds = append(out[i].conds, condForm{index: itoa(j), op: "Equal"})
			}
		}
		return out
	}
	for _, tc := range []struct {
		rules         []ruleForm
		edit          string
		focus, saying string
	}{
		{rules(0), "add-rule", "f-rule-0-name", "Rule 1 added."},
		{rules(2), "add-rule", "f-rule-2-name", "Rule 3 added."},
		{rules(3), "remove-rule.1", "f-rule-1-name", "Rule 2 removed."},
		{rules(2), "remove-rule.1", "f-rule-0-name", "Rule 2 removed."},
		{rules(1), "remove-rule.0", "f-rule-add", "Rule 1 removed."},
		{rules(3), "rule-up.2", "f-rule-1-up", "Rule 3 moved up to 2."},
		{rules(3), "rule-up.1", "f-rule-0-down", "Rule 2 moved up to 1."},
		{rules(3), "rule-down.0", "f-rule-1-down", "Rule 1 moved down to 2."},
		{rules(3), "rule-down.1", "f-rule-2-up", "Rule 2 moved down to 3."},
		{rules(2), "add-cond.1", "f-rule-1-cond-1-property", "Condition 2 added to rule 2."},
		{rules(1, 3), "remove-cond.0.1", "f-rule-0-cond-1-property", "Condition 2 removed from rule 1."},
		{rules(1, 2), "remove-cond.0.1", "f-rule-0-cond-0-property", "Condition 2 removed from rule 1."},
		{rules(1, 1), "remove-cond.0.0", "f-rule-0-cond-add", "Condition 1 removed from rule 1."},
		{rules(1), "rule-up.0", "", ""},
		{rules(1), "remove-rule.7", "", ""},
	} {
		_, focus, saying := editRules("f", tc.rules, tc.edit, nil)
		if focus != tc.focus || saying != tc.saying {
			t.Errorf("%s: got %q, %q; want %q, %q", tc.edit, focus, saying, tc.focus, tc.saying)
		}
	}
}
