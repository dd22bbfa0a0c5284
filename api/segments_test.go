package api_test

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

func (f envFixture) createSegment(body map[string]any) flagstore.Segment {
	f.s.t.Helper()
	return decode[flagstore.Segment](f.s.t, f.s.do("POST", f.segs, f.s.owner, body).ok(f.s.t))
}

func TestCreateSegment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	sg := e.createSegment(map[string]any{"name": "Beta users", "key": "beta", "type": "environment-specific",
		"included": []string{"alice"}, "excluded": []string{"mallory"}, "tags": []string{"qa"},
		"rules": []map[string]any{{"id": "r1", "name": "Staff", "conditions": []map[string]string{{"id": "c1", "property": "email", "op": "EndsWith", "value": "@example.com"}}}}})
	if !sg.IsEnvironmentSpecific || sg.EnvID != e.env.ID || sg.WorkspaceID != s.wsID || sg.IsArchived ||
		!slices.Equal(sg.Scopes, []string{"organization/default-organization:project/web:env/prod"}) ||
		!slices.Equal(sg.Included, []string{"alice"}) || len(sg.Rules) != 1 {
		t.Fatalf("created %+v", sg)
	}
	post := func(body map[string]any) *reply { return s.do("POST", e.segs, s.owner, body) }
	post(map[string]any{}).fails(t, http.StatusBadRequest, "name_is_required", "key_is_required", "type_is_required", "scopes_is_invalid")
	post(map[string]any{"name": "x", "key": "BETA", "type": "environment-specific"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	post(map[string]any{"name": "x", "key": "x", "type": "global"}).fails(t, http.StatusBadRequest, "type_is_invalid", "scopes_is_invalid")
	post(map[string]any{"name": "x", "key": "x", "type": "shared", "scopes": []string{"organization/other-org"}}).fails(t, http.StatusBadRequest, "scopes_is_invalid")
	post(map[string]any{"name": "x", "key": "x", "type": "shared", "scopes": []string{"organization/default-organization:project/api"}}).
		fails(t, http.StatusBadRequest, "scopes_is_invalid") // does not reach the environment it is managed from
	post(map[string]any{"name": "x", "key": "x", "type": "environment-specific", "rules": []map[string]any{{"id": "r", "name": "n",
		"conditions": []map[string]string{{"id": "c", "property": targeting.SegmentIn, "value": `["` + sg.ID.String() + `"]`}}}}}).
		fails(t, http.StatusBadRequest, "rules_is_invalid")
	post(map[string]any{"name": "x", "key": "x", "type": "environment-specific", "included": []string{""}}).fails(t, http.StatusBadRequest, "included_is_invalid")
}

func TestSharedSegmentsAndByIDs(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	p := decode[core.Project](t, s.do("GET", "/api/v1/projects/"+e.env.ProjectID.String(), s.owner, nil).ok(t))
	dev := p.Environments[1].ID // the Dev environment of the same project
	devSegs := "/api/v1/envs/" + dev.String() + "/segments"

	own := e.createSegment(map[string]any{"name": "Prod only", "key": "prod-only", "type": "environment-specific"})
	shared := e.createSegment(map[string]any{"name": "Everyone in web", "key": "web-all", "type": "shared",
		"scopes": []string{"organization/default-organization:project/web"}})
	elsewhere := s.prodEnvOf("API", "api").createSegment(map[string]any{"name": "API", "key": "api", "type": "environment-specific"})

	ids := "?ids=" + own.ID.String() + "&ids=" + shared.ID.String() + "," + elsewhere.ID.String() + "&ids=" + uuid.NewString()
	inProd := decode[[]flagstore.Segment](t, s.do("GET", e.segs+"/by-ids"+ids, s.owner, nil).ok(t))
	if len(inProd) != 2 || inProd[0].ID != own.ID || inProd[1].ID != shared.ID {
		t.Fatalf("by-ids in prod = %d segments, want the env's own and the shared one", len(inProd))
	}
	inDev := decode[[]flagstore.Segment](t, s.do("GET", devSegs+"/by-ids"+ids, s.owner, nil).ok(t))
	if len(inDev) != 1 || inDev[0].ID != shared.ID {
		t.Fatalf("by-ids in dev = %+v, want only the shared segment", inDev)
	}
	s.do("GET", devSegs+"/"+shared.ID.String(), s.owner, nil).ok(t)
	s.do("GET", devSegs+"/"+own.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if list := decode[core.Paged[flagstore.Segment]](t, s.do("GET", devSegs, s.owner, nil).ok(t)); list.TotalCount != 1 {
		t.Fatalf("dev lists %d segments, want the shared one", list.TotalCount)
	}

	many := make([]string, 101)
	for i := range many {
		many[i] = uuid.NewString()
	}
	s.do("GET", e.segs+"/by-ids?ids="+strings.Join(many, ","), s.owner, nil).fails(t, http.StatusBadRequest, "ids_is_invalid")
	s.do("GET", e.segs+"/by-ids?ids=not-a-uuid", s.owner, nil).fails(t, http.StatusBadRequest, "ids_is_invalid")
	if got := decode[[]flagstore.Segment](t, s.do("GET", e.segs+"/by-ids", s.owner, nil).ok(t)); len(got) != 0 {
		t.Fatalf("by-ids without ids = %d segments", len(got))
	}
}

func TestPatchSegment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific", "included": []string{"alice"}})
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f, sg.ID))).ok(t)
	f = decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	path := e.segs + "/" + sg.ID.String()

	r := s.do("PATCH", path, s.owner, `[{"op":"add","path":"/included/-","value":"bob"},{"op":"replace","path":"/description","value":"testers"},{"op":"test","path":"/name","value":"Beta"}]`).ok(t)
	if string(r.Data) != "true" {
		t.Fatalf("patch answered %s, want true", r.Data)
	}
	got := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t))
	if !slices.Equal(got.Included, []string{"alice", "bob"}) || got.Description != "testers" {
		t.Fatalf("patched %+v", got)
	}
	// Who is in the segment changed, so the flag using it has a new revision and says why.
	after := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t))
	if after.Revision == f.Revision {
		t.Fatal("the referencing flag kept its revision")
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND comment = 'Referenced segment ''Beta'' has been updated.'`, f.ID.String()); n != 1 {
		t.Fatalf("%d flag audit entries about the segment, want 1", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND comment = 'Updated via patch'`, sg.ID.String()); n != 1 {
		t.Fatalf("%d segment patch audit entries, want 1", n)
	}

	for name, ops := range map[string]string{
		"read-only id":        `[{"op":"replace","path":"/id","value":"` + uuid.NewString() + `"}]`,
		"read-only envId":     `[{"op":"replace","path":"/envId","value":"` + uuid.NewString() + `"}]`,
		"read-only workspace": `[{"op":"remove","path":"/workspaceId"}]`,
		"read-only created":   `[{"op":"replace","path":"/createdAt","value":"2020-01-01T00:00:00Z"}]`,
		"read-only flag":      `[{"op":"replace","path":"/isEnvironmentSpecific","value":false}]`,
		"move from read-only": `[{"op":"move","from":"/id","path":"/description"}]`,
		"failed test":         `[{"op":"replace","path":"/name","value":"Gamma"},{"op":"test","path":"/name","value":"Beta"}]`,
		"bad path":            `[{"op":"remove","path":"/included/9"}]`,
		"no path":             `[{"op":"remove"}]`,
		"unknown op":          `[{"op":"delete","path":"/name"}]`,
		"invalid result":      `[{"op":"replace","path":"/name","value":""}]`,
		"segment condition":   `[{"op":"add","path":"/rules/-","value":{"id":"r","name":"n","conditions":[{"id":"c","property":"User is in segment","op":"","value":"[\"` + sg.ID.String() + `\"]"}]}}]`,
		"wrong type":          `[{"op":"replace","path":"/included","value":"alice"}]`,
		"null body":           `null`,
	} {
		t.Run(name, func(t *testing.T) {
			r := s.do("PATCH", path, s.owner, ops)
			if r.Status != http.StatusBadRequest || len(r.Errors) == 0 || (r.Errors[0] != "patch_is_invalid" && r.Errors[0] != "body_is_invalid") {
				t.Fatalf("got %d %v, want 400 patch_is_invalid", r.Status, r.Errors)
			}
		})
	}
	if unchanged := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t)); !sameSegment(unchanged, got) {
		t.Fatalf("refused patches changed the segment:\n%+v\n%+v", unchanged, got)
	}
	s.do("PATCH", e.segs+"/"+uuid.NewString(), s.owner, `[]`).fails(t, http.StatusNotFound, "ResourceNotFound")
}

func sameSegment(a, b flagstore.Segment) bool {
	return a.Name == b.Name && a.Description == b.Description && slices.Equal(a.Included, b.Included) &&
		len(a.Rules) == len(b.Rules) && a.UpdatedAt.Equal(b.UpdatedAt)
}

func TestSegmentArchiveRestoreDelete(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	path := e.segs + "/" + sg.ID.String()

	// Restoring a segment that is not archived succeeds and records nothing.
	s.do("PUT", path+"/restore", s.owner, nil).ok(t)
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1`, sg.ID.String()); n != 1 {
		t.Fatalf("%d audit entries, want only the creation", n)
	}
	s.do("PUT", path+"/archive", s.owner, map[string]string{"comment": "season over"}).ok(t)
	if got := decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t)); !got.IsArchived {
		t.Fatal("not archived")
	}
	if l := decode[core.Paged[flagstore.Segment]](t, s.do("GET", e.segs+"?isArchived=true", s.owner, nil).ok(t)); l.TotalCount != 1 {
		t.Fatalf("archived list: %d", l.TotalCount)
	}
	// An archived segment cannot be used by a flag.
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f, sg.ID))).fails(t, http.StatusBadRequest, "rules_is_invalid")
	s.do("PUT", path+"/restore", s.owner, map[string]string{"comment": "back"}).ok(t)
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f, sg.ID))).ok(t)

	// While a flag uses it, it can be neither archived nor deleted.
	s.do("PUT", path+"/archive", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "SegmentIsBeingUsed")
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusUnprocessableEntity, "SegmentIsBeingUsed")
	refs := decode[[]segments.FlagReference](t, s.do("GET", path+"/flag-references", s.owner, nil).ok(t))
	if len(refs) != 1 || refs[0].Key != "pay" || refs[0].EnvKey != "prod" {
		t.Fatalf("flag references %+v", refs)
	}
	noRules := targetingOf(f)
	noRules["rules"] = []any{}
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(noRules)).ok(t)

	s.do("DELETE", path, s.owner, map[string]string{"comment": "gone"}).ok(t)
	s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	var ops []string
	rows, _ := s.pool.Query(t.Context(), `SELECT operation || ':' || comment FROM audit_logs WHERE ref_id = $1 ORDER BY created_at`, sg.ID.String())
	for rows.Next() {
		var op string
		rows.Scan(&op)
		ops = append(ops, op)
	}
	if want := []string{"Create:", "Archive:season over", "Restore:back", "Remove:gone"}; !slices.Equal(ops, want) {
		t.Fatalf("history %v, want %v", ops, want)
	}
}

func TestSegmentSettingsAndList(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	a := e.createSegment(map[string]any{"name": "Alpha testers", "key": "alpha", "type": "environment-specific"})
	e.createSegment(map[string]any{"name": "Beta testers", "key": "beta", "type": "environment-specific", "tags": []string{"qa"}})
	path := e.segs + "/" + a.ID.String()

	get := func() flagstore.Segment { return decode[flagstore.Segment](t, s.do("GET", path, s.owner, nil).ok(t)) }
	if done := decode[bool](t, s.do("PUT", path+"/name", s.owner, map[string]string{"name": "Alpha crew"}).ok(t)); !done || get().Name != "Alpha crew" {
		t.Fatalf("renamed %q", get().Name)
	}
	if done := decode[bool](t, s.do("PUT", path+"/description", s.owner, map[string]string{"description": "first wave"}).ok(t)); !done || get().Description != "first wave" {
		t.Fatalf("description %q", get().Description)
	}
	if done := decode[bool](t, s.do("PUT", path+"/tags", s.owner, map[string]any{"tags": []string{"qa", "early"}}).ok(t)); !done || !slices.Equal(get().Tags, []string{"qa", "early"}) {
		t.Fatalf("tags %v", get().Tags)
	}
	s.do("PUT", path+"/targeting", s.owner, map[string]any{"included": []string{"a", "b"}, "excluded": []string{"c"},
		"rules": []map[string]any{{"id": "r", "name": "n", "conditions": []map[string]string{{"id": "c", "property": "plan", "op": "Equal", "value": "pro"}}}}}).ok(t)
	tgt := get()
	if !slices.Equal(tgt.Included, []string{"a", "b"}) || !slices.Equal(tgt.Excluded, []string{"c"}) || len(tgt.Rules) != 1 {
		t.Fatalf("targeting %+v", tgt)
	}
	s.do("PUT", path+"/name", s.owner, map[string]string{"name": " "}).fails(t, http.StatusBadRequest, "name_is_required")

	// Most recently changed first; name search in part, case-insensitively; paging.
	list := decode[core.Paged[flagstore.Segment]](t, s.do("GET", e.segs, s.owner, nil).ok(t))
	if list.TotalCount != 2 || list.Items[0].ID != a.ID {
		t.Fatalf("list %+v, want the changed segment first", list.Items)
	}
	if got := decode[core.Paged[flagstore.Segment]](t, s.do("GET", e.segs+"?name=BETA&pageSize=1", s.owner, nil).ok(t)); got.TotalCount != 1 || got.Items[0].Key != "beta" {
		t.Fatalf("search %+v", got)
	}
	if tags := decode[[]string](t, s.do("GET", e.segs+"/all-tags", s.owner, nil).ok(t)); !slices.Equal(tags, []string{"early", "qa"}) {
		t.Fatalf("tags %v", tags)
	}
	if used := decode[bool](t, s.do("GET", e.segs+"/is-key-used?key=Alpha", s.owner, nil).ok(t)); !used {
		t.Fatal("is-key-used Alpha = false")
	}
}

func TestSegmentPermissions(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	sg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	nobody, _ := s.addMember("nobody@example.com")
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	path := e.segs + "/" + sg.ID.String()
	s.do("GET", path, nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PATCH", path, nobody, `[{"op":"replace","path":"/name","value":"x"}]`).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", path, nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", e.segs, nobody, map[string]any{"name": "x", "key": "x", "type": "environment-specific"}).fails(t, http.StatusForbidden, "Forbidden")
	// The Developer policy allows every flag and segment action.
	s.do("PATCH", path, dev, `[{"op":"replace","path":"/name","value":"Beta 2"}]`).ok(t)
	s.do("DELETE", path, dev, nil).ok(t)
}

// TestFlagReferencesShowOnlyReadableEnvironments: a shared segment used by a
// flag in prod and one in dev; a member who may access only dev sees only
// the dev flag among its references, never the prod flag's key or name; the
// owner sees both.
func TestFlagReferencesShowOnlyReadableEnvironments(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	envs := s.twoEnvs()
	shared := envs.dev.createSegment(map[string]any{"name": "Staff", "key": "staff", "type": "shared",
		"scopes": []string{"organization/default-organization:project/web"}})
	use := func(e envFixture, key string) {
		f := e.createFlag(map[string]any{"name": "Flag " + key, "key": key})
		s.do("PUT", e.flags+"/"+key+"/targeting", s.owner, put(targetingOf(f, shared.ID))).ok(t)
	}
	use(envs.prod, "prod-secret-launch")
	use(envs.dev, "dev-tryout")
	devOnly, _ := s.addMember("dev-only@example.com", s.policyFor("dev-only", []access.Statement{{ID: "r", ResourceType: "env",
		Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/web:env/dev"}}}))
	path := envs.dev.segs + "/" + shared.ID.String() + "/flag-references"

	r := s.do("GET", path, devOnly, nil).ok(t)
	if refs := decode[[]segments.FlagReference](t, r); len(refs) != 1 || refs[0].Key != "dev-tryout" || strings.Contains(string(r.Data), "prod-secret") {
		t.Errorf("a member who may access only dev sees %s, want only the dev flag", r.Data)
	}
	if refs := decode[[]segments.FlagReference](t, s.do("GET", path, s.owner, nil).ok(t)); len(refs) != 2 {
		t.Errorf("the owner sees %d references, want 2", len(refs))
	}
}
