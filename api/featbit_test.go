package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// FeatBit's clients send FeatBit's bodies and read FeatBit's answers: each
// flag change route gets the request FeatBit's own classes describe
// (Application/FeatureFlags/*), answers the new revision (ApiResponse<Guid>)
// or true (ApiResponse<bool>), and its effect is real: a new revision and a
// history entry.
func TestFeatBitFlagChanges(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	get := func() flagstore.Flag {
		return decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	}
	history := func() int { return s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1`, f.ID.String()) }
	on, off := f.Variations[0].ID, f.Variations[1].ID

	for _, tc := range []struct {
		name, method, path string
		body               func(cur flagstore.Flag) any
		answersRevision    bool
		check              func(flagstore.Flag) bool
	}{
		// ToggleFeatureFlag: the status in the path, in any letter case, a ResourceChangeRequest body.
		{"toggle", "PUT", "/toggle/True", func(flagstore.Flag) any { return map[string]any{"comment": "launch"} }, true,
			func(f flagstore.Flag) bool { return f.IsEnabled }},
		{"toggle back", "PUT", "/toggle/FALSE", nil, true, func(f flagstore.Flag) bool { return !f.IsEnabled }},
		// UpdateName {name, comment}.
		{"name", "PUT", "/name", func(flagstore.Flag) any { return map[string]any{"name": "Payments", "comment": "clearer"} }, true,
			func(f flagstore.Flag) bool { return f.Name == "Payments" }},
		// UpdateDescription {description, comment}.
		{"description", "PUT", "/description", func(flagstore.Flag) any { return map[string]any{"description": "Card payments", "comment": "c"} }, true,
			func(f flagstore.Flag) bool { return f.Description == "Card payments" }},
		// UpdateVariations {revision, variations, comment}.
		{"variations", "PUT", "/variations", func(cur flagstore.Flag) any {
			return map[string]any{"revision": cur.Revision, "comment": "c", "variations": []flagstore.Variation{
				{ID: on, Name: "Yes", Value: "true"}, {ID: off, Name: "No", Value: "false"}}}
		}, true, func(f flagstore.Flag) bool { return f.Variations[0].Name == "Yes" }},
		// UpdateOffVariation {offVariationId, revision, comment}.
		{"off variation", "PUT", "/off-variation", func(cur flagstore.Flag) any {
			return map[string]any{"offVariationId": on, "revision": cur.Revision, "comment": "c"}
		}, true, func(f flagstore.Flag) bool { return f.DisabledVariationID == on }},
		// UpdateTargetingPayload {revision, targeting: FlagTargeting, comment}.
		{"targeting", "PUT", "/targeting", func(cur flagstore.Flag) any {
			return map[string]any{"revision": cur.Revision, "comment": "c", "targeting": map[string]any{
				"targetUsers": []map[string]any{{"keyIds": []string{"alice"}, "variationId": off}},
				"rules": []map[string]any{{"id": "r1", "name": "NL", "dispatchKey": "keyId", "includedInExpt": true,
					"conditions": []map[string]string{{"id": "c1", "property": "country", "op": "Equal", "value": "NL"}},
					"variations": []map[string]any{{"id": off, "rollout": []float64{0, 1}, "exptRollout": 1}}}},
				"fallthrough":           map[string]any{"dispatchKey": nil, "includedInExpt": true, "variations": []map[string]any{{"id": on, "rollout": []float64{0, 1}, "exptRollout": 1}}},
				"exptIncludeAllTargets": false}}
		}, true, func(f flagstore.Flag) bool {
			return len(f.TargetUsers) == 1 && len(f.Rules) == 1 && !f.ExptIncludeAllTargets && f.Fallthrough.Variations[0].ID == on
		}},
		// SetTags {tags, comment}: true.
		{"tags", "PUT", "/tags", func(flagstore.Flag) any { return map[string]any{"tags": []string{"money"}, "comment": "c"} }, false,
			func(f flagstore.Flag) bool { return slices.Equal(f.Tags, []string{"money"}) }},
		// A JSON Patch of FeatureFlag: true.
		{"patch", "PATCH", "", func(flagstore.Flag) any { return `[{"op":"replace","path":"/description","value":"patched"}]` }, false,
			func(f flagstore.Flag) bool { return f.Description == "patched" }},
		// Archive and restore take a ResourceChangeRequest: true.
		{"archive", "PUT", "/archive", func(flagstore.Flag) any { return map[string]any{"comment": "done"} }, false,
			func(f flagstore.Flag) bool { return f.IsArchived }},
		{"restore", "PUT", "/restore", func(flagstore.Flag) any { return map[string]any{"comment": "back"} }, false,
			func(f flagstore.Flag) bool { return !f.IsArchived }},
	} {
		before, entries := get(), history()
		var body any
		if tc.body != nil {
			body = tc.body(before)
		}
		r := s.do(tc.method, e.flags+"/pay"+tc.path, s.owner, body).ok(t)
		after := get()
		if tc.answersRevision {
			if rev := decode[uuid.UUID](t, r); rev != after.Revision {
				t.Errorf("%s answered %s, want the new revision %s", tc.name, r.Data, after.Revision)
			}
		} else if string(r.Data) != "true" {
			t.Errorf("%s answered %s, want true", tc.name, r.Data)
		}
		if after.Revision == before.Revision || !tc.check(after) {
			t.Errorf("%s: the flag is now %+v", tc.name, after)
		}
		if got := history(); got != entries+1 {
			t.Errorf("%s: %d history entries, want %d", tc.name, got, entries+1)
		}
	}

	// CloneFlag {name, key, description, tags}: true, and the copy exists.
	r := s.do("POST", e.flags+"/clone/pay", s.owner, map[string]any{"name": "Pay 2", "key": "pay-2", "description": "copy", "tags": []string{"x"}}).ok(t)
	if string(r.Data) != "true" {
		t.Errorf("clone answered %s, want true", r.Data)
	}
	if c := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay-2", s.owner, nil).ok(t)); c.Description != "copy" || len(c.Rules) != 1 {
		t.Errorf("clone %+v", c)
	}
	// Delete of an archived flag: true.
	s.do("PUT", e.flags+"/pay-2/archive", s.owner, nil).ok(t)
	if r := s.do("DELETE", e.flags+"/pay-2", s.owner, map[string]string{"comment": "gone"}).ok(t); string(r.Data) != "true" {
		t.Errorf("delete answered %s, want true", r.Data)
	}
	// A status that is no boolean names nothing.
	s.do("PUT", e.flags+"/pay/toggle/yes", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	// A stale revision is a conflict.
	s.do("PUT", e.flags+"/pay/off-variation", s.owner, map[string]any{"offVariationId": off, "revision": f.Revision}).fails(t, http.StatusConflict, "Conflict")
}

// Every flag and segment PUT or PATCH whose body names nothing it acts on is
// refused with the field it needs, and changes nothing.
func TestChangesNamingNothingAreRefused(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific", "included": []string{"a"}})
	seg := e.segs + "/" + sg.ID.String()
	for _, tc := range []struct {
		method, path string
		codes        []string
	}{
		{"PUT", e.flags + "/pay/name", []string{"name_is_required"}},
		{"PUT", e.flags + "/pay/description", []string{"description_is_required"}},
		{"PUT", e.flags + "/pay/variations", []string{"variations_is_required"}},
		{"PUT", e.flags + "/pay/off-variation", []string{"offVariationId_is_required"}},
		{"PUT", e.flags + "/pay/targeting", []string{"targeting_is_required"}},
		{"PUT", e.flags + "/pay/tags", []string{"tags_is_required"}},
		{"PUT", seg + "/name", []string{"name_is_required"}},
		{"PUT", seg + "/description", []string{"description_is_required"}},
		{"PUT", seg + "/tags", []string{"tags_is_required"}},
		{"PUT", seg + "/targeting", []string{"targeting_is_required"}},
	} {
		for _, body := range []string{`{}`, `{"foo":1}`, `{"comment":"why"}`} {
			r := s.do(tc.method, tc.path, s.owner, json.RawMessage(body))
			if r.Status != http.StatusBadRequest || r.Success {
				t.Errorf("%s %s %s: %d %s, want 400", tc.method, tc.path, body, r.Status, r.raw)
			}
			// A generic decoder check may answer body_is_invalid first; otherwise the field is named.
			if r.Status == http.StatusBadRequest && !slices.Equal(r.Errors, tc.codes) && !slices.Equal(r.Errors, []string{"body_is_invalid"}) {
				t.Errorf("%s %s %s: errors %v, want %v", tc.method, tc.path, body, r.Errors, tc.codes)
			}
		}
	}
	for _, path := range []string{e.flags + "/pay", seg} {
		for _, body := range []string{`[]`, `{}`, `{"foo":1}`} {
			if r := s.do("PATCH", path, s.owner, body); r.Status != http.StatusBadRequest {
				t.Errorf("PATCH %s %s: %d %s, want 400", path, body, r.Status, r.raw)
			}
		}
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.Revision != f.Revision {
		t.Error("a refused change altered the flag")
	}
	if got := decode[flagstore.Segment](t, s.do("GET", seg, s.owner, nil).ok(t)); !got.UpdatedAt.Equal(sg.UpdatedAt) {
		t.Error("a refused change altered the segment")
	}
}

// Segment targeting replaces included, excluded and rules: a part left out
// becomes empty, as in FeatBit (Segments/UpdateTargeting.cs).
func TestSegmentTargetingReplacesAll(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific",
		"included": []string{"a"}, "excluded": []string{"b"},
		"rules": []map[string]any{{"id": "r", "name": "n", "conditions": []map[string]string{{"id": "c", "property": "plan", "op": "Equal", "value": "pro"}}}}})
	path := e.segs + "/" + sg.ID.String()
	r := s.do("PUT", path+"/targeting", s.owner, map[string]any{"included": []string{"x", "y"}, "comment": "new list"}).ok(t)
	if string(r.Data) != "true" {
		t.Fatalf("answered %s, want true", r.Data)
	}
	got := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t))
	if !slices.Equal(got.Included, []string{"x", "y"}) || len(got.Excluded) != 0 || len(got.Rules) != 0 {
		t.Fatalf("segment %+v, want included [x y] and nothing else", got)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND comment = 'new list'`, sg.ID.String()); n != 1 {
		t.Fatalf("%d history entries with the comment, want 1", n)
	}
}

// An archived flag is read-only on every surface until restored: only
// restore and delete apply.
func TestArchivedFlagIsReadOnly(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", e.flags+"/pay/archive", s.owner, nil).ok(t)
	archived := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	tg := f.Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: []string{"a"}, VariationID: f.Variations[0].ID}}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/toggle/true", nil},
		{"PUT", "/name", map[string]string{"name": "x"}},
		{"PUT", "/description", map[string]string{"description": "x"}},
		{"PUT", "/tags", map[string]any{"tags": []string{"x"}}},
		{"PUT", "/variations", map[string]any{"variations": f.Variations}},
		{"PUT", "/off-variation", map[string]string{"offVariationId": f.Variations[0].ID}},
		{"PUT", "/targeting", map[string]any{"targeting": tg}},
		{"PUT", "/archive", nil},
		{"PATCH", "", `[{"op":"replace","path":"/name","value":"x"}]`},
		{"PATCH", "", `[{"op":"replace","path":"/isArchived","value":false},{"op":"replace","path":"/name","value":"x"}]`},
	} {
		s.do(tc.method, e.flags+"/pay"+tc.path, s.owner, tc.body).fails(t, http.StatusUnprocessableEntity, "FlagIsArchived")
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.Revision != archived.Revision {
		t.Fatal("a refused change altered the archived flag")
	}
	s.do("PUT", e.flags+"/pay/restore", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, nil).ok(t)
	// A restoring patch is a restore.
	s.do("PUT", e.flags+"/pay/archive", s.owner, nil).ok(t)
	s.do("PATCH", e.flags+"/pay", s.owner, `[{"op":"replace","path":"/isArchived","value":false}]`).ok(t)
}

// policyFor creates a policy with statements and returns its id.
func (s *server) policyFor(key string, statements []access.Statement) uuid.UUID {
	s.t.Helper()
	p := decode[iam.Policy](s.t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": key, "key": key}).ok(s.t))
	s.do("PUT", "/api/v1/policies/"+p.ID.String()+"/statements", s.owner, statements).ok(s.t)
	return p.ID
}

// A shared segment changes what every environment it is visible in serves:
// a member allowed segment changes only in dev may not change one visible in
// prod, nor widen a dev one's scopes to prod.
func TestSharedSegmentNeedsEveryEnvironment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	var prod, dev core.Environment
	for _, env := range p.Environments {
		if env.Key == "prod" {
			prod = env
		} else {
			dev = env
		}
	}
	devSegs := "/api/v1/envs/" + dev.ID.String() + "/segments"
	prodFlags := "/api/v1/envs/" + prod.ID.String() + "/feature-flags"
	const org = "organization/default-organization"
	read := access.Statement{ID: "r", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/web:env/*"}}
	rights := func(envs string) []access.Statement {
		return []access.Statement{read,
			{ID: "s", ResourceType: "segment", Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/" + envs + ":segment/*"}},
			{ID: "f", ResourceType: "flag", Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/" + envs + ":flag/*"}}}
	}
	devOnly, _ := s.addMember("dev-only@example.com", s.policyFor("dev-only", rights("dev")))
	both, _ := s.addMember("both@example.com", s.policyFor("both", rights("*")))

	shared := decode[flagstore.Segment](t, s.do("POST", devSegs, s.owner, map[string]any{"name": "Staff", "key": "staff", "type": "shared",
		"scopes": []string{org + ":project/web"}, "included": []string{"alice"}}).ok(t))
	f := decode[flagstore.Flag](t, s.do("POST", prodFlags, s.owner, map[string]any{"name": "Pay", "key": "pay"}).ok(t))
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "Staff", Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + shared.ID.String() + `"]`}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	s.do("PUT", prodFlags+"/pay/targeting", s.owner, map[string]any{"targeting": tg}).ok(t)
	prodFlag := decode[flagstore.Flag](t, s.do("GET", prodFlags+"/pay", s.owner, nil).ok(t))
	path := devSegs + "/" + shared.ID.String()
	before := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t))

	s.do("PUT", path+"/targeting", devOnly, map[string]any{"included": []string{"mallory"}}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PATCH", path, devOnly, `[{"op":"add","path":"/included/-","value":"mallory"}]`).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path+"/name", devOnly, map[string]string{"name": "Mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", path, devOnly, nil).fails(t, http.StatusForbidden, "Forbidden")
	if got := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t)); !got.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("a refused change altered the segment: %+v", got)
	}
	if got := decode[flagstore.Flag](t, s.do("GET", prodFlags+"/pay", s.owner, nil).ok(t)); got.Revision != prodFlag.Revision {
		t.Fatal("a refused segment change gave the prod flag a new revision")
	}

	// A dev-only shared segment: the dev member may change it, but not widen it to prod.
	narrow := decode[flagstore.Segment](t, s.do("POST", devSegs, devOnly, map[string]any{"name": "Testers", "key": "testers", "type": "shared",
		"scopes": []string{org + ":project/web:env/dev"}}).ok(t))
	s.do("PUT", devSegs+"/"+narrow.ID.String()+"/targeting", devOnly, map[string]any{"included": []string{"t1"}}).ok(t)
	s.do("PATCH", devSegs+"/"+narrow.ID.String(), devOnly, `[{"op":"add","path":"/scopes/-","value":"`+org+`:project/web:env/prod"}]`).
		fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", devSegs, devOnly, map[string]any{"name": "Wide", "key": "wide", "type": "shared", "scopes": []string{org}}).
		fails(t, http.StatusForbidden, "Forbidden")

	// A member with rights in both environments may, and the prod flag changes with it.
	s.do("PUT", path+"/targeting", both, map[string]any{"included": []string{"bob"}}).ok(t)
	if got := decode[flagstore.Flag](t, s.do("GET", prodFlags+"/pay", s.owner, nil).ok(t)); got.Revision == prodFlag.Revision {
		t.Fatal("the prod flag using the segment kept its revision")
	}
	s.do("PATCH", devSegs+"/"+narrow.ID.String(), both, `[{"op":"add","path":"/scopes/-","value":"`+org+`:project/web:env/prod"}]`).ok(t)
}

// A shared segment's key is unique among the segments visible in every
// environment of its scopes.
func TestSharedSegmentKeys(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	var prod, dev core.Environment
	for _, env := range p.Environments {
		if env.Key == "prod" {
			prod = env
		} else {
			dev = env
		}
	}
	prodSegs, devSegs := "/api/v1/envs/"+prod.ID.String()+"/segments", "/api/v1/envs/"+dev.ID.String()+"/segments"
	const org = "organization/default-organization"
	s.do("POST", prodSegs, s.owner, map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"}).ok(t)
	// Visible in prod too: the key clashes, whatever its case.
	s.do("POST", devSegs, s.owner, map[string]any{"name": "Beta", "key": "BETA", "type": "shared", "scopes": []string{org}}).
		fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	// Visible only in dev: no clash.
	narrow := decode[flagstore.Segment](t, s.do("POST", devSegs, s.owner, map[string]any{"name": "Beta", "key": "beta", "type": "shared",
		"scopes": []string{org + ":project/web:env/dev"}}).ok(t))
	// Widening it to prod clashes, and changes nothing.
	s.do("PATCH", devSegs+"/"+narrow.ID.String(), s.owner, `[{"op":"replace","path":"/scopes","value":["`+org+`"]}]`).
		fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	// An environment-specific segment in dev now clashes with the shared one visible there.
	s.do("POST", devSegs, s.owner, map[string]any{"name": "Beta 2", "key": "beta", "type": "environment-specific"}).
		fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")

	used := func(envSegs, query string) bool {
		return decode[bool](t, s.do("GET", envSegs+"/is-key-used?"+query, s.owner, nil).ok(t))
	}
	for _, tc := range []struct {
		segs, query string
		want        bool
	}{
		{prodSegs, "key=beta", true},
		{prodSegs, "key=beta&type=environment-specific", true},
		{devSegs, "key=Beta&type=environment-specific", true}, // the shared one is visible in dev
		{prodSegs, "key=beta&type=shared", true},
		{prodSegs, "key=gamma&type=shared", false},
		{prodSegs, "key=gamma", false},
	} {
		if got := used(tc.segs, tc.query); got != tc.want {
			t.Errorf("is-key-used?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// FeatBit's flag list: sortBy created_at or key, and FeatureFlagVm's fields.
func TestFlagListIsFeatBits(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "B", "key": "b"})
	e.createFlag(map[string]any{"name": "A", "key": "a"})
	s.do("PUT", e.flags+"/b/toggle/true", s.owner, map[string]string{"comment": "go"}).ok(t)
	var page struct {
		TotalCount int64 `json:"totalCount"`
		Items      []struct {
			Key        string                `json:"key"`
			Variations []flagstore.Variation `json:"variations"`
			Creator    *flagstore.Person     `json:"creator"`
			LastChange *struct {
				Operator   flagstore.Person `json:"operator"`
				HappenedAt time.Time        `json:"happenedAt"`
				Comment    string           `json:"comment"`
			} `json:"lastChange"`
		} `json:"items"`
	}
	must(t, json.Unmarshal(s.do("GET", e.flags+"?sortBy=created_at", s.owner, nil).ok(t).Data, &page))
	if page.TotalCount != 2 || page.Items[0].Key != "a" {
		t.Fatalf("created_at order %+v, want the newest (a) first", page.Items)
	}
	b := page.Items[1]
	if len(b.Variations) != 2 || b.Creator == nil || b.Creator.Email != "owner@example.com" || b.LastChange == nil ||
		b.LastChange.Operator.Email != "owner@example.com" || b.LastChange.Comment != "go" || b.LastChange.HappenedAt.IsZero() {
		t.Fatalf("item %+v", b)
	}
	must(t, json.Unmarshal(s.do("GET", e.flags+"?sortBy=key", s.owner, nil).ok(t).Data, &page))
	if page.Items[0].Key != "a" || page.Items[1].Key != "b" {
		t.Fatalf("key order %+v", page.Items)
	}
	s.do("GET", e.flags+"?sortBy=createdAt", s.owner, nil).ok(t)
}

// A flag with no scheduled change has no pending changes; its insights query answers the
// evaluations SDKs reported, per variation name.
func TestFlagPendingChangesAndInsights(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	if r := s.do("GET", e.flags+"/pay/pending-changes", s.owner, nil).ok(t); string(r.Data) != "[]" {
		t.Fatalf("pending changes %s, want []", r.Data)
	}
	s.do("GET", e.flags+"/nope/pending-changes", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	// Half past an hour two days ago: the answer ends now at the latest.
	at := time.Now().UTC().Truncate(time.Hour).Add(-48*time.Hour + 30*time.Minute)
	must(t, s.st.SDK().RecordEvaluations(context.Background(), sdkdata.SDKEnv{EnvID: e.env.ID}, []sdkdata.EvaluationCount{
		{FlagKey: "pay", VariationID: f.Variations[0].ID, Count: 7}}, at))
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	insights := func(from, to time.Time) *reply {
		return s.do("GET", e.flags+"/insights?featureFlagKey=pay&intervalType=HOUR&from="+ms(from)+"&to="+ms(to), s.owner, nil)
	}
	// Every hour from from's to to's is answered, each naming every
	// variation, as FeatBit does (its front end reads each point's
	// variations): the hours before and after with counts of 0.
	shape := func(points []sdkdata.InsightsPoint) string {
		var b strings.Builder
		for _, p := range points {
			fmt.Fprintf(&b, "%s", p.Time)
			for _, v := range p.Variations {
				fmt.Fprintf(&b, " %s=%d", v.Variation, v.Count)
			}
			b.WriteString("; ")
		}
		return b.String()
	}
	hour := func(d time.Duration) string { return at.Truncate(time.Hour).Add(d).Format(time.RFC3339) }
	points := decode[[]sdkdata.InsightsPoint](t, insights(at.Add(-time.Hour), at.Add(time.Hour)).ok(t))
	if got, want := shape(points), hour(-time.Hour)+" True=0 False=0; "+hour(0)+" True=7 False=0; "+hour(time.Hour)+" True=0 False=0; "; got != want {
		t.Errorf("insights\n%s\nwant\n%s", got, want)
	}
	if got, want := shape(decode[[]sdkdata.InsightsPoint](t, insights(at.Add(time.Hour), at.Add(2*time.Hour)).ok(t))),
		hour(time.Hour)+" True=0 False=0; "+hour(2*time.Hour)+" True=0 False=0; "; got != want {
		t.Errorf("insights of a window without evaluations\n%s\nwant\n%s", got, want)
	}
	// A flag never evaluated: every day of the window, at 0 (not []).
	e.createFlag(map[string]any{"name": "Quiet", "key": "quiet"})
	quiet := decode[[]sdkdata.InsightsPoint](t, s.do("GET", e.flags+"/insights?featureFlagKey=quiet&intervalType=DAY&from="+
		ms(at.Add(-48*time.Hour))+"&to="+ms(at), s.owner, nil).ok(t))
	day := func(n int) string { return at.Truncate(24*time.Hour).AddDate(0, 0, n).Format(time.RFC3339) }
	if got, want := shape(quiet), day(-2)+" True=0 False=0; "+day(-1)+" True=0 False=0; "+day(0)+" True=0 False=0; "; got != want {
		t.Errorf("insights of a flag never evaluated\n%s\nwant\n%s", got, want)
	}
	// Intervals that have not begun are not answered: the window ends now.
	now := time.Now().UTC()
	if got := decode[[]sdkdata.InsightsPoint](t, insights(now.Add(-time.Hour), now.Add(5*time.Hour)).ok(t)); len(got) != 2 && len(got) != 3 { // 3 if the hour turned meanwhile
		t.Errorf("an hour ago to five hours ahead answers %d hours, want 2", len(got))
	}
	// A window of more intervals than one answer holds is refused by name.
	s.do("GET", e.flags+"/insights?featureFlagKey=quiet&intervalType=MINUTE&from="+ms(at.AddDate(0, 0, -40))+"&to="+ms(at), s.owner, nil).
		fails(t, http.StatusBadRequest, "from_is_invalid")
	s.do("GET", e.flags+"/insights?intervalType=WEEKS&from=0", s.owner, nil).
		fails(t, http.StatusBadRequest, "featureFlagKey_is_required", "intervalType_is_invalid", "from_is_invalid", "to_is_invalid")
	s.do("GET", e.flags+"/insights?featureFlagKey=nope&intervalType=DAY&from=1&to=2", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}
