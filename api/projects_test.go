package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

func (s *server) createProject(name, key string) core.Project {
	s.t.Helper()
	return decode[core.Project](s.t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": name, "key": key}).ok(s.t))
}

func TestCreateProject(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web shop", "web")
	if p.Name != "Web shop" || p.Key != "web" || len(p.Environments) != 2 {
		t.Fatalf("project = %+v, want Web shop/web with two environments", p)
	}
	for i, want := range []struct{ name, key string }{{"Prod", "prod"}, {"Dev", "dev"}} {
		env := p.Environments[i]
		if env.Name != want.name || env.Key != want.key || env.ProjectID != p.ID || env.Settings.RequireChangeComment {
			t.Errorf("environment %d = %+v, want %s/%s", i, env, want.name, want.key)
		}
		if len(env.Secrets) != 2 || env.Secrets[0].Name != "Server Key" || env.Secrets[0].Type != "server" ||
			env.Secrets[1].Name != "Client Key" || env.Secrets[1].Type != "client" {
			t.Fatalf("secrets = %+v, want Server Key and Client Key", env.Secrets)
		}
		for _, sec := range env.Secrets {
			if got, ok := core.SecretEnvID(sec.Value); !ok || got != env.ID {
				t.Errorf("secret %q encodes %v, want environment %v", sec.Value, got, env.ID)
			}
		}
		if !strings.HasSuffix(env.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), "Z") {
			t.Errorf("createdAt %v is not UTC", env.CreatedAt)
		}
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Project' AND operation = 'Create' AND ref_id = $1`, p.ID.String()); n != 1 {
		t.Errorf("%d audit entries for the creation, want 1", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE current::text LIKE '%' || $1 || '%'`, p.Environments[0].Secrets[0].Value); n != 0 {
		t.Errorf("a secret value was written to the audit log")
	}

	post := func(body any) *reply { return s.do("POST", "/api/v1/projects", s.owner, body) }
	post(map[string]string{"name": "Again", "key": "WEB"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	post(map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required", "key_is_required")
	post(map[string]string{"name": "  ", "key": "has space"}).fails(t, http.StatusBadRequest, "name_is_required", "key_is_invalid")
	post(map[string]string{"name": strings.Repeat("n", 129), "key": strings.Repeat("k", 129)}).
		fails(t, http.StatusBadRequest, "name_is_invalid", "key_is_invalid")
	post(map[string]string{"name": "nul\x00byte", "key": "nul"}).fails(t, http.StatusBadRequest, "name_is_invalid")
	if n := s.count(`SELECT count(*) FROM projects`); n != 1 {
		t.Errorf("%d projects stored, want only the valid one", n)
	}
}

func TestGetListRenameDeleteProject(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	s.createProject("API", "api")

	got := decode[core.Project](t, s.do("GET", "/api/v1/projects/"+p.ID.String(), s.owner, nil).ok(t))
	if got.ID != p.ID || len(got.Environments) != 2 || len(got.Environments[0].Secrets) != 2 {
		t.Fatalf("got %+v, want the project with its environments and secrets", got)
	}
	list := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil).ok(t))
	if len(list) != 2 || list[0].Key != "web" || list[1].Key != "api" {
		t.Fatalf("list = %+v, want web then api", list)
	}

	renamed := decode[core.ProjectName](t, s.do("PUT", "/api/v1/projects/"+p.ID.String(), s.owner, map[string]string{"name": "Storefront", "key": "ignored"}).ok(t))
	if renamed.ID != p.ID || renamed.Name != "Storefront" {
		t.Fatalf("rename answered %+v", renamed)
	}
	if got := decode[core.Project](t, s.do("GET", "/api/v1/projects/"+p.ID.String(), s.owner, nil).ok(t)); got.Key != "web" || got.Name != "Storefront" {
		t.Fatalf("after rename: %+v, want name Storefront and key web", got)
	}
	s.do("PUT", "/api/v1/projects/"+p.ID.String(), s.owner, map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required")

	for _, path := range []string{"/api/v1/projects/" + uuid.NewString(), "/api/v1/projects/not-a-uuid"} {
		s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", path, s.owner, map[string]string{"name": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("DELETE", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}

	if r := s.do("DELETE", "/api/v1/projects/"+p.ID.String(), s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Fatalf("delete answered %s, want true", r.Data)
	}
	s.do("GET", "/api/v1/projects/"+p.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM environments`); n != 2 {
		t.Errorf("%d environments left, want only api's 2", n)
	}
	if n := s.count(`SELECT count(*) FROM env_secrets`); n != 4 {
		t.Errorf("%d secrets left, want only api's 4", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'Remove'`, p.ID.String()); n != 1 {
		t.Errorf("%d audit entries for the deletion, want 1", n)
	}
}

func TestProjectsOfAnotherOrganizationAreNotFound(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	other := s.otherOrganization().String()
	s.do("GET", "/api/v1/projects/"+other, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", "/api/v1/projects/"+other, s.owner, map[string]string{"name": "Mine"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", "/api/v1/projects/"+other, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", "/api/v1/projects/"+other+"/envs", s.owner, map[string]string{"name": "X", "key": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	if list := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil).ok(t)); len(list) != 0 {
		t.Fatalf("list shows %d projects of another organization", len(list))
	}
}

func TestDeveloperPermissions(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	nobody, _ := s.addMember("nobody@example.com")

	// A developer sees projects and environments but may not change them.
	if list := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", dev, nil).ok(t)); len(list) != 1 || len(list[0].Environments) != 2 {
		t.Fatalf("developer sees %+v, want the project with both environments", list)
	}
	s.do("POST", "/api/v1/projects", dev, map[string]string{"name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/projects/"+p.ID.String(), dev, map[string]string{"name": "Mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", "/api/v1/projects/"+p.ID.String(), dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	env := p.Environments[0]
	envPath := "/api/v1/projects/" + p.ID.String() + "/envs/" + env.ID.String()
	s.do("GET", envPath, dev, nil).ok(t)
	s.do("PUT", envPath, dev, map[string]any{"name": "P"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", envPath, dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/projects/"+p.ID.String()+"/envs", dev, map[string]string{"name": "QA", "key": "qa"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/envs/"+env.ID.String()+"/secrets", dev, map[string]string{"name": "K", "type": "server"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/workspaces", dev, map[string]string{"name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")

	// A member without policies sees nothing and can do nothing.
	if list := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", nobody, nil).ok(t)); len(list) != 0 {
		t.Fatalf("a member without policies sees %d projects", len(list))
	}
	s.do("GET", "/api/v1/projects/"+p.ID.String(), nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", envPath, nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.count(`SELECT count(*) FROM projects`); n != 1 {
		t.Errorf("refused requests changed the projects: %d", n)
	}
}

func TestEnvironments(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	base := "/api/v1/projects/" + p.ID.String() + "/envs"

	env := decode[core.Environment](t, s.do("POST", base, s.owner, map[string]any{"name": "QA", "key": "qa", "description": "for testers"}).ok(t))
	if env.Name != "QA" || env.Key != "qa" || env.Description != "for testers" || env.ProjectID != p.ID || len(env.Secrets) != 2 {
		t.Fatalf("created %+v", env)
	}
	s.do("POST", base, s.owner, map[string]string{"name": "Again", "key": "QA"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	s.do("POST", base, s.owner, map[string]any{"name": "", "key": "a/b", "description": strings.Repeat("d", 513)}).
		fails(t, http.StatusBadRequest, "name_is_required", "key_is_invalid", "description_is_invalid")

	path := base + "/" + env.ID.String()
	updated := decode[core.Environment](t, s.do("PUT", path, s.owner, map[string]any{"name": "Staging", "settings": map[string]bool{"requireChangeComment": true}}).ok(t))
	if updated.Name != "Staging" || updated.Key != "qa" || updated.Description != "for testers" || !updated.Settings.RequireChangeComment || len(updated.Secrets) != 2 {
		t.Fatalf("updated %+v, want Staging keeping key, description and secrets, requiring comments", updated)
	}
	got := decode[core.Environment](t, s.do("GET", path, s.owner, nil).ok(t))
	if !got.Settings.RequireChangeComment || got.Name != "Staging" {
		t.Fatalf("read back %+v", got)
	}
	// The key never changes; naming the current one, or none, is fine.
	s.do("PUT", path, s.owner, map[string]any{"name": "Staging", "key": "prod"}).fails(t, http.StatusBadRequest, "key_is_immutable")
	s.do("PUT", path, s.owner, map[string]any{"name": "Staging", "key": "QA"}).fails(t, http.StatusBadRequest, "key_is_immutable")
	if got := decode[core.Environment](t, s.do("PUT", path, s.owner, map[string]any{"name": "Staging", "key": "qa"}).ok(t)); got.Key != "qa" {
		t.Fatalf("key %q after naming the same key, want qa", got.Key)
	}

	// An environment is reached only through its own project.
	other := s.createProject("Other", "other")
	s.do("GET", "/api/v1/projects/"+other.ID.String()+"/envs/"+env.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("GET", base+"/"+uuid.NewString(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	s.do("DELETE", path, s.owner, nil).ok(t)
	s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM env_secrets WHERE env_id = $1`, env.ID); n != 0 {
		t.Errorf("%d secrets of the deleted environment remain", n)
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	env := s.createProject("Web", "web").Environments[0]
	base := "/api/v1/envs/" + env.ID.String() + "/secrets"

	sec := decode[core.Secret](t, s.do("POST", base, s.owner, map[string]string{"name": "Backend", "type": "server"}).ok(t))
	if sec.Name != "Backend" || sec.Type != "server" || len(sec.Value) != 44 {
		t.Fatalf("created %+v", sec)
	}
	if id, ok := core.SecretEnvID(sec.Value); !ok || id != env.ID {
		t.Fatalf("secret encodes %v, want %v", id, env.ID)
	}
	s.do("POST", base, s.owner, map[string]string{"name": "X", "type": "admin"}).fails(t, http.StatusBadRequest, "type_is_invalid")
	s.do("POST", base, s.owner, map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required", "type_is_required")

	// Update and delete answer true, as FeatBit's ApiResponse<bool>.
	if r := s.do("PUT", base+"/"+sec.ID.String(), s.owner, map[string]string{"name": "API server"}).ok(t); string(r.Data) != "true" {
		t.Fatalf("secret update answered %s, want true", r.Data)
	}
	var renamed core.Secret
	for _, x := range decode[core.Environment](t, s.do("GET", "/api/v1/projects/"+env.ProjectID.String()+"/envs/"+env.ID.String(), s.owner, nil).ok(t)).Secrets {
		if x.ID == sec.ID {
			renamed = x
		}
	}
	if renamed.Name != "API server" || renamed.Value != sec.Value {
		t.Fatalf("renamed %+v, want the same value under the new name", renamed)
	}
	s.do("PUT", base+"/"+uuid.NewString(), s.owner, map[string]string{"name": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	if r := s.do("DELETE", base+"/"+sec.ID.String(), s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Fatalf("secret delete answered %s, want true", r.Data)
	}
	s.do("DELETE", base+"/"+sec.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", "/api/v1/envs/"+uuid.NewString()+"/secrets", s.owner, map[string]string{"name": "X", "type": "server"}).fails(t, http.StatusNotFound, "ResourceNotFound")
}
