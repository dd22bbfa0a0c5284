package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// The admin's "test a user": the SDKs' engine, behind CanAccessEnv.
func TestEvaluateFlagForAUser(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	seg := decode[flagstore.Segment](t, s.do("POST", e.segs, s.owner, map[string]any{"name": "Seg", "key": "seg",
		"type": "environment-specific", "included": []string{"u-seg"}}).ok(t))
	// ft-rule serves false to China and the US, ft-seg to the segment's members.
	for key, condition := range map[string]map[string]any{
		"ft-rule": {"property": "country", "op": "IsOneOf", "value": `["cn","us"]`},
		"ft-seg":  {"property": targeting.SegmentIn, "op": "", "value": fmt.Sprintf(`[%q]`, seg.ID)},
	} {
		f := e.createFlag(map[string]any{"name": key, "key": key, "isEnabled": true})
		name := map[string]string{"ft-rule": "China and US", "ft-seg": "In segment"}[key]
		condition["id"] = uuid.NewString()
		s.do("PUT", e.flags+"/"+key+"/targeting", s.owner, map[string]any{"targeting": map[string]any{
			"targetUsers": []any{}, "fallthrough": f.Fallthrough, "exptIncludeAllTargets": true,
			"rules": []map[string]any{{"id": uuid.NewString(), "name": name, "dispatchKey": nil, "includedInExpt": true,
				"conditions": []map[string]any{condition},
				"variations": []map[string]any{{"id": f.Variations[1].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}}}}}).ok(t)
	}

	ev := decode[eval.Evaluation](t, s.do("POST", e.flags+"/ft-rule/evaluate", s.owner, map[string]any{"keyId": "u1",
		"customizedProperties": []map[string]string{{"name": "country", "value": "cn"}}}).ok(t))
	if ev.Variation == nil || ev.Variation.Value != "false" || ev.Kind != eval.MatchRule || ev.Reason != "China and US" {
		t.Errorf("got %+v, want false by the rule", ev)
	}
	ev = decode[eval.Evaluation](t, s.do("POST", e.flags+"/ft-seg/evaluate", s.owner, map[string]any{"keyId": "u-seg"}).ok(t))
	if ev.Variation == nil || ev.Variation.Value != "false" || ev.Reason != "In segment" {
		t.Errorf("segment member: %+v", ev)
	}
	if r := s.do("POST", e.flags+"/ft-rule/evaluate", s.owner, `{"name":"no key"}`); r.Status != http.StatusBadRequest ||
		!strings.Contains(r.raw, "keyId_is_required") {
		t.Errorf("no key: %d %s", r.Status, r.raw)
	}
	if r := s.do("POST", e.flags+"/nope/evaluate", s.owner, `{"keyId":"u1"}`); r.Status != http.StatusNotFound {
		t.Errorf("unknown flag: %d, want 404", r.Status)
	}
	if r := s.do("POST", e.flags+"/ft-rule/evaluate", "", `{"keyId":"u1"}`); r.Status != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", r.Status)
	}
}
