package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestKeyAndNameChecks asks each is-key-used and is-name-used route, with
// FeatBit's query names, about a taken key in another case and a free one.
func TestKeyAndNameChecks(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := s.createProject("Web", "web")
	s.createGroup("Ops")
	s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "ci", "type": "Personal"}).ok(t)
	_, err := s.q.CreateWorkspace(context.Background(), db.CreateWorkspaceParams{Name: "Theirs", Key: "theirs"})
	must(t, err)
	envs := "/api/v1/projects/" + p.ID.String() + "/envs/is-key-used"
	for _, c := range []struct {
		path, param, taken, free string
	}{
		{"/api/v1/workspaces/is-key-used", "key", "THEIRS", "default-workspace"}, // its own key is not "used"
		{"/api/v1/organizations/is-key-used", "key", "Default-Organization", "acme"},
		{"/api/v1/projects/is-key-used", "key", "WEB", "api"},
		{envs, "key", "Prod", "qa"},
		{"/api/v1/groups/is-name-used", "name", "ops", "devs"},
		{"/api/v1/access-tokens/is-name-used", "name", "CI", "cd"},
	} {
		for value, want := range map[string]string{c.taken: "true", c.free: "false"} {
			if r := s.do("GET", c.path+"?"+c.param+"="+value, s.owner, nil).ok(t); string(r.Data) != want {
				t.Errorf("%s?%s=%s: got %s, want %s", c.path, c.param, value, r.Data, want)
			}
		}
		s.do("GET", c.path, s.owner, nil).fails(t, http.StatusBadRequest, c.param+"_is_required")
	}
	s.do("GET", "/api/v1/projects/"+uuid.NewString()+"/envs/is-key-used?key=prod", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	// Each check needs the permission of the change it prepares.
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	for _, path := range []string{"/api/v1/workspaces/is-key-used?key=x", "/api/v1/organizations/is-key-used?key=x",
		"/api/v1/projects/is-key-used?key=x", envs + "?key=x", "/api/v1/groups/is-name-used?name=x"} {
		s.do("GET", path, dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	}
	s.do("GET", "/api/v1/access-tokens/is-name-used?name=x", dev, nil).ok(t) // developers manage their own tokens
}

func TestResources(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	web := s.createProject("Web", "web")
	s.createProject("Mobile", "mobile")

	rs := decode[[]core.Resource](t, s.do("GET", "/api/v1/resources?type=project", s.owner, nil).ok(t))
	if len(rs) != 3 || rs[0].RN != "project/*" || rs[0].ID.String() != "e77679a2-e79b-43e5-aa9f-fd6c980239be" ||
		rs[1] != (core.Resource{ID: web.ID, Name: "Web", RN: "project/web", Type: "project"}) || rs[2].RN != "project/mobile" {
		t.Fatalf("projects %+v", rs)
	}
	rs = decode[[]core.Resource](t, s.do("GET", "/api/v1/resources?type=env&name=PRO", s.owner, nil).ok(t))
	if len(rs) != 3 || rs[0].RN != "project/*:env/*" || rs[1].RN != "project/web:env/prod" || rs[1].Name != "Prod" || rs[2].RN != "project/mobile:env/prod" {
		t.Fatalf("environments named like PRO %+v", rs)
	}
	for typ, rn := range map[string]string{"*": "*", "flag": "project/*:env/*:flag/*", "segment": "project/*:env/*:segment/*", "iam": "iam/*",
		"relay-proxy": "relay-proxy/*"} {
		rs := decode[[]core.Resource](t, s.do("GET", "/api/v1/resources?type="+typ, s.owner, nil).ok(t))
		if len(rs) != 1 || rs[0].RN != rn || rs[0].Type != typ {
			t.Errorf("type %s: %+v, want the one entry %s", typ, rs, rn)
		}
	}
	s.do("GET", "/api/v1/resources", s.owner, nil).fails(t, http.StatusBadRequest, "type_is_required")
	s.do("GET", "/api/v1/resources?type=rocket", s.owner, nil).fails(t, http.StatusBadRequest, "type_is_invalid")

	// A member sees the projects and environments they may access.
	webOnly := []access.Statement{{ID: "w", ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/web"}}}
	pol := s.createPolicy("Web", "web-only")
	s.do("PUT", "/api/v1/policies/"+pol.ID.String()+"/statements", s.owner, webOnly).ok(t)
	member, _ := s.addMember("member@example.com", pol.ID)
	rs = decode[[]core.Resource](t, s.do("GET", "/api/v1/resources?type=project", member, nil).ok(t))
	if len(rs) != 2 || rs[1].RN != "project/web" {
		t.Fatalf("member's projects %+v, want the all entry and Web", rs)
	}

	// v2: organization-prefixed names; at the workspace level across the caller's organizations.
	v2 := decode[[]core.ResourceV2](t, s.do("GET", "/api/v2/resources?spaceLevel=organization&types=project&types=env", s.owner, nil).ok(t))
	if len(v2) != 8 || v2[0].RN != "organization/*:project/*" || v2[1].RN != "organization/default-organization:project/web" ||
		v2[1].PathName != "Web" || v2[3].RN != "organization/*:project/*:env/*" || v2[4].PathName != "Web/Prod" {
		t.Fatalf("organization level %+v", v2)
	}
	acme := s.createOrg("Acme", "acme")
	s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Api", "key": "api"}, "Organization", acme.ID.String()).ok(t)
	def := []string{"Organization", s.orgID.String()}
	v2 = decode[[]core.ResourceV2](t, s.do("GET", "/api/v2/resources?spaceLevel=workspace&types=organization,env&name=prod", s.owner, nil, def...).ok(t))
	want := []string{"organization/default-organization:project/web:env/prod", "organization/default-organization:project/mobile:env/prod",
		"organization/acme:project/api:env/prod"}
	if len(v2) != len(want) {
		t.Fatalf("workspace level named prod %+v, want %v", v2, want)
	}
	for i, rn := range want {
		if v2[i].RN != rn {
			t.Errorf("resource %d: %s, want %s", i, v2[i].RN, rn)
		}
	}
	if v2[2].PathName != "Acme/Api/Prod" {
		t.Errorf("path name %q, want Acme/Api/Prod", v2[2].PathName)
	}
	orgs := decode[[]core.ResourceV2](t, s.do("GET", "/api/v2/resources?spaceLevel=workspace&types=organization", s.owner, nil, def...).ok(t))
	if len(orgs) != 3 || orgs[0].RN != "organization/*" || orgs[2].RN != "organization/acme" || orgs[2].ID != acme.ID {
		t.Fatalf("organizations %+v", orgs)
	}
	// The member belongs to the default organization only: Acme's projects stay hidden.
	v2 = decode[[]core.ResourceV2](t, s.do("GET", "/api/v2/resources?spaceLevel=workspace&types=project&name=a", member, nil).ok(t))
	if len(v2) != 0 {
		t.Errorf("member sees %+v", v2)
	}
	s.do("GET", "/api/v2/resources?types=env", s.owner, nil, def...).fails(t, http.StatusBadRequest, "spaceLevel_is_required")
	s.do("GET", "/api/v2/resources?spaceLevel=galaxy&types=flag", s.owner, nil, def...).fails(t, http.StatusBadRequest, "spaceLevel_is_invalid", "types_is_invalid")
	s.do("GET", "/api/v2/resources?spaceLevel=workspace", s.owner, nil, def...).fails(t, http.StatusBadRequest, "types_is_required")
}
