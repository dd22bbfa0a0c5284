package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// twoEnvs is a project's Prod (the source) and Dev (the target).
type twoEnvs struct {
	prod, dev envFixture
}

func (s *server) twoEnvs() twoEnvs {
	s.t.Helper()
	p := s.createProject("Web", "web")
	fixture := func(env core.Environment) envFixture {
		base := "/api/v1/envs/" + env.ID.String()
		return envFixture{s: s, env: env, flags: base + "/feature-flags", segs: base + "/segments"}
	}
	return twoEnvs{prod: fixture(p.Environments[0]), dev: fixture(p.Environments[1])}
}

// ruleOn is a rule serving the flag's first variation to users of a country.
func ruleOn(f flagstore.Flag, name, country string) map[string]any {
	return map[string]any{"id": uuid.NewString(), "name": name, "dispatchKey": nil, "includedInExpt": true,
		"conditions": []map[string]string{{"id": uuid.NewString(), "property": "country", "op": "Equal", "value": country}},
		"variations": []map[string]any{{"id": f.Variations[0].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}}
}

// setTargeting replaces a flag's targeting as the owner.
func (f envFixture) setTargeting(fl flagstore.Flag, targets []flagstore.TargetUser, rules []map[string]any) flagstore.Flag {
	f.s.t.Helper()
	if targets == nil {
		targets = []flagstore.TargetUser{}
	}
	f.s.do("PUT", f.flags+"/"+fl.Key+"/targeting", f.s.owner, map[string]any{"targeting": map[string]any{
		"targetUsers": targets, "rules": rules, "fallthrough": fl.Fallthrough}}).ok(f.s.t)
	return decode[flagstore.Flag](f.s.t, f.s.do("GET", f.flags+"/"+fl.Key, f.s.owner, nil).ok(f.s.t))
}

func TestCompareOverview(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	a := e.prod.createFlag(map[string]any{"name": "A", "key": "a", "isEnabled": true})
	e.dev.createFlag(map[string]any{"name": "A", "key": "a"})
	e.prod.createFlag(map[string]any{"name": "B", "key": "b"})
	e.prod.setTargeting(a, nil, []map[string]any{ruleOn(a, "NL", "NL")})

	path := e.prod.flags + "/compare-overview"
	body := map[string]any{"targetEnvIds": []uuid.UUID{e.dev.env.ID}, "filter": map[string]any{"pageIndex": 0, "pageSize": 10, "sortBy": "key"}}
	page := decode[core.Paged[flagcopy.CompareFlagOverview]](t, s.do("POST", path, s.owner, body).ok(t))
	if page.TotalCount != 2 || len(page.Items) != 2 || page.Items[0].Key != "a" || page.Items[1].Key != "b" {
		t.Fatalf("overview %+v, want a and b", page)
	}
	d := page.Items[0].Diffs
	if len(d) != 1 || d[0].TargetEnvID != e.dev.env.ID || !d[0].OnOffState || !d[0].TargetingRule ||
		d[0].Variations || d[0].IndividualTargeting || d[0].DefaultRule || d[0].OffVariation {
		t.Fatalf("a's diffs %+v, want on/off and rules to differ, nothing else", d)
	}
	if len(page.Items[1].Diffs) != 0 {
		t.Fatalf("b is not in Dev, yet has diffs %+v", page.Items[1].Diffs)
	}
	// The filter is FeatBit's: a name narrows the page.
	body["filter"] = map[string]any{"name": "b"}
	if page := decode[core.Paged[flagcopy.CompareFlagOverview]](t, s.do("POST", path, s.owner, body).ok(t)); len(page.Items) != 1 || page.Items[0].Key != "b" {
		t.Fatalf("filtered overview %+v, want b", page)
	}

	s.do("POST", path, s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "targetEnvIds_is_invalid")
	s.do("POST", path, s.owner, map[string]any{"targetEnvIds": []uuid.UUID{e.prod.env.ID}}).fails(t, http.StatusBadRequest, "targetEnvId_is_invalid")
	s.do("POST", path, s.owner, map[string]any{"targetEnvIds": []uuid.UUID{uuid.New()}}).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", path, s.owner, map[string]any{"targetEnvIds": []uuid.UUID{e.dev.env.ID}, "filter": map[string]any{"pageSize": 1000}}).
		fails(t, http.StatusBadRequest, "pageSize_is_invalid")
}

func TestCompareFlag(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	a := e.prod.createFlag(map[string]any{"name": "A", "key": "a"})
	b := e.dev.createFlag(map[string]any{"name": "A", "key": "a"})
	e.prod.setTargeting(a, []flagstore.TargetUser{{KeyIDs: []string{"alice"}, VariationID: a.Variations[0].ID}},
		[]map[string]any{ruleOn(a, "NL", "NL"), ruleOn(a, "DE", "DE")})
	e.dev.setTargeting(b, nil, []map[string]any{ruleOn(b, "Germany", "DE")})

	d := decode[*flagcopy.CompareFlagDetail](t, s.do("GET", e.prod.flags+"/a/compare-with/"+e.dev.env.ID.String(), s.owner, nil).ok(t))
	if d == nil || d.Source.EnvID != e.prod.env.ID || d.Target.EnvID != e.dev.env.ID || !d.IsRulesCopyable {
		t.Fatalf("detail %+v", d)
	}
	if d.Diff.OnOffState.IsDifferent || d.Diff.DefaultRule.IsDifferent || d.Diff.OffVariation.IsDifferent || d.Diff.Variations.IsDifferent {
		t.Errorf("parts that are the same differ: %+v", d.Diff)
	}
	// Rules pair by conditions, not by name or position: DE matches Germany.
	rules := d.Diff.TargetingRule
	if len(rules) != 2 || !rules[0].IsDifferent || rules[0].Target != nil || rules[1].IsDifferent || rules[1].Target.Name != "Germany" {
		t.Errorf("rule diffs %+v, want NL only in Prod and DE the same", rules)
	}
	if !slices.ContainsFunc(d.Diff.IndividualTargeting, func(x flagcopy.IndividualTargetingDiff) bool {
		return x.IsDifferent && x.Source != nil && slices.Equal(x.Source.Users, []string{"alice"})
	}) {
		t.Errorf("individual targeting %+v, want alice to differ", d.Diff.IndividualTargeting)
	}
	// FeatBit answers null when the target has no flag of the key.
	e.prod.createFlag(map[string]any{"name": "Only here", "key": "only"})
	if r := s.do("GET", e.prod.flags+"/only/compare-with/"+e.dev.env.ID.String(), s.owner, nil).ok(t); string(r.Data) != "null" {
		t.Fatalf("compare with a missing flag answered %s, want null", r.Data)
	}
	s.do("GET", e.prod.flags+"/nope/compare-with/"+e.dev.env.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("GET", e.prod.flags+"/a/compare-with/"+e.prod.env.ID.String(), s.owner, nil).fails(t, http.StatusBadRequest, "targetEnvId_is_invalid")
	s.do("GET", e.prod.flags+"/a/compare-with/not-a-uuid", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}

func TestCopyToEnvPrecheck(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	seg := e.prod.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	shared := e.prod.createSegment(map[string]any{"name": "Staff", "key": "staff", "type": "shared",
		"scopes": []string{"organization/default-organization:project/web"}})
	free := e.prod.createFlag(map[string]any{"name": "Free", "key": "free"})
	e.prod.setTargeting(free, nil, []map[string]any{segmentRule(free, shared.ID)})
	taken := e.prod.createFlag(map[string]any{"name": "Taken", "key": "taken"})
	e.dev.createFlag(map[string]any{"name": "Taken", "key": "TAKEN"})
	local := e.prod.createFlag(map[string]any{"name": "Local", "key": "local"})
	e.prod.setTargeting(local, []flagstore.TargetUser{{KeyIDs: []string{"bob"}, VariationID: local.Variations[0].ID}},
		[]map[string]any{segmentRule(local, seg.ID)})

	path := e.prod.flags + "/copy-to-env-precheck/" + e.dev.env.ID.String()
	res := decode[[]flagcopy.CopyToEnvPrecheckResult](t, s.do("POST", path, s.owner, []uuid.UUID{free.ID, taken.ID, local.ID}).ok(t))
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	if r := res[0]; r.ID != free.ID || !r.Passed || !r.KeyCheck || !r.TargetRuleCheck || !r.TargetUserCheck || !r.PermissionCheck {
		t.Errorf("free: %+v, want passed (a shared segment in scope is usable)", r)
	}
	if r := res[0]; len(r.NewProperties) != 0 {
		t.Errorf("free tests only a segment, yet names new properties %v", r.NewProperties)
	}
	if r := res[1]; r.KeyCheck || r.Passed || !r.TargetRuleCheck {
		t.Errorf("taken: %+v, want the key check failed", r)
	}
	if r := res[2]; r.TargetRuleCheck || r.TargetUserCheck || r.Passed || len(r.SegmentsNotVisible) != 1 || r.SegmentsNotVisible[0].Name != "Beta" {
		t.Errorf("local: %+v, want its rules and targets flagged and Beta named", r)
	}
	s.do("POST", path, s.owner, []uuid.UUID{}).fails(t, http.StatusBadRequest, "flagIds_is_invalid")
	s.do("POST", path, s.owner, []uuid.UUID{uuid.New()}).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", path, s.owner, []string{"x"}).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+e.prod.env.ID.String(), s.owner, []uuid.UUID{free.ID}).
		fails(t, http.StatusBadRequest, "targetEnvId_is_invalid")
}

func segmentRule(f flagstore.Flag, segmentID uuid.UUID) map[string]any {
	return map[string]any{"id": uuid.NewString(), "name": "In segment", "dispatchKey": nil, "includedInExpt": true,
		"conditions": []map[string]string{{"id": uuid.NewString(), "property": targeting.SegmentIn, "op": "", "value": `["` + segmentID.String() + `"]`}},
		"variations": []map[string]any{{"id": f.Variations[0].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}}
}

func TestCopyToEnv(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	seg := e.prod.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	one := e.prod.createFlag(map[string]any{"name": "One", "key": "one", "isEnabled": true, "tags": []string{"web"}})
	one = e.prod.setTargeting(one, []flagstore.TargetUser{{KeyIDs: []string{"bob"}, VariationID: one.Variations[0].ID}},
		[]map[string]any{ruleOn(one, "NL", "NL")})
	two := e.prod.createFlag(map[string]any{"name": "Two", "key": "two"})
	e.prod.setTargeting(two, nil, []map[string]any{segmentRule(two, seg.ID)})

	// One's rule tests country, which Dev has not seen: the pre-check names it.
	check := decode[[]flagcopy.CopyToEnvPrecheckResult](t, s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+e.dev.env.ID.String(),
		s.owner, []uuid.UUID{one.ID}).ok(t))
	if len(check) != 1 || !slices.Equal(check[0].NewProperties, []string{"country"}) {
		t.Fatalf("pre-check %+v, want newProperties [country]", check)
	}

	// FeatBit's body: the flags and the pre-check results its page got.
	path := e.prod.flags + "/copy-to-env/" + e.dev.env.ID.String()
	body := map[string]any{"flagIds": []uuid.UUID{one.ID, two.ID}, "precheckResults": []map[string]any{{"id": one.ID, "keyCheck": true}}}
	l := listenChanges(t, s, e.dev.env.ID)
	res := decode[flagcopy.CopyToEnvResult](t, s.do("POST", path, s.owner, body).ok(t))
	if res.CopiedCount != 2 {
		t.Fatalf("copied %d, want 2", res.CopiedCount)
	}
	l.wait(t, 2)
	got := decode[flagstore.Flag](t, s.do("GET", e.dev.flags+"/one", s.owner, nil).ok(t))
	if got.ID == one.ID || got.EnvID != e.dev.env.ID || !got.IsEnabled || got.Name != "One" || !slices.Equal(got.Tags, []string{"web"}) ||
		len(got.Rules) != 1 || len(got.TargetUsers) != 0 || !flagstore.SameJSON(got.Variations, one.Variations) {
		t.Fatalf("copy %+v, want One with its rule and no individual targets", got)
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.dev.flags+"/two", s.owner, nil).ok(t)); len(got.Rules) != 0 {
		t.Fatalf("two kept rules naming a Prod-only segment: %+v", got.Rules)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE env_id = $1 AND ref_type = 'FeatureFlag' AND operation = 'Create' AND comment = 'Copied from "Web/Prod"'`, e.dev.env.ID); n != 2 {
		t.Errorf("%d creation entries in Dev's history, want 2", n)
	}
	if n := s.count(`SELECT count(*) FROM flag_revisions WHERE flag_id = $1`, got.ID); n != 1 {
		t.Errorf("%d revisions of the copy, want 1", n)
	}
	// The copy adds the property its rule tests to Dev's, for the rule editors.
	if n := s.count(`SELECT count(*) FROM end_user_properties WHERE env_id = $1 AND name = 'country'`, e.dev.env.ID); n != 1 {
		t.Errorf("Dev has %d end-user properties named country after the copy, want 1", n)
	}

	// A taken key refuses the whole copy: three is not copied either.
	three := e.prod.createFlag(map[string]any{"name": "Three", "key": "three"})
	before := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, e.dev.env.ID)
	r := s.do("POST", path, s.owner, map[string]any{"flagIds": []uuid.UUID{three.ID, one.ID}})
	r.fails(t, http.StatusBadRequest, "key_is_used")
	if !strings.Contains(string(r.raw), "a flag with key one already exists in Web/Dev") {
		t.Errorf("refusal does not name the key: %s", r.raw)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, e.dev.env.ID); n != before {
		t.Fatalf("Dev has %d flags after a refused copy, want %d", n, before)
	}
	s.do("POST", path, s.owner, map[string]any{"flagIds": []uuid.UUID{}}).fails(t, http.StatusBadRequest, "flagIds_is_invalid")
	s.do("POST", path, s.owner, map[string]any{"flagIds": "x"}).fails(t, http.StatusBadRequest, "body_is_invalid")
}

// TestCopyToEnvIsWholeOrNothing makes the last flag's insert fail inside the
// copy (its key is taken in Dev after the pre-check ran), so the flags
// inserted before it must roll back with their history.
func TestCopyToEnvIsWholeOrNothing(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	a := e.prod.createFlag(map[string]any{"name": "A", "key": "a"})
	z := e.prod.createFlag(map[string]any{"name": "Z", "key": "z"})
	// A trigger takes z's key in Dev the moment a's copy lands.
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, `
CREATE FUNCTION take_z() RETURNS trigger AS $$ BEGIN
  IF NEW.key = 'a' AND NEW.env_id = '`+e.dev.env.ID.String()+`' THEN
    INSERT INTO feature_flags (env_id, key, name, description, variation_type, variations, target_users, rules,
      is_enabled, disabled_variation_id, fallthrough, expt_include_all_targets, tags, segment_refs, revision, creator_id, updator_id)
    SELECT env_id, 'z', name, description, variation_type, variations, target_users, rules, is_enabled, disabled_variation_id,
      fallthrough, expt_include_all_targets, tags, segment_refs, gen_random_uuid(), creator_id, updator_id FROM feature_flags WHERE id = NEW.id;
  END IF; RETURN NULL; END $$ LANGUAGE plpgsql;
CREATE TRIGGER take_z AFTER INSERT ON feature_flags FOR EACH ROW EXECUTE FUNCTION take_z();`)
	must(t, err)
	s.do("POST", e.prod.flags+"/copy-to-env/"+e.dev.env.ID.String(), s.owner, map[string]any{"flagIds": []uuid.UUID{a.ID, z.ID}}).
		fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, e.dev.env.ID); n != 0 {
		t.Fatalf("Dev has %d flags after a copy that failed midway, want none", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE env_id = $1`, e.dev.env.ID); n != 0 {
		t.Fatalf("Dev's history has %d entries after a failed copy, want none", n)
	}
}

func TestCopyFlagSettings(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	src := e.prod.createFlag(map[string]any{"name": "Pay", "key": "pay", "isEnabled": true})
	src = e.prod.setTargeting(src, []flagstore.TargetUser{{KeyIDs: []string{"alice"}, VariationID: src.Variations[0].ID}},
		[]map[string]any{ruleOn(src, "NL", "NL")})
	tgt := e.dev.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	tgt = e.dev.setTargeting(tgt, nil, []map[string]any{ruleOn(tgt, "DE", "DE")})

	path := e.prod.flags + "/pay/copy-settings-to/" + e.dev.env.ID.String()
	l := listenChanges(t, s, e.dev.env.ID)
	opts := map[string]any{"onOffState": true, "individualTargeting": map[string]any{"copy": true, "mode": "overwrite"},
		"targetingRule": map[string]any{"copy": true, "mode": "append"}, "defaultRule": false, "offVariation": false}
	if ok := decode[bool](t, s.do("PUT", path, s.owner, map[string]any{"options": opts}).ok(t)); !ok {
		t.Fatal("copy answered false")
	}
	l.wait(t, 1)
	got := decode[flagstore.Flag](t, s.do("GET", e.dev.flags+"/pay", s.owner, nil).ok(t))
	if !got.IsEnabled || len(got.Rules) != 2 || got.Rules[0].Name != "DE" || got.Rules[1].Name != "NL" ||
		len(got.TargetUsers) != 1 || got.TargetUsers[0].VariationID != tgt.Variations[0].ID || !slices.Equal(got.TargetUsers[0].KeyIDs, []string{"alice"}) {
		t.Fatalf("target after the copy %+v", got)
	}
	if got.Rules[1].Variations[0].ID != tgt.Variations[0].ID {
		t.Errorf("the copied rule serves %s, want the target's own variation %s", got.Rules[1].Variations[0].ID, tgt.Variations[0].ID)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update' AND comment = 'Copy flag settings from "Web/Prod"'`, tgt.ID.String()); n != 1 {
		t.Errorf("%d history entries of the copy in Dev, want 1", n)
	}
	// Copying again changes nothing and records nothing.
	s.do("PUT", path, s.owner, map[string]any{"options": opts}).ok(t)
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Update'`, tgt.ID.String()); n != 2 {
		t.Errorf("%d update entries after a copy that changed nothing, want 2 (targeting, copy)", n)
	}

	s.do("PUT", path, s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "options_is_required")
	s.do("PUT", path, s.owner, map[string]any{"options": map[string]any{}}).fails(t, http.StatusBadRequest, "options_is_required")
	s.do("PUT", path, s.owner, map[string]any{"options": map[string]any{"targetingRule": map[string]any{"copy": true, "mode": "merge"}}}).
		fails(t, http.StatusBadRequest, "options_is_invalid")
	e.prod.createFlag(map[string]any{"name": "Only", "key": "only"})
	s.do("PUT", e.prod.flags+"/only/copy-settings-to/"+e.dev.env.ID.String(), s.owner, map[string]any{"options": opts}).
		fails(t, http.StatusNotFound, "ResourceNotFound")

	// Rules naming a segment Dev cannot see are refused, and nothing changes.
	seg := e.prod.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific"})
	e.prod.setTargeting(src, nil, []map[string]any{segmentRule(src, seg.ID)})
	s.do("PUT", path, s.owner, map[string]any{"options": map[string]any{"targetingRule": map[string]any{"copy": true, "mode": "overwrite"}}}).
		fails(t, http.StatusBadRequest, "rules_is_invalid")
	if after := decode[flagstore.Flag](t, s.do("GET", e.dev.flags+"/pay", s.owner, nil).ok(t)); after.Revision != got.Revision {
		t.Fatal("a refused copy changed the target")
	}
}

// TestCompareAndCopyNeedBothEnvironments: a member who may read the source
// but not write the target is refused, and nothing changes in the target.
func TestCompareAndCopyNeedBothEnvironments(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	a := e.prod.createFlag(map[string]any{"name": "A", "key": "a", "isEnabled": true})
	e.dev.createFlag(map[string]any{"name": "A", "key": "a"})
	b := e.prod.createFlag(map[string]any{"name": "B", "key": "b"})

	policy := func(key string, sts []access.Statement) uuid.UUID {
		raw, _ := json.Marshal(sts)
		var id uuid.UUID
		must(t, s.pool.QueryRow(context.Background(), `INSERT INTO policies (organization_id, name, key, type, statements) VALUES ($1, $2, $2, 'CustomerManaged', $3) RETURNING id`,
			s.orgID, key, raw).Scan(&id))
		return id
	}
	read := func(env string) access.Statement {
		return access.Statement{ID: "r" + env, ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/web:env/" + env}}
	}
	write := func(env string, actions ...access.Action) access.Statement {
		names := make([]string, len(actions))
		for i, a := range actions {
			names[i] = string(a)
		}
		return access.Statement{ID: "w" + env, ResourceType: access.TypeFlag, Effect: "allow", Actions: names, Resources: []string{"project/web:env/" + env + ":flag/*"}}
	}
	prodOnly, _ := s.addMember("prod-only@example.com", policy("prod-only", []access.Statement{read("prod"), write("prod", "*")}))
	readBoth, _ := s.addMember("read-both@example.com", policy("read-both", []access.Statement{read("prod"), read("dev"), write("prod", "*")}))
	writer, _ := s.addMember("writer@example.com", policy("writer", []access.Statement{read("prod"), read("dev"), write("dev", access.CreateFlag, access.ToggleFlag)}))
	// Copying a flag into another environment also needs FeatBit's CopyFlagTo
	// on it where it is: FeatBit's UI offers the copy only to those allowed.
	copier, _ := s.addMember("copier@example.com", policy("copier", []access.Statement{read("prod"), read("dev"),
		write("dev", access.CreateFlag, access.ToggleFlag), {ID: "copy", ResourceType: access.TypeFlag, Effect: "allow",
			Actions: []string{string(access.CopyFlagTo)}, Resources: []string{"project/web:env/prod:flag/*"}}}))

	dev := e.dev.env.ID.String()
	overview := map[string]any{"targetEnvIds": []string{dev}}
	opts := map[string]any{"options": map[string]any{"onOffState": true}}
	copyB := map[string]any{"flagIds": []uuid.UUID{b.ID}}
	// Not allowed to read the target: every route is refused.
	s.do("POST", e.prod.flags+"/compare-overview", prodOnly, overview).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", e.prod.flags+"/a/compare-with/"+dev, prodOnly, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+dev, prodOnly, []uuid.UUID{b.ID}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", e.prod.flags+"/copy-to-env/"+dev, prodOnly, copyB).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", e.prod.flags+"/a/copy-settings-to/"+dev, prodOnly, opts).fails(t, http.StatusForbidden, "Forbidden")
	// Reading both compares, but writing needs the target's actions.
	s.do("POST", e.prod.flags+"/compare-overview", readBoth, overview).ok(t)
	s.do("GET", e.prod.flags+"/a/compare-with/"+dev, readBoth, nil).ok(t)
	res := decode[[]flagcopy.CopyToEnvPrecheckResult](t, s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+dev, readBoth, []uuid.UUID{b.ID}).ok(t))
	if res[0].PermissionCheck || res[0].Passed {
		t.Errorf("pre-check %+v, want the permission check failed", res[0])
	}
	s.do("POST", e.prod.flags+"/copy-to-env/"+dev, readBoth, copyB).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", e.prod.flags+"/a/copy-settings-to/"+dev, readBoth, opts).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, e.dev.env.ID); n != 1 {
		t.Fatalf("Dev has %d flags after refused copies, want 1", n)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1 AND is_enabled`, e.dev.env.ID); n != 0 {
		t.Fatal("a refused settings copy turned Dev's flag on")
	}
	// The target's own actions are enough, each for what it changes: turning
	// it on needs ToggleFlag; rules would need UpdateFlagTargetingRules. A
	// copy of the flag also needs CopyFlagTo on the source.
	res = decode[[]flagcopy.CopyToEnvPrecheckResult](t, s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+dev, writer, []uuid.UUID{b.ID}).ok(t))
	if res[0].PermissionCheck || res[0].Passed {
		t.Errorf("pre-check without CopyFlagTo %+v, want the permission check failed", res[0])
	}
	s.do("POST", e.prod.flags+"/copy-to-env/"+dev, writer, copyB).fails(t, http.StatusForbidden, "Forbidden")
	res = decode[[]flagcopy.CopyToEnvPrecheckResult](t, s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+dev, copier, []uuid.UUID{b.ID}).ok(t))
	if !res[0].PermissionCheck || !res[0].Passed {
		t.Errorf("pre-check with CopyFlagTo %+v, want passed", res[0])
	}
	s.do("POST", e.prod.flags+"/copy-to-env/"+dev, copier, copyB).ok(t)
	s.do("PUT", e.prod.flags+"/a/copy-settings-to/"+dev, writer, opts).ok(t)
	e.prod.setTargeting(a, nil, []map[string]any{ruleOn(a, "NL", "NL")})
	s.do("PUT", e.prod.flags+"/a/copy-settings-to/"+dev, writer, map[string]any{"options": map[string]any{"targetingRule": map[string]any{"copy": true, "mode": "overwrite"}}}).
		fails(t, http.StatusForbidden, "Forbidden")
}

// changes follows the change events SDKs are sent on, for the changes of
// one environment's flags.
type changes struct{ n chan struct{} }

func listenChanges(t *testing.T, s *server, envID uuid.UUID) *changes {
	t.Helper()
	sub := s.st.Projects().Changes().Subscribe()
	t.Cleanup(sub.Close)
	// Changes made before the listener first read are not its to tell.
	for deadline := time.Now().Add(10 * time.Second); !s.st.Projects().Changes().Live(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the change listener never listened")
		}
	}
	c := &changes{n: make(chan struct{}, 100)}
	go func() {
		for range sub.Ready() {
			for _, ev := range sub.Take() {
				if ev.Kind == feed.EventFlag && slices.Contains(ev.EnvIDs, envID) {
					c.n <- struct{}{}
				}
			}
		}
	}()
	return c
}

// wait waits for n flag events.
func (c *changes) wait(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-c.n:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d flag change notifications, want %d", i, n)
		}
	}
}

// TestCompareAndCopyAPageOf100 makes the largest requests: comparing a page
// of 100 flags whose rules name a segment, pre-checking and copying the 50
// that Dev lacks.
func TestCompareAndCopyAPageOf100(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.twoEnvs()
	shared := e.prod.createSegment(map[string]any{"name": "Staff", "key": "staff", "type": "shared",
		"scopes": []string{"organization/default-organization:project/web"}})
	var ids []uuid.UUID
	for i := range 100 {
		key := "flag-" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i)
		f := e.prod.createFlag(map[string]any{"name": key, "key": key})
		e.prod.setTargeting(f, nil, []map[string]any{segmentRule(f, shared.ID), ruleOn(f, "NL", "NL")})
		if i%2 == 0 {
			e.dev.createFlag(map[string]any{"name": key, "key": key})
		} else {
			ids = append(ids, f.ID)
		}
	}
	// How fast these answer is bunting-bench's compare-overview scenario.
	body := map[string]any{"targetEnvIds": []uuid.UUID{e.dev.env.ID}, "filter": map[string]any{"pageSize": 100}}
	page := decode[core.Paged[flagcopy.CompareFlagOverview]](t, s.do("POST", e.prod.flags+"/compare-overview", s.owner, body).ok(t))
	if len(page.Items) != 100 || len(page.Items[0].Diffs)+len(page.Items[1].Diffs) != 1 {
		t.Fatalf("overview: %d items", len(page.Items))
	}
	s.do("POST", e.prod.flags+"/copy-to-env-precheck/"+e.dev.env.ID.String(), s.owner, ids).ok(t)
	if r := decode[flagcopy.CopyToEnvResult](t, s.do("POST", e.prod.flags+"/copy-to-env/"+e.dev.env.ID.String(), s.owner,
		map[string]any{"flagIds": ids}).ok(t)); r.CopiedCount != 50 {
		t.Fatalf("copied %d", r.CopiedCount)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
