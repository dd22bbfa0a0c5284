package api_test

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// A refused flag or segment says, beside its unchanged error codes, which
// part is wrong and why: the regular expression compiler's message, "not a
// number", the JSON parser's complaint, the condition naming a segment that
// is not there.
func TestValidationDetailsPointAtTheField(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	on, off := f.Variations[0].ID, f.Variations[1].ID
	seg := decode[flagstore.Segment](t, s.do("POST", e.segs, s.owner, map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"}).ok(t))
	rule := func(conditions ...map[string]any) map[string]any {
		return map[string]any{"targeting": map[string]any{"targetUsers": []any{}, "rules": []any{
			map[string]any{"id": "r1", "name": "ok", "conditions": []any{map[string]any{"id": "c0", "property": "plan", "op": "Equal", "value": "pro"}},
				"variations": []any{map[string]any{"id": on, "rollout": []float64{0, 1}}}},
			map[string]any{"id": "r2", "name": "bad", "conditions": conditions,
				"variations": []any{map[string]any{"id": on, "rollout": []float64{0, 1}}}}},
			"fallthrough": map[string]any{"variations": []any{map[string]any{"id": off, "rollout": []float64{0, 1}}}}}}
	}
	cases := []struct {
		name, method, path string
		body               any
		code, where, why   string
	}{
		{"regex", "PUT", e.flags + "/pay/targeting", rule(map[string]any{"id": "c1", "property": "ua", "op": "MatchRegex", "value": "(unclosed"}),
			"rules_is_invalid", "rules[1].conditions[0].value", "missing closing )"},
		{"number", "PUT", e.flags + "/pay/targeting", rule(map[string]any{"id": "c1", "property": "age", "op": "LessThan", "value": "12abc"}),
			"rules_is_invalid", "rules[1].conditions[0].value", "not a number"},
		{"empty list", "PUT", e.flags + "/pay/targeting", rule(map[string]any{"id": "c1", "property": "country", "op": "IsOneOf", "value": "[]"}),
			"rules_is_invalid", "rules[1].conditions[0].value", "give at least one value"},
		{"unknown segment", "PUT", e.flags + "/pay/targeting", rule(map[string]any{"id": "c1", "property": targeting.SegmentIn,
			"value": `["00000000-0000-4000-8000-000000000001"]`}),
			"rules_is_invalid", "rules[1].conditions[0].value", "does not exist here"},
		{"rollout", "PUT", e.flags + "/pay/targeting", map[string]any{"targeting": map[string]any{"targetUsers": []any{}, "rules": []any{},
			"fallthrough": map[string]any{"variations": []any{map[string]any{"id": on, "rollout": []float64{0, 0.3}},
				map[string]any{"id": off, "rollout": []float64{0.3, 0.9}}}}}},
			"fallthrough_is_invalid", "fallthrough.variations", "add up to 100%"},
		{"twice targeted", "PUT", e.flags + "/pay/targeting", map[string]any{"targeting": map[string]any{"rules": []any{},
			"targetUsers": []any{map[string]any{"variationId": on, "keyIds": []string{"ann"}}, map[string]any{"variationId": off, "keyIds": []string{"bob", "ann"}}},
			"fallthrough": map[string]any{"variations": []any{map[string]any{"id": off, "rollout": []float64{0, 1}}}}}},
			"targetUsers_is_invalid", "targetUsers[1].keyIds[1]", "ann is targeted twice"},
		{"json value", "POST", e.flags, map[string]any{"name": "Theme", "key": "theme", "variationType": "json", "variations": []any{
			map[string]any{"id": "a", "name": "A", "value": `{"color": "red"}`}, map[string]any{"id": "b", "name": "B", "value": `{"color": "red",}`}}},
			"variations_is_invalid", "variations[1].value", "not valid JSON"},
		{"number value", "POST", e.flags, map[string]any{"name": "Limit", "key": "limit", "variationType": "number", "variations": []any{
			map[string]any{"id": "a", "name": "A", "value": "12abc"}}},
			"variations_is_invalid", "variations[0].value", "not a number"},
		{"name", "POST", e.flags, map[string]any{"name": strings.Repeat("n", 129), "key": "long"},
			"name_is_invalid", "name", ""},
		{"segment rule", "PUT", e.segs + "/" + seg.ID.String() + "/targeting", map[string]any{"rules": []any{map[string]any{"id": "s1", "name": "x",
			"conditions": []any{map[string]any{"id": "c1", "property": "age", "op": "BiggerThan", "value": "ten"}}}}},
			"rules_is_invalid", "rules[0].conditions[0].value", "not a number"},
	}

	for _, c := range cases {
		r := s.do(c.method, c.path, s.owner, c.body)
		r.fails(t, http.StatusBadRequest, c.code)
		if len(r.Details) != 1 || r.Details[0].Code != c.code || r.Details[0].Path != c.where || !strings.Contains(r.Details[0].Message, c.why) {
			t.Errorf("%s: details %+v, want %s at %s saying %q", c.name, r.Details, c.code, c.where, c.why)
		}
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.Revision != f.Revision {
		t.Error("a refused change altered the flag")
	}
}
