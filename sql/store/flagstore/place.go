package flagstore

import (
	"context"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Place is where a signed-in person acts in the pages, which load it once a
// request with who they are: the project and environment they work in, and
// what they may do in the organization and there.
type Place struct {
	// Context is where the person last chose to work.
	Context core.UserContext
	// Project and Env are the working environment (without its secrets) and
	// its project; nil when the person may open no environment at all.
	Project *core.Project
	Env     *core.Environment
	// Projects are the projects with an environment the person may open,
	// with those environments (without their secrets).
	Projects []core.Project
	// Approvals is how many approvals a change to what a flag serves needs
	// in Env; 0 where its changes need none (see approvalsNeeded).
	Approvals int
	// Org is what the person may do in their organization, EnvRights what
	// they may create in Env and do to its flags (nothing without Env).
	Org       core.OrgRights
	EnvRights EnvRights
	// env is Env as loaded, with the keys that name it (InWorkingEnv).
	env core.EnvRow
}

// InWorkingEnv is ctx in which the store's operations find the working
// environment as the place loaded it, rather than reading it again: a
// flag's or segment's page reads or changes nothing but its flags and
// segments, so the environment read once for the request stays true for it.
func (pl Place) InWorkingEnv(ctx context.Context) context.Context {
	if pl.Env == nil {
		return ctx
	}
	return core.RememberLoadedEnvironment(ctx, pl.env)
}

// Place loads where a person acts in the pages, having last chosen uc, in
// one query: the environments of the organization the person may open, among
// which WorkingEnvironment chooses.
func (s *Flags) Place(ctx context.Context, a *core.Actor, uc core.UserContext) (Place, error) {
	orgID, err := a.Org()
	if err != nil {
		return Place{}, err
	}
	rows, err := s.core.Q.ListEnvironmentsWithProjects(ctx, orgID)
	if err != nil {
		return Place{}, core.Translate(err)
	}
	var projects []core.Project
	envs := map[uuid.UUID]core.EnvRow{}
	for _, r := range rows {
		if !core.MayOpenProject(a, r.Project.Key) || !core.MayOpenEnv(a, r.Project.Key, r.Environment.Key) {
			continue
		}
		if n := len(projects); n == 0 || projects[n-1].ID != r.Project.ID {
			projects = append(projects, core.Project{ID: r.Project.ID, Name: r.Project.Name, Key: r.Project.Key})
		}
		pr := &projects[len(projects)-1]
		pr.Environments = append(pr.Environments, core.EnvironmentFrom(r.Environment))
		envs[r.Environment.ID] = core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: r.Environment, ProjectKey: r.Project.Key,
			ProjectName: r.Project.Name, OrganizationID: orgID, OrganizationKey: a.OrgKey, WorkspaceID: a.WorkspaceID}}
	}
	pl := Place{Context: uc, Org: core.OrganizationRights(a, a.OrgKey), Projects: projects}
	pl.Project, pl.Env = core.WorkingEnvironment(uc, projects)
	if pl.Env != nil {
		env := envs[pl.Env.ID]
		pl.Approvals, pl.EnvRights, pl.env = ApprovalsNeeded(env.Environment), envRights(a, env), env
	}
	return pl, nil
}

// ProjectEnv names an environment as FeatBit's history does: "Project/Env".
func ProjectEnv(env core.EnvRow) string { return env.ProjectName + "/" + env.Environment.Name }
