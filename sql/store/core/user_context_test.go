package core

import (
	"testing"

	"github.com/google/uuid"
)

// TestWorkingEnvironment: the remembered environment while it is visible,
// else the first environment of the remembered project, else the first one.
func TestWorkingEnvironment(t *testing.T) {
	id := func() uuid.UUID { return uuid.New() }
	web, api := Project{ID: id(), Key: "web"}, Project{ID: id(), Key: "api"}
	web.Environments = []Environment{{ID: id(), Key: "prod"}, {ID: id(), Key: "dev"}}
	api.Environments = []Environment{{ID: id(), Key: "prod"}, {ID: id(), Key: "dev"}}
	projects := []Project{web, api, {ID: id(), Key: "empty"}}
	for _, c := range []struct {
		name       string
		uc         UserContext
		wantEnv    uuid.UUID
		wantProjID uuid.UUID
	}{
		{"remembered environment", UserContext{ProjectID: web.ID, EnvID: api.Environments[1].ID}, api.Environments[1].ID, api.ID},
		{"gone environment, remembered project", UserContext{ProjectID: api.ID, EnvID: id()}, api.Environments[0].ID, api.ID},
		{"nothing remembered", UserContext{}, web.Environments[0].ID, web.ID},
		{"remembered project gone", UserContext{ProjectID: id()}, web.Environments[0].ID, web.ID},
	} {
		pr, env := WorkingEnvironment(c.uc, projects)
		if pr == nil || env == nil || env.ID != c.wantEnv || pr.ID != c.wantProjID {
			t.Errorf("%s: got %v %v, want project %s environment %s", c.name, pr, env, c.wantProjID, c.wantEnv)
		}
	}
	if pr, env := WorkingEnvironment(UserContext{}, []Project{{ID: id()}}); pr != nil || env != nil {
		t.Errorf("no environment at all: got %v %v, want none", pr, env)
	}
}
