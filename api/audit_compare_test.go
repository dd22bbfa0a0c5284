package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
)

// instruction is FeatBit's Instruction as its UI reads it.
type instruction struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// asUIHoldsIt is what FeatBit's Save dialog posts of a flag or segment: the
// view as GET answered it, edited, with the UI's own originalData beside it
// (JSON.stringify of its FeatureFlag or Segment object).
func asUIHoldsIt(t *testing.T, view json.RawMessage, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal(view, &m))
	var original any
	must(t, json.Unmarshal(view, &original))
	edit(m)
	m["originalData"] = original
	out, err := json.Marshal(m)
	must(t, err)
	return string(out)
}

func compareBody(refType, previous, current string) map[string]any {
	return map[string]any{"refType": refType, "dataChange": map[string]string{"previous": previous, "current": current}}
}

func kinds(list []instruction) string {
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = in.Kind
	}
	return strings.Join(out, ",")
}

func TestCompareChangeAsFeatBitsSaveDialog(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	compare := "/api/v1/envs/" + e.env.ID.String() + "/audit-logs/compare"
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	flag := s.do("GET", e.flags+"/pay", s.owner, nil).ok(t).Data

	// The targeting page's edits: a user served the first variation, a
	// rule, and the flag turned on.
	var f struct {
		Variations []struct{ ID string } `json:"variations"`
	}
	must(t, json.Unmarshal(flag, &f))
	edited := asUIHoldsIt(t, flag, func(m map[string]any) {
		m["isEnabled"] = true
		m["targetUsers"] = []any{map[string]any{"variationId": f.Variations[0].ID, "keyIds": []string{"alice"}}}
		m["rules"] = []any{map[string]any{"id": "r1", "name": "Dutch", "dispatchKey": nil, "includedInExpt": true, "isNotPercentageRollout": true,
			"conditions": []any{map[string]any{"id": "c1", "property": "country", "op": "IsOneOf", "value": `["NL"]`, "multipleValue": []string{"NL"}, "type": "multi"}},
			"variations": []any{map[string]any{"id": f.Variations[0].ID, "rollout": []float64{0, 1}, "exptRollout": 1, "percentage": 100}}}}
	})
	got := decode[[]instruction](t, s.do("POST", compare, s.owner, compareBody("FeatureFlag", asUIHoldsIt(t, flag, func(map[string]any) {}), edited)).ok(t))
	if kinds(got) != "TurnFlagOn,SetTargetUsers,SetRules" {
		t.Fatalf("instructions %s, want TurnFlagOn, SetTargetUsers, SetRules", kinds(got))
	}
	var targets struct {
		KeyIDs      []string `json:"keyIds"`
		VariationID string   `json:"variationId"`
	}
	must(t, json.Unmarshal(got[1].Value, &targets))
	if targets.VariationID != f.Variations[0].ID || len(targets.KeyIDs) != 1 || targets.KeyIDs[0] != "alice" {
		t.Fatalf("SetTargetUsers value %s", got[1].Value)
	}
	if string(got[0].Value) != `""` {
		t.Fatalf("TurnFlagOn value %s, want \"\"", got[0].Value)
	}

	// Nothing edited: an empty list, which keeps FeatBit's Save disabled.
	same := s.do("POST", compare, s.owner, compareBody("FeatureFlag", string(flag), asUIHoldsIt(t, flag, func(map[string]any) {}))).ok(t)
	if string(same.Data) != "[]" {
		t.Fatalf("no change answered %s, want []", same.Data)
	}

	// A segment's included users.
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific", "included": []string{"alice"}})
	segment := s.do("GET", e.segs+"/"+sg.ID.String(), s.owner, nil).ok(t).Data
	got = decode[[]instruction](t, s.do("POST", compare, s.owner, compareBody("Segment", string(segment),
		asUIHoldsIt(t, segment, func(m map[string]any) { m["included"] = []string{"bob"} }))).ok(t))
	if kinds(got) != "AddTargetUsersToIncluded,RemoveTargetUsersFromIncluded" || string(got[0].Value) != `["bob"]` || string(got[1].Value) != `["alice"]` {
		t.Fatalf("segment instructions %+v", got)
	}

	// Bad input, each named.
	post := func(body any) *reply { return s.do("POST", compare, s.owner, body) }
	post(map[string]any{"dataChange": map[string]string{"previous": string(flag), "current": string(flag)}}).
		fails(t, http.StatusBadRequest, "refType_is_required")
	post(compareBody("Project", string(flag), string(flag))).fails(t, http.StatusBadRequest, "refType_is_invalid")
	post(map[string]any{"refType": "FeatureFlag"}).fails(t, http.StatusBadRequest, "dataChange_is_required")
	post(compareBody("FeatureFlag", "", string(flag))).fails(t, http.StatusBadRequest, "dataChange.previous_is_required")
	post(compareBody("FeatureFlag", string(flag), `{"name":`)).fails(t, http.StatusBadRequest, "dataChange.current_is_invalid")
	post(compareBody("FeatureFlag", `{"name":1,"variations":[],"fallthrough":{}}`, string(flag))).
		fails(t, http.StatusBadRequest, "dataChange.previous_is_invalid")
	// The other kind of thing than refType says.
	post(compareBody("FeatureFlag", string(segment), string(segment))).
		fails(t, http.StatusBadRequest, "dataChange.previous_is_invalid", "dataChange.current_is_invalid")
	post(compareBody("Segment", string(segment), string(flag))).fails(t, http.StatusBadRequest, "dataChange.current_is_invalid")
	// FeatBit's DataChange holds strings: a flag as an object is not one.
	post(map[string]any{"refType": "FeatureFlag", "dataChange": map[string]any{"previous": json.RawMessage(flag), "current": json.RawMessage(flag)}}).
		fails(t, http.StatusBadRequest, "body_is_invalid")
	post(`{"refType":"Segment","dataChange":`).fails(t, http.StatusBadRequest, "body_is_invalid")
	// Text that would cost far more than its size to decode (50,000 empty
	// rules) is refused by name, not decoded.
	costly := `{"name":"a","variations":[],"fallthrough":{},"rules":[` + strings.Repeat(`{},`, 50000) + `{}]}`
	post(compareBody("FeatureFlag", string(flag), costly)).fails(t, http.StatusBadRequest, "dataChange.current_is_invalid")
}

func TestCompareChangeNeedsTheEnvironment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	compare := "/api/v1/envs/" + e.env.ID.String() + "/audit-logs/compare"
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	flag := string(s.do("GET", e.flags+"/pay", s.owner, nil).ok(t).Data)
	body := compareBody("FeatureFlag", flag, flag)

	// A member without CanAccessEnv is refused before the body is read: a
	// malformed one is refused alike.
	nobody, _ := s.addMember("nobody@example.com")
	s.do("POST", compare, nobody, body).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", compare, nobody, `{"refType":`).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", compare, "", body).fails(t, http.StatusUnauthorized, "Unauthorized")

	// Another organization's environment, and one that does not exist, are not found.
	ctx := context.Background()
	other, err := s.q.CreateEnvironment(ctx, db.CreateEnvironmentParams{ID: uuid.New(), ProjectID: s.otherOrganization(), Name: "Prod", Key: "prod"})
	must(t, err)
	s.do("POST", "/api/v1/envs/"+other.ID.String()+"/audit-logs/compare", s.owner, body).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", "/api/v1/envs/"+uuid.NewString()+"/audit-logs/compare", s.owner, body).fails(t, http.StatusNotFound, "ResourceNotFound")
}

// TestAuditLogsCarryInstructions: FeatBit's history lists read every
// item's instructions (instructions.length), computed from its snapshots.
func TestAuditLogsCarryInstructions(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, map[string]string{"comment": "launch"}).ok(t)
	s.do("PUT", e.flags+"/pay/name", s.owner, map[string]string{"name": "Payments"}).ok(t)
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific", "included": []string{"alice"}})
	s.do("PUT", e.segs+"/"+sg.ID.String()+"/targeting", s.owner, map[string]any{"included": []string{"alice", "bob"}, "excluded": []string{"eve"}}).ok(t)
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"}).ok(t)

	type item struct {
		RefType      string        `json:"refType"`
		RefID        string        `json:"refId"`
		Operation    string        `json:"operation"`
		Instructions []instruction `json:"instructions"`
	}
	history := func(q string) []item {
		t.Helper()
		r := s.do("GET", "/api/v1/envs/"+e.env.ID.String()+"/audit-logs"+q, s.owner, nil).ok(t)
		var raw struct{ Items []map[string]json.RawMessage }
		must(t, json.Unmarshal(r.Data, &raw))
		for _, it := range raw.Items {
			if list, ok := it["instructions"]; !ok || list[0] != '[' {
				t.Fatalf("an audit-log item without an instructions list: %v", it)
			}
		}
		var page struct{ Items []item }
		must(t, json.Unmarshal(r.Data, &page))
		return page.Items
	}

	flagHistory := history("?refType=FeatureFlag&refId=" + f.ID.String())
	if len(flagHistory) != 3 {
		t.Fatalf("flag history has %d entries, want 3", len(flagHistory))
	}
	// Newest first: renamed, turned on, created (a creation has none).
	renamed, toggled, created := flagHistory[0], flagHistory[1], flagHistory[2]
	if kinds(renamed.Instructions) != "UpdateName" || string(renamed.Instructions[0].Value) != `"Payments"` {
		t.Fatalf("rename's instructions %+v", renamed.Instructions)
	}
	if kinds(toggled.Instructions) != "TurnFlagOn" {
		t.Fatalf("toggle's instructions %+v", toggled.Instructions)
	}
	if created.Operation != "Create" || len(created.Instructions) != 0 {
		t.Fatalf("creation's instructions %+v", created.Instructions)
	}

	segmentHistory := history("?refType=Segment&crossEnvironment=true&refId=" + sg.ID.String())
	if len(segmentHistory) != 2 || kinds(segmentHistory[0].Instructions) != "AddTargetUsersToIncluded,AddTargetUsersToExcluded" ||
		string(segmentHistory[0].Instructions[1].Value) != `["eve"]` {
		t.Fatalf("segment history %+v", segmentHistory)
	}

	// Every other kind of entry of the environment has an empty list.
	others := 0
	for _, it := range history("?pageSize=50") {
		if it.RefType != "FeatureFlag" && it.RefType != "Segment" {
			others++
			if len(it.Instructions) != 0 {
				t.Fatalf("%s entry with instructions %+v", it.RefType, it.Instructions)
			}
		}
	}
	if others == 0 {
		t.Fatal("the trigger's creation is not in the environment's history")
	}
}
