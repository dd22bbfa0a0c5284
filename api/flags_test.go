package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// envFixture is a project's Prod environment with its API paths.
type envFixture struct {
	s     *server
	env   core.Environment
	flags string // /api/v1/envs/{id}/feature-flags
	segs  string // /api/v1/envs/{id}/segments
}

func (s *server) prodEnv() envFixture {
	s.t.Helper()
	env := s.createProject("Web", "web").Environments[0]
	base := "/api/v1/envs/" + env.ID.String()
	return envFixture{s: s, env: env, flags: base + "/feature-flags", segs: base + "/segments"}
}

func (f envFixture) createFlag(body map[string]any) flagstore.Flag {
	f.s.t.Helper()
	return decode[flagstore.Flag](f.s.t, f.s.do("POST", f.flags, f.s.owner, body).ok(f.s.t))
}

func TestCreateFlagDefaults(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Checkout v2", "key": "checkout-v2"})
	if f.VariationType != "boolean" || len(f.Variations) != 2 || f.IsEnabled || !f.ExptIncludeAllTargets || f.IsArchived {
		t.Fatalf("defaults: %+v", f)
	}
	if f.Variations[0].Name != "True" || f.Variations[0].Value != "true" || f.Variations[1].Name != "False" || f.Variations[1].Value != "false" {
		t.Fatalf("variations %+v, want True/true and False/false", f.Variations)
	}
	if f.DisabledVariationID != f.Variations[1].ID {
		t.Errorf("off variation %s, want the second", f.DisabledVariationID)
	}
	ft := f.Fallthrough
	if ft.DispatchKey != nil || !ft.IncludedInExpt || len(ft.Variations) != 1 || ft.Variations[0].ID != f.Variations[0].ID ||
		!slices.Equal(ft.Variations[0].Rollout, []float64{0, 1}) || ft.Variations[0].ExptRollout != 1 {
		t.Errorf("fallthrough %+v, want the first variation for everyone", ft)
	}
	if f.Revision == uuid.Nil || f.CreatorID == uuid.Nil || f.CreatorID != f.UpdatorID || f.EnvID != e.env.ID ||
		len(f.TargetUsers) != 0 || len(f.Rules) != 0 || f.Tags == nil {
		t.Errorf("created %+v", f)
	}
	// The raw JSON has the field names of the specification.
	raw := string(s.do("GET", e.flags+"/checkout-v2", s.owner, nil).ok(t).Data)
	for _, field := range []string{`"dispatchKey":null`, `"disabledVariationId"`, `"exptIncludeAllTargets":true`, `"targetUsers":[]`, `"updatorId"`} {
		if !strings.Contains(raw, field) {
			t.Errorf("flag JSON lacks %s: %s", field, raw)
		}
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'FeatureFlag' AND operation = 'Create' AND env_id = $1`, e.env.ID); n != 1 {
		t.Errorf("%d audit entries for the creation, want 1", n)
	}
	if n := s.count(`SELECT count(*) FROM flag_revisions WHERE flag_id = $1`, f.ID); n != 1 {
		t.Errorf("%d revisions stored, want 1", n)
	}
}

func TestCreateFlagFull(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Theme", "key": "theme", "description": "colours", "variationType": "string",
		"variations":         []map[string]string{{"id": "a", "name": "Light", "value": "light"}, {"id": "b", "name": "Dark", "value": "dark"}, {"id": "c", "name": "Auto", "value": "auto"}},
		"enabledVariationId": "c", "disabledVariationId": "a", "isEnabled": true, "tags": []string{"ui", "beta"}})
	if f.VariationType != "string" || len(f.Variations) != 3 || !f.IsEnabled || f.DisabledVariationID != "a" ||
		f.Fallthrough.Variations[0].ID != "c" || !slices.Equal(f.Tags, []string{"ui", "beta"}) || f.Description != "colours" {
		t.Fatalf("created %+v", f)
	}
	numberFlag := e.createFlag(map[string]any{"name": "Limit", "key": "limit", "variationType": "number"})
	if numberFlag.Variations[0].Value != "1" || numberFlag.Variations[1].Value != "2" {
		t.Errorf("number defaults %+v", numberFlag.Variations)
	}

	post := func(body map[string]any) *reply { return s.do("POST", e.flags, s.owner, body) }
	post(map[string]any{}).fails(t, http.StatusBadRequest, "name_is_required", "key_is_required")
	post(map[string]any{"name": "x", "key": "Theme"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	post(map[string]any{"name": "x", "key": "x", "variationType": "color"}).fails(t, http.StatusBadRequest, "variationType_is_invalid", "variations_is_invalid")
	for typ, value := range map[string]string{"boolean": "yes", "number": "ten", "json": "{nope", "string": "  "} {
		post(map[string]any{"name": "x", "key": "x-" + typ, "variationType": typ,
			"variations": []map[string]string{{"id": "1", "name": "One", "value": value}}}).fails(t, http.StatusBadRequest, "variations_is_invalid")
	}
	post(map[string]any{"name": "x", "key": "dup", "variationType": "string",
		"variations": []map[string]string{{"id": "1", "name": "A", "value": "a"}, {"id": "1", "name": "B", "value": "b"}}}).
		fails(t, http.StatusBadRequest, "variations_is_invalid")
	post(map[string]any{"name": "x", "key": "off", "disabledVariationId": "nope"}).fails(t, http.StatusBadRequest, "disabledVariationId_is_invalid")
	post(map[string]any{"name": "x", "key": "on", "enabledVariationId": "nope"}).fails(t, http.StatusBadRequest, "fallthrough_is_invalid")
	post(map[string]any{"name": "x", "key": "tags", "tags": []string{"a:b"}}).fails(t, http.StatusBadRequest, "tags_is_invalid")
	s.do("POST", "/api/v1/envs/"+uuid.NewString()+"/feature-flags", s.owner, map[string]any{"name": "x", "key": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM feature_flags`); n != 2 {
		t.Errorf("%d flags stored, want the 2 valid ones", n)
	}
}

func TestGetFlagByExactKey(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Checkout", "key": "Checkout"})
	s.do("GET", e.flags+"/Checkout", s.owner, nil).ok(t)
	s.do("GET", e.flags+"/checkout", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("GET", "/api/v1/envs/not-a-uuid/feature-flags/Checkout", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	other := s.prodEnvOf("Other", "other")
	s.do("GET", other.flags+"/Checkout", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}

func (s *server) prodEnvOf(name, key string) envFixture {
	s.t.Helper()
	env := s.createProject(name, key).Environments[0]
	base := "/api/v1/envs/" + env.ID.String()
	return envFixture{s: s, env: env, flags: base + "/feature-flags", segs: base + "/segments"}
}

func TestFlagDescriptionRevisions(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	path := e.flags + "/pay/description"

	rev := decode[uuid.UUID](t, s.do("PUT", path, s.owner, map[string]any{"description": "new checkout", "comment": "why", "revision": f.Revision}).ok(t))
	if rev == f.Revision || rev == uuid.Nil {
		t.Fatalf("new revision %v, want a fresh one", rev)
	}
	same := decode[uuid.UUID](t, s.do("PUT", path, s.owner, map[string]any{"description": "new checkout"}).ok(t))
	if same != rev {
		t.Fatalf("unchanged description answered %v, want the current revision %v", same, rev)
	}
	s.do("PUT", path, s.owner, map[string]any{"description": "stale", "revision": f.Revision}).fails(t, http.StatusConflict, "Conflict")
	got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if got.Description != "new checkout" || got.Revision != rev {
		t.Fatalf("stored %q at %v", got.Description, got.Revision)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update' AND comment = 'why'`, f.ID.String()); n != 1 {
		t.Errorf("%d update audit entries with the comment, want exactly 1 (unchanged and refused changes record nothing)", n)
	}
	revs := decode[core.Paged[flagstore.FlagRevision]](t, s.do("GET", e.flags+"/pay/revisions", s.owner, nil).ok(t))
	if revs.TotalCount != 2 || revs.Items[0].Revision != rev || revs.Items[0].Comment != "why" {
		t.Fatalf("revisions %+v, want 2 with the newest first", revs)
	}
	s.do("PUT", path, s.owner, map[string]any{"description": strings.Repeat("d", 513)}).fails(t, http.StatusBadRequest, "description_is_invalid")
	s.do("PUT", path, s.owner, map[string]any{"description": "x", "comment": strings.Repeat("c", 513)}).fails(t, http.StatusBadRequest, "comment_is_invalid")
	s.do("PUT", e.flags+"/missing/description", s.owner, map[string]any{"description": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
}

func TestConcurrentUpdatesWithOneRevision(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Race", "key": "race"})
	const writers = 12
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.do("PUT", e.flags+"/race/description", s.owner, map[string]any{"description": fmt.Sprintf("writer %d", i), "revision": f.Revision})
			statuses[i] = r.Status
		}()
	}
	wg.Wait()
	won := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("a writer got %d, want 200 or 409", st)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won with the same revision, want exactly 1 (%v)", won, statuses)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update'`, f.ID.String()); n != 1 {
		t.Fatalf("%d update audit entries, want 1", n)
	}

	// Without a revision every writer succeeds in turn and none is lost.
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.do("PUT", e.flags+"/race/tags", s.owner, map[string]any{"tags": []string{fmt.Sprintf("t%d", i)}}).ok(t)
		}()
	}
	wg.Wait()
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update'`, f.ID.String()); n != 1+writers {
		t.Fatalf("%d update audit entries, want %d", n, 1+writers)
	}
}

func TestToggleArchiveRestoreDelete(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Beta", "key": "beta"})
	rev := decode[uuid.UUID](t, s.do("PUT", e.flags+"/beta/toggle/true", s.owner, map[string]string{"comment": "launch"}).ok(t))
	on := decode[flagstore.Flag](t, s.do("GET", e.flags+"/beta", s.owner, nil).ok(t))
	if !on.IsEnabled || on.Revision == f.Revision || rev != on.Revision {
		t.Fatalf("toggled on: %+v, answered revision %s", on, rev)
	}
	s.do("PUT", e.flags+"/beta/toggle/maybe", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	s.do("DELETE", e.flags+"/beta", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "CannotDeleteUnarchivedFeatureFlag")
	if !decode[bool](t, s.do("PUT", e.flags+"/beta/archive", s.owner, nil).ok(t)) {
		t.Fatal("archive answered false")
	}
	if archived := decode[flagstore.Flag](t, s.do("GET", e.flags+"/beta", s.owner, nil).ok(t)); !archived.IsArchived {
		t.Fatal("archive did not archive")
	}
	list := decode[core.Paged[flagstore.FlagListItem]](t, s.do("GET", e.flags, s.owner, nil).ok(t))
	if list.TotalCount != 0 {
		t.Fatalf("archived flag listed by default: %+v", list)
	}
	list = decode[core.Paged[flagstore.FlagListItem]](t, s.do("GET", e.flags+"?isArchived=true", s.owner, nil).ok(t))
	if list.TotalCount != 1 {
		t.Fatalf("archived view shows %d, want 1", list.TotalCount)
	}
	s.do("PUT", e.flags+"/beta/restore", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/beta/archive", s.owner, nil).ok(t)
	s.do("DELETE", e.flags+"/beta", s.owner, map[string]string{"comment": "cleanup"}).ok(t)
	s.do("GET", e.flags+"/beta", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	ops := []string{}
	rows, _ := s.pool.Query(t.Context(), `SELECT operation FROM audit_logs WHERE ref_id = $1 ORDER BY created_at`, f.ID.String())
	for rows.Next() {
		var op string
		rows.Scan(&op)
		ops = append(ops, op)
	}
	if want := []string{"Create", "Update", "Archive", "Restore", "Archive", "Remove"}; !slices.Equal(ops, want) {
		t.Fatalf("history %v, want %v", ops, want)
	}
	if n := s.count(`SELECT count(*) FROM flag_revisions WHERE flag_id = $1`, f.ID); n != 0 {
		t.Errorf("%d revisions left after deletion", n)
	}
}

func TestFlagSettings(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Theme", "key": "theme", "variationType": "string"})
	get := func() flagstore.Flag {
		return decode[flagstore.Flag](t, s.do("GET", e.flags+"/theme", s.owner, nil).ok(t))
	}
	if rev := decode[uuid.UUID](t, s.do("PUT", e.flags+"/theme/name", s.owner, map[string]string{"name": "Colour theme"}).ok(t)); get().Name != "Colour theme" || get().Revision != rev {
		t.Fatalf("renamed to %q", get().Name)
	}
	s.do("PUT", e.flags+"/theme/name", s.owner, map[string]string{"name": ""}).fails(t, http.StatusBadRequest, "name_is_required")
	if done := decode[bool](t, s.do("PUT", e.flags+"/theme/tags", s.owner, map[string]any{"tags": []string{"ui"}}).ok(t)); !done || !slices.Equal(get().Tags, []string{"ui"}) {
		t.Fatalf("tags %v", get().Tags)
	}
	s.do("PUT", e.flags+"/theme/tags", s.owner, map[string]any{"tags": []string{"ui", "ui"}}).fails(t, http.StatusBadRequest, "tags_is_invalid")

	vars := append(f.Variations, flagstore.Variation{ID: "c", Name: "Variation C", Value: "variation-c"})
	if rev := decode[uuid.UUID](t, s.do("PUT", e.flags+"/theme/variations", s.owner, map[string]any{"variations": vars}).ok(t)); len(get().Variations) != 3 || get().Revision != rev {
		t.Fatalf("variations %+v", get().Variations)
	}
	// The default rule serves the first variation: it cannot be removed while used.
	s.do("PUT", e.flags+"/theme/variations", s.owner, map[string]any{"variations": vars[1:]}).fails(t, http.StatusBadRequest, "fallthrough_is_invalid")
	s.do("PUT", e.flags+"/theme/variations", s.owner, map[string]any{"variationType": "number", "variations": vars}).fails(t, http.StatusBadRequest, "variations_is_invalid")

	if rev := decode[uuid.UUID](t, s.do("PUT", e.flags+"/theme/off-variation", s.owner, map[string]string{"offVariationId": "c"}).ok(t)); get().DisabledVariationID != "c" || get().Revision != rev {
		t.Fatalf("off variation %s", get().DisabledVariationID)
	}
	s.do("PUT", e.flags+"/theme/off-variation", s.owner, map[string]string{"offVariationId": "zzz"}).fails(t, http.StatusBadRequest, "disabledVariationId_is_invalid")

	tags := decode[[]string](t, s.do("GET", e.flags+"/all-tags", s.owner, nil).ok(t))
	if !slices.Equal(tags, []string{"ui"}) {
		t.Errorf("all tags %v", tags)
	}
	if used := decode[bool](t, s.do("GET", e.flags+"/is-key-used?key=THEME", s.owner, nil).ok(t)); !used {
		t.Error("is-key-used THEME = false, want true (keys are unique case-insensitively)")
	}
	if used := decode[bool](t, s.do("GET", e.flags+"/is-key-used?key=other", s.owner, nil).ok(t)); used {
		t.Error("is-key-used other = true")
	}
}

// targetingOf is a valid targeting for a boolean flag: the targeting member of
// FeatBit's body (see put).
func targetingOf(f flagstore.Flag, segmentIDs ...uuid.UUID) map[string]any {
	conditions := []map[string]string{{"id": "c1", "property": "country", "op": "IsOneOf", "value": `["NL","BE"]`}}
	if len(segmentIDs) > 0 {
		ids, _ := json.Marshal(segmentIDs)
		conditions = append(conditions, map[string]string{"id": "c2", "property": targeting.SegmentIn, "op": "", "value": string(ids)})
	}
	return map[string]any{
		"targetUsers": []map[string]any{{"keyIds": []string{"alice"}, "variationId": f.Variations[0].ID}},
		"rules": []map[string]any{{"id": "r1", "name": "Benelux", "dispatchKey": "keyId", "includedInExpt": false, "conditions": conditions,
			"variations": []map[string]any{
				{"id": f.Variations[0].ID, "rollout": []float64{0, 0.3}, "exptRollout": 1},
				{"id": f.Variations[1].ID, "rollout": []float64{0.3, 1}, "exptRollout": 1}}}},
		"fallthrough":           map[string]any{"dispatchKey": nil, "includedInExpt": true, "variations": []map[string]any{{"id": f.Variations[1].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}},
		"exptIncludeAllTargets": false,
	}
}

// put is FeatBit's body of a targeting change: {targeting, revision?, comment?}.
func put(targeting map[string]any) map[string]any { return map[string]any{"targeting": targeting} }

func TestFlagTargeting(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	rev := decode[uuid.UUID](t, s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f))).ok(t))
	got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if got.Revision != rev {
		t.Fatalf("answered revision %s, the flag has %s", rev, got.Revision)
	}
	if len(got.TargetUsers) != 1 || len(got.Rules) != 1 || got.Rules[0].Variations[1].Rollout[0] != 0.3 || got.ExptIncludeAllTargets ||
		got.Fallthrough.Variations[0].ID != f.Variations[1].ID {
		t.Fatalf("targeting stored as %+v", got)
	}

	bad := func(mutate func(map[string]any)) *reply {
		body := targetingOf(f)
		mutate(body)
		return s.do("PUT", e.flags+"/pay/targeting", s.owner, put(body))
	}
	rule := func(body map[string]any) map[string]any { return body["rules"].([]map[string]any)[0] }
	cond := func(body map[string]any) map[string]string { return rule(body)["conditions"].([]map[string]string)[0] }
	cases := map[string]struct {
		mutate func(map[string]any)
		code   string
	}{
		"unknown target variation": {func(b map[string]any) { b["targetUsers"].([]map[string]any)[0]["variationId"] = "nope" }, "targetUsers_is_invalid"},
		"user targeted twice": {func(b map[string]any) {
			b["targetUsers"] = []map[string]any{{"keyIds": []string{"bob"}, "variationId": f.Variations[0].ID}, {"keyIds": []string{"bob"}, "variationId": f.Variations[1].ID}}
		}, "targetUsers_is_invalid"},
		"rollout gap": {func(b map[string]any) {
			rule(b)["variations"].([]map[string]any)[1]["rollout"] = []float64{0.4, 1}
		}, "rules_is_invalid"},
		"rollout overlap": {func(b map[string]any) {
			rule(b)["variations"].([]map[string]any)[1]["rollout"] = []float64{0.2, 1}
		}, "rules_is_invalid"},
		"rollout short of 1": {func(b map[string]any) {
			rule(b)["variations"].([]map[string]any)[1]["rollout"] = []float64{0.3, 0.9}
		}, "rules_is_invalid"},
		"rollout outside [0,1]": {func(b map[string]any) {
			b["fallthrough"].(map[string]any)["variations"] = []map[string]any{{"id": f.Variations[1].ID, "rollout": []float64{-0.5, 1}, "exptRollout": 1}}
		}, "fallthrough_is_invalid"},
		"unknown rollout variation": {func(b map[string]any) { rule(b)["variations"].([]map[string]any)[0]["id"] = "nope" }, "rules_is_invalid"},
		"unknown operator":          {func(b map[string]any) { cond(b)["op"] = "Resembles" }, "rules_is_invalid"},
		"bad regex":                 {func(b map[string]any) { cond(b)["op"], cond(b)["value"] = "MatchRegex", "([a-z" }, "rules_is_invalid"},
		"IsOneOf not an array":      {func(b map[string]any) { cond(b)["value"] = "NL,BE" }, "rules_is_invalid"},
		"numeric op not a number":   {func(b map[string]any) { cond(b)["op"], cond(b)["value"] = "BiggerThan", "ten" }, "rules_is_invalid"},
		"unknown segment": {func(b map[string]any) {
			cond(b)["property"], cond(b)["value"] = targeting.SegmentIn, `["`+uuid.NewString()+`"]`
		}, "rules_is_invalid"},
		"segment value not ids":   {func(b map[string]any) { cond(b)["property"], cond(b)["value"] = targeting.SegmentNotIn, `["x"]` }, "rules_is_invalid"},
		"rule without conditions": {func(b map[string]any) { rule(b)["conditions"] = []map[string]string{} }, "rules_is_invalid"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { bad(tc.mutate).fails(t, http.StatusBadRequest, tc.code) })
	}
	after := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if after.Revision != got.Revision {
		t.Fatal("a refused targeting change altered the flag")
	}
	for _, op := range flagstore.Operators() {
		body := targetingOf(f)
		value := map[string]string{"IsOneOf": `["a"]`, "NotOneOf": `["a"]`, "LessThan": "1", "BiggerThan": "1", "LessEqualThan": "1",
			"BiggerEqualThan": "1", "MatchRegex": "^a+$", "NotMatchRegex": "^a+$"}[op]
		if value == "" {
			value = "a"
		}
		cond(body)["op"], cond(body)["value"] = op, value
		s.do("PUT", e.flags+"/pay/targeting", s.owner, put(body)).ok(t)
	}
}

func TestFlagListFiltersAndServes(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	a := e.createFlag(map[string]any{"name": "Checkout redesign", "key": "checkout-redesign", "tags": []string{"ui", "web"}})
	e.createFlag(map[string]any{"name": "Search", "key": "search-v2", "tags": []string{"ui"}, "isEnabled": true})
	e.createFlag(map[string]any{"name": "Payments", "key": "pay", "tags": []string{"backend"}})
	s.do("PUT", e.flags+"/checkout-redesign/description", s.owner, map[string]string{"description": "d", "comment": "first draft"}).ok(t)

	list := func(query string) core.Paged[flagstore.FlagListItem] {
		t.Helper()
		return decode[core.Paged[flagstore.FlagListItem]](t, s.do("GET", e.flags+query, s.owner, nil).ok(t))
	}
	keys := func(p core.Paged[flagstore.FlagListItem]) []string {
		var k []string
		for _, it := range p.Items {
			k = append(k, it.Key)
		}
		return k
	}
	if got := keys(list("")); !slices.Equal(got, []string{"pay", "search-v2", "checkout-redesign"}) {
		t.Errorf("default order %v, want newest first", got)
	}
	if got := keys(list("?sortBy=key")); !slices.Equal(got, []string{"checkout-redesign", "pay", "search-v2"}) {
		t.Errorf("by key %v", got)
	}
	if got := keys(list("?name=CHECK")); !slices.Equal(got, []string{"checkout-redesign"}) {
		t.Errorf("name search %v", got)
	}
	if got := keys(list("?name=v2")); !slices.Equal(got, []string{"search-v2"}) {
		t.Errorf("search by part of a key %v", got)
	}
	if got := keys(list("?tags=ui&tags=web")); !slices.Equal(got, []string{"checkout-redesign"}) {
		t.Errorf("tags ui+web %v", got)
	}
	// Every item says its lifecycle stage: all three are new; a stage
	// keeps its flags, and an unknown one is named.
	for _, it := range list("").Items {
		if it.Stage != flagstore.StageNew {
			t.Errorf("%s: stage %q, want new", it.Key, it.Stage)
		}
	}
	if got := keys(list("?stage=new&sortBy=key")); !slices.Equal(got, []string{"checkout-redesign", "pay", "search-v2"}) {
		t.Errorf("stage=new %v", got)
	}
	if got := keys(list("?stage=launched")); len(got) != 0 {
		t.Errorf("stage=launched %v, want none", got)
	}
	s.do("GET", e.flags+"?stage=stale", s.owner, nil).fails(t, http.StatusBadRequest, "stage_is_invalid")
	if got := keys(list("?isEnabled=true")); !slices.Equal(got, []string{"search-v2"}) {
		t.Errorf("enabled %v", got)
	}
	page := list("?sortBy=key&PageIndex=1&PageSize=2")
	if page.TotalCount != 3 || !slices.Equal(keys(page), []string{"search-v2"}) {
		t.Errorf("page 2 of 2: %+v", page)
	}
	item := list("?name=checkout").Items[0]
	if item.ID != a.ID || item.LastChange == nil || item.LastChange.Comment != "first draft" {
		t.Errorf("last change %+v, want the comment", item.LastChange)
	}
	if !slices.Equal(item.Serves.EnabledVariations, []string{"true"}) || item.Serves.DisabledVariation != "false" {
		t.Errorf("serves %+v", item.Serves)
	}
	if got := keys(list("?sortBy=name&sortOrder=desc")); !slices.Equal(got, []string{"search-v2", "pay", "checkout-redesign"}) {
		t.Errorf("by name, Z to A: %v", got)
	}
	if got := keys(list("?sortBy=created_at&sortOrder=asc")); !slices.Equal(got, []string{"checkout-redesign", "search-v2", "pay"}) {
		t.Errorf("oldest first: %v", got)
	}
	s.do("GET", e.flags+"?sortBy=evaluations", s.owner, nil).fails(t, http.StatusBadRequest, "sortBy_is_invalid")
	s.do("GET", e.flags+"?sortBy=name&sortOrder=up", s.owner, nil).fails(t, http.StatusBadRequest, "sortOrder_is_invalid")
	s.do("GET", e.flags+"?isEnabled=perhaps", s.owner, nil).fails(t, http.StatusBadRequest, "isEnabled_is_invalid")
	s.do("GET", e.flags+"?pageSize=0", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
	if got := list("?name=%25"); got.TotalCount != 0 {
		t.Errorf("a %% search matched %d flags; it must be literal", got.TotalCount)
	}
}

func TestCloneAndPatchFlag(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay", "tags": []string{"backend"}})
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f))).ok(t)

	if !decode[bool](t, s.do("POST", e.flags+"/clone/pay", s.owner, map[string]string{"name": "Pay copy", "key": "pay-copy"}).ok(t)) {
		t.Fatal("clone answered false")
	}
	clone := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay-copy", s.owner, nil).ok(t))
	if clone.ID == f.ID || clone.Key != "pay-copy" || len(clone.Rules) != 1 || !slices.Equal(clone.Tags, []string{"backend"}) {
		t.Fatalf("clone %+v", clone)
	}
	s.do("POST", e.flags+"/clone/pay", s.owner, map[string]string{"name": "Again", "key": "pay-copy"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	s.do("POST", e.flags+"/clone/nope", s.owner, map[string]string{"name": "x", "key": "y"}).fails(t, http.StatusNotFound, "ResourceNotFound")

	patch := func(ops string) *reply { return s.do("PATCH", e.flags+"/pay", s.owner, ops) }
	if !decode[bool](t, patch(`[{"op":"replace","path":"/name","value":"Payments"},{"op":"add","path":"/tags/-","value":"money"},{"op":"replace","path":"/isEnabled","value":true}]`).ok(t)) {
		t.Fatal("patch answered false")
	}
	patched := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if patched.Name != "Payments" || !slices.Equal(patched.Tags, []string{"backend", "money"}) || !patched.IsEnabled {
		t.Fatalf("patched %+v", patched)
	}
	before := patched.Revision
	for name, ops := range map[string]string{
		"read-only id":     `[{"op":"replace","path":"/id","value":"` + uuid.NewString() + `"}]`,
		"read-only key":    `[{"op":"replace","path":"/key","value":"other"}]`,
		"unknown member":   `[{"op":"add","path":"/color","value":"red"}]`,
		"bad op":           `[{"op":"merge","path":"/name","value":"x"}]`,
		"failed test":      `[{"op":"test","path":"/name","value":"Pay"},{"op":"replace","path":"/name","value":"x"}]`,
		"missing path":     `[{"op":"remove","path":"/rules/5"}]`,
		"not an array":     `{"op":"replace"}`,
		"wrong value type": `[{"op":"replace","path":"/name","value":42}]`,
	} {
		t.Run(name, func(t *testing.T) {
			r := patch(ops)
			if r.Status != http.StatusBadRequest || len(r.Errors) < 2 || r.Errors[0] != "patch_is_invalid" {
				t.Fatalf("got %d %v, want 400 patch_is_invalid with a detail", r.Status, r.Errors)
			}
		})
	}
	// A patch whose result is invalid names the problem, and changes nothing.
	r := patch(`[{"op":"replace","path":"/name","value":"ok"},{"op":"replace","path":"/disabledVariationId","value":"nope"}]`)
	r.fails(t, http.StatusBadRequest, "patch_is_invalid", "disabledVariationId_is_invalid")
	// A test on the revision makes a patch conditional: f.Revision is stale by now.
	stale := patch(`[{"op":"test","path":"/revision","value":"` + f.Revision.String() + `"},{"op":"replace","path":"/name","value":"x"}]`)
	if stale.Status != http.StatusBadRequest || stale.Errors[0] != "patch_is_invalid" {
		t.Fatalf("patch testing a stale revision: %d %v, want 400 patch_is_invalid", stale.Status, stale.Errors)
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.Revision != before || got.Name != "Payments" {
		t.Fatalf("refused patches changed the flag: %+v", got)
	}
}

func TestRequireChangeComment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", "/api/v1/projects/"+e.env.ProjectID.String()+"/envs/"+e.env.ID.String(), s.owner,
		map[string]any{"name": "Prod", "settings": map[string]bool{"requireChangeComment": true}}).ok(t)
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, nil).fails(t, http.StatusBadRequest, "comment_is_required")
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, map[string]string{"comment": "  "}).fails(t, http.StatusBadRequest, "comment_is_required")
	s.do("POST", e.flags, s.owner, map[string]any{"name": "New", "key": "new"}).fails(t, http.StatusBadRequest, "comment_is_required")
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, map[string]string{"comment": "go live"}).ok(t)
	s.do("POST", e.segs, s.owner, map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"}).fails(t, http.StatusBadRequest, "comment_is_required")
}

func TestFlagPermissionsFollowWhatChanges(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay", "tags": []string{"team-a"}})
	e.createFlag(map[string]any{"name": "Other", "key": "other", "tags": []string{"team-b"}})
	// A service token may read everything but change only individual targets, and only of team-a's flags.
	statements := []access.Statement{
		{ID: "1", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/*:env/*"}},
		{ID: "2", ResourceType: "flag", Effect: "allow", Actions: []string{"UpdateFlagIndividualTargeting"}, Resources: []string{"project/web:env/prod:flag/*;team-a"}},
	}
	tok := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "targeter", "type": "Service", "permissions": statements}).ok(t)).Token

	tg := f.Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: []string{"carol"}, VariationID: f.Variations[0].ID}}
	users := map[string]any{"targeting": tg}
	s.do("PUT", e.flags+"/pay/targeting", tok, users).ok(t)
	s.do("PUT", e.flags+"/other/targeting", tok, users).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", e.flags+"/pay/targeting", tok, put(targetingOf(f))).fails(t, http.StatusForbidden, "Forbidden") // also rules and default rule
	s.do("PUT", e.flags+"/pay/toggle/true", tok, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PATCH", e.flags+"/pay", tok, `[{"op":"replace","path":"/targetUsers/0/keyIds","value":["dave"]}]`).ok(t)
	s.do("PATCH", e.flags+"/pay", tok, `[{"op":"replace","path":"/name","value":"mine"}]`).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", e.flags+"/pay", tok, nil).ok(t)
	s.do("POST", e.flags, tok, map[string]any{"name": "x", "key": "x"}).fails(t, http.StatusForbidden, "Forbidden")

	// Changing tags is checked on the flag before and after: nobody moves a flag out of their reach.
	tagger := []access.Statement{
		{ID: "1", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"*"}},
		{ID: "2", ResourceType: "flag", Effect: "allow", Actions: []string{"UpdateFlagTags"}, Resources: []string{"project/*:env/*:flag/*;team-a"}},
	}
	tagTok := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "tagger", "type": "Service", "permissions": tagger}).ok(t)).Token
	s.do("PUT", e.flags+"/pay/tags", tagTok, map[string]any{"tags": []string{"team-a", "extra"}}).ok(t)
	s.do("PUT", e.flags+"/pay/tags", tagTok, map[string]any{"tags": []string{"team-b"}}).fails(t, http.StatusForbidden, "Forbidden")
}

func TestAuditLogList(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, map[string]string{"comment": "launch day"}).ok(t)
	sg := decode[flagstore.Segment](t, s.do("POST", e.segs, s.owner, map[string]any{"name": "Beta users", "key": "beta", "type": "environment-specific"}).ok(t))

	list := func(q string) core.Paged[flagstore.AuditEntry] {
		t.Helper()
		return decode[core.Paged[flagstore.AuditEntry]](t, s.do("GET", "/api/v1/envs/"+e.env.ID.String()+"/audit-logs"+q, s.owner, nil).ok(t))
	}
	all := list("")
	if all.TotalCount != 3 || all.Items[0].RefType != "Segment" || all.Items[0].RefID != sg.ID.String() {
		t.Fatalf("history %+v, want 3 entries newest first", all)
	}
	if all.Items[1].CreatorEmail != ownerEmail || all.Items[1].Comment != "launch day" || string(all.Items[1].DataChange.Previous) == "null" {
		t.Fatalf("toggle entry %+v", all.Items[1])
	}
	if got := list("?refType=FeatureFlag"); got.TotalCount != 2 {
		t.Errorf("refType filter: %d", got.TotalCount)
	}
	if got := list("?refId=" + f.ID.String()); got.TotalCount != 2 {
		t.Errorf("refId filter: %d", got.TotalCount)
	}
	if got := list("?query=LAUNCH"); got.TotalCount != 1 {
		t.Errorf("query on the comment: %d", got.TotalCount)
	}
	if got := list("?query=beta"); got.TotalCount != 1 {
		t.Errorf("query on the keyword: %d", got.TotalCount)
	}
	if got := list("?PageSize=1&PageIndex=2"); len(got.Items) != 1 || got.Items[0].Operation != "Create" || got.Items[0].RefType != "FeatureFlag" {
		t.Errorf("last page %+v", got.Items)
	}
	if got := list("?from=2999-01-01T00:00:00Z"); got.TotalCount != 0 {
		t.Errorf("from in the future: %d", got.TotalCount)
	}
	s.do("GET", "/api/v1/envs/"+e.env.ID.String()+"/audit-logs?from=yesterday", s.owner, nil).fails(t, http.StatusBadRequest, "from_is_invalid")
}

// TestConcurrentPatchesLoseNothing: many clients appending to the same flag
// and segment at once; every acknowledged change is in the result and in the
// history exactly once.
func TestConcurrentPatchesLoseNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	const writers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]int{}
	for i := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := s.do("PATCH", e.segs+"/"+sg.ID.String(), s.owner, fmt.Sprintf(`[{"op":"add","path":"/included/-","value":"user-%d"}]`, i))
			if r.Status == http.StatusOK {
				mu.Lock()
				acked["segment"]++
				mu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			r := s.do("PATCH", e.flags+"/pay", s.owner, fmt.Sprintf(`[{"op":"add","path":"/targetUsers/-","value":{"keyIds":["user-%d"],"variationId":%q}}]`, i, f.Variations[0].ID))
			if r.Status == http.StatusOK {
				mu.Lock()
				acked["flag"]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if acked["segment"] != writers || acked["flag"] != writers {
		t.Fatalf("acknowledged %v of %d each; serialized writers must all succeed", acked, writers)
	}
	gotSeg := decode[flagstore.Segment](t, s.do("GET", e.segs+"/"+sg.ID.String(), s.owner, nil).ok(t))
	gotFlag := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if len(gotSeg.Included) != writers || len(gotFlag.TargetUsers) != writers {
		t.Fatalf("segment has %d users and flag %d targets, want %d each: an acknowledged update was lost", len(gotSeg.Included), len(gotFlag.TargetUsers), writers)
	}
	for ref, id := range map[string]string{"segment": sg.ID.String(), "flag": f.ID.String()} {
		if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update'`, id); n != writers {
			t.Errorf("%s has %d update audit entries, want exactly %d", ref, n, writers)
		}
	}
}
