package web

import (
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

func TestPercentsOf(t *testing.T) {
	t.Parallel()
	vars := []flagstore.Variation{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	third := 1.0 / 3
	for _, tc := range []struct {
		name    string
		rollout []flagstore.RolloutVariation
		want    [3]int
	}{
		{"one variation", []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, 1}}}, [3]int{0, 10000, 0}},
		{"30/70", []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .3}}, {ID: "c", Rollout: []float64{.3, 1}}}, [3]int{3000, 0, 7000}},
		{"a variation twice", []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .25}}, {ID: "b", Rollout: []float64{.25, .75}},
			{ID: "a", Rollout: []float64{.75, 1}}}, [3]int{5000, 5000, 0}},
		{"hundredths", []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .1234}}, {ID: "b", Rollout: []float64{.1234, .1235}},
			{ID: "c", Rollout: []float64{.1235, 1}}}, [3]int{1234, 1, 8765}},
	} {
		got := percentsOf(vars, tc.rollout)
		if [3]int{got["a"], got["b"], got["c"]} != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Thirds, in any order: one of them rounds up so they add up to 100%.
	got := percentsOf(vars, []flagstore.RolloutVariation{{ID: "c", Rollout: []float64{0, third}},
		{ID: "a", Rollout: []float64{third, 2 * third}}, {ID: "b", Rollout: []float64{2 * third, 1}}})
	sum := 0
	for _, n := range got {
		sum += n
		if n != 3333 && n != 3334 {
			t.Errorf("thirds: got %v", got)
		}
	}
	if sum != 10000 {
		t.Errorf("thirds add up to %d: %v", sum, got)
	}
}

func TestServeRollout(t *testing.T) {
	t.Parallel()
	vars := []flagstore.Variation{{ID: "a", Name: "Blue"}, {ID: "b", Name: "Green"}}
	for _, tc := range []struct {
		name     string
		serve    serveForm
		field    string
		stored   []flagstore.RolloutVariation
		want     []flagstore.RolloutVariation
		problem  string
		dispatch string
	}{
		{name: "one variation", serve: serveForm{choice: "b"},
			want: []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, 1}, ExptRollout: 1}}},
		{name: "30/70", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "30", "b": "70"}},
			want: []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .3}, ExptRollout: 1}, {ID: "b", Rollout: []float64{.3, 1}, ExptRollout: 1}}},
		{name: "0% left out", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "0", "b": "100"}},
			want: []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, 1}, ExptRollout: 1}}},
		{name: "unchanged keeps stored ranges", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "50", "b": "50"}},
			stored: []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, .5}, ExptRollout: .2}, {ID: "a", Rollout: []float64{.5, 1}, ExptRollout: .4}},
			want:   []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, .5}, ExptRollout: .2}, {ID: "a", Rollout: []float64{.5, 1}, ExptRollout: .4}}},
		{name: "too little", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "30", "b": "60"}},
			problem: "The percentages add up to 90%; they must add up to 100%."},
		{name: "hundredths", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "12.34", "b": "87.66"}},
			want: []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .1234}, ExptRollout: 1}, {ID: "b", Rollout: []float64{.1234, 1}, ExptRollout: 1}}},
		{name: "one hundredth", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "0.01", "b": "99.99"}},
			want: []flagstore.RolloutVariation{{ID: "a", Rollout: []float64{0, .0001}, ExptRollout: 1}, {ID: "b", Rollout: []float64{.0001, 1}, ExptRollout: 1}}},
		{name: "a hundredth short", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "12.34", "b": "87.65"}},
			problem: "The percentages add up to 99.99%; they must add up to 100%."},
		{name: "three decimals", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "12.345", "b": "87.655"}},
			problem: "Blue: use at most two decimals, such as 12.34.", field: "a"},
		{name: "negative", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "30", "b": "-10"}},
			problem: "Green: enter a percentage from 0 to 100, such as 12.34.", field: "b"},
		{name: "over 100", serve: serveForm{choice: "rollout", percents: map[string]string{"a": "100.01", "b": "0"}},
			problem: "Blue: enter a percentage from 0 to 100.", field: "a"},
	} {
		s := tc.serve
		got, ok := s.rollout(vars, tc.stored)
		if ok != (tc.problem == "") || s.err != tc.problem || s.errField != tc.field {
			t.Errorf("%s: ok %v, problem %q on %q; want %q on %q", tc.name, ok, s.err, s.errField, tc.problem, tc.field)
			continue
		}
		if ok && !flagstore.SameJSON(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestEditRules(t *testing.T) {
	t.Parallel()
	vars := []flagstore.Variation{{ID: "a"}}
	rules := []ruleForm{{index: "0", id: "x", conds: []condForm{{index: "0"}, {index: "1"}}}, {index: "3", id: "y"}}
	ids := func(rs []ruleForm) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.id)
		}
		return out
	}
	edited := func(rs []ruleForm, edit string, vars []flagstore.Variation) []ruleForm {
		out, _, _ := editRules("targeting", rs, edit, vars)
		return out
	}
	if got := ids(edited(slices.Clone(rules), "rule-down.0", vars)); !slices.Equal(got, []string{"y", "x"}) {
		t.Errorf("down: %v", got)
	}
	if got := ids(edited(slices.Clone(rules), "rule-up.3", vars)); !slices.Equal(got, []string{"y", "x"}) {
		t.Errorf("up: %v", got)
	}
	if got := ids(edited(slices.Clone(rules), "rule-up.0", vars)); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("up at the top: %v", got)
	}
	if got := ids(edited(slices.Clone(rules), "remove-rule.3", vars)); !slices.Equal(got, []string{"x"}) {
		t.Errorf("remove: %v", got)
	}
	added := edited(slices.Clone(rules), "add-rule", vars)
	if len(added) != 3 || added[2].serve.choice != "a" || len(added[2].conds) != 1 {
		t.Errorf("add: %+v", added[2])
	}
	if got := edited(slices.Clone(rules), "remove-cond.0.1", vars); len(got[0].conds) != 1 || got[0].conds[0].index != "0" {
		t.Errorf("remove condition: %+v", got[0].conds)
	}
	if got := ids(edited(slices.Clone(rules), "remove-rule.9", vars)); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("unknown rule: %v", got)
	}
}

func TestLineDiff(t *testing.T) {
	t.Parallel()
	kinds := func(ls []views.DiffLine) string {
		var s string
		for _, l := range ls {
			s += map[string]string{"same": "=", "added": "+", "removed": "-", "skip": "~"}[l.Kind]
		}
		return s
	}
	for _, tc := range []struct {
		a, b []string
		want string
	}{
		{[]string{"a", "b", "c"}, []string{"a", "x", "c"}, "=-+="},
		{nil, []string{"a", "b"}, "++"},
		{[]string{"a", "b"}, nil, "--"},
		{[]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "x"}, "~==-+"},
		{[]string{"a", "1", "2", "3", "4", "5", "6", "7", "b"}, []string{"x", "1", "2", "3", "4", "5", "6", "7", "y"}, "-+==~==-+"},
	} {
		if got := kinds(lineDiff(tc.a, tc.b)); got != tc.want {
			t.Errorf("%v → %v: got %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFieldChanges(t *testing.T) {
	t.Parallel()
	prev := []byte(`{"name":"A","isEnabled":false,"revision":"1","tags":[],"variations":[{"id":"v1","name":"On","value":"true"}],"disabledVariationId":"v1"}`)
	cur := []byte(`{"name":"B","isEnabled":true,"revision":"2","tags":["x"],"variations":[{"id":"v1","name":"On","value":"true"}],"disabledVariationId":"v1"}`)
	got := fieldChanges(prev, cur)
	var fields []string
	for _, c := range got {
		fields = append(fields, c.Field)
	}
	if !slices.Equal(fields, []string{"Name", "Status", "Tags"}) {
		t.Fatalf("fields %v", fields)
	}
	if got[0].Old != "A" || got[0].New != "B" || got[1].Old != "Off" || got[1].New != "On" || len(got[2].Lines) != 4 {
		t.Errorf("changes %+v", got)
	}
	created := fieldChanges([]byte("null"), cur)
	if created[0].Old != "" || created[0].New != "B" {
		t.Errorf("creation shows %+v", created[0])
	}
}
