package workplace

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
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
	// in Env; 0 where its changes need none (flagstore.ApprovalsNeeded).
	Approvals int
	// Org is what the person may do in their organization, EnvRights what
	// they may create in Env and do to its flags (nothing without Env).
	Org       core.OrgRights
	EnvRights flagstore.EnvRights
	// ReviewsWaiting is how many change requests wait for the person's
	// review in the environments they may open.
	ReviewsWaiting int

	// env is Env as loaded, with the keys that name it (InWorkingEnv).
	env core.EnvRow
	// framed are the projects the person may open that have an environment,
	// with those of their environments the person may open (none, for some).
	framed []core.Project
	// projectsInOrganization counts the organization's projects, with an
	// environment or not; projectsRead those the rows named.
	projectsInOrganization, projectsRead int
	// secrets are those of secretsOf, the environment the query took for
	// the working one (uuid.Nil when the person may not open it).
	secrets   []core.Secret
	secretsOf uuid.UUID
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
// which WorkingEnvironment chooses, with what the frame shows of them.
func (w *Workplaces) Place(ctx context.Context, a *core.Actor, uc core.UserContext) (Place, error) {
	orgID, err := a.Org()
	if err != nil {
		return Place{}, err
	}
	rows, err := w.core.Q.ListEnvironmentsWithProjects(ctx, db.ListEnvironmentsWithProjectsParams{
		OrganizationID: orgID, MemberID: a.UserID, EnvID: chosen(uc.EnvID), ProjectID: chosen(uc.ProjectID)})
	if err != nil {
		return Place{}, core.Translate(err)
	}
	pl := Place{Context: uc, Org: core.OrganizationRights(a, a.OrgKey)}
	envs := map[uuid.UUID]core.EnvRow{}
	var lastProject uuid.UUID
	for _, r := range rows {
		pl.projectsInOrganization = int(r.ProjectsInOrganization)
		if r.Project.ID != lastProject {
			pl.projectsRead, lastProject = pl.projectsRead+1, r.Project.ID
		}
		mayOpenEnv := core.MayOpenEnv(a, r.Project.Key, r.Environment.Key)
		// As the Reviews page lists them: in the environments the person may open.
		if mayOpenEnv {
			pl.ReviewsWaiting += int(r.ReviewsWaiting)
		}
		if !core.MayOpenProject(a, r.Project.Key) {
			continue
		}
		if n := len(pl.framed); n == 0 || pl.framed[n-1].ID != r.Project.ID {
			pl.framed = append(pl.framed, core.Project{ID: r.Project.ID, Name: r.Project.Name, Key: r.Project.Key})
		}
		if !mayOpenEnv {
			continue
		}
		if r.WorkingEnvSecrets != nil {
			if err := json.Unmarshal(r.WorkingEnvSecrets, &pl.secrets); err != nil {
				return Place{}, err
			}
			pl.secretsOf = r.Environment.ID
		}
		pr := &pl.framed[len(pl.framed)-1]
		pr.Environments = append(pr.Environments, core.EnvironmentFrom(r.Environment))
		envs[r.Environment.ID] = core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: r.Environment, ProjectKey: r.Project.Key,
			ProjectName: r.Project.Name, OrganizationID: orgID, OrganizationKey: a.OrgKey, WorkspaceID: a.WorkspaceID}}
	}
	for _, pr := range pl.framed {
		if len(pr.Environments) > 0 {
			pl.Projects = append(pl.Projects, pr)
		}
	}
	pl.Project, pl.Env = core.WorkingEnvironment(uc, pl.Projects)
	if pl.Env != nil {
		env := envs[pl.Env.ID]
		pl.Approvals, pl.EnvRights, pl.env = flagstore.ApprovalsNeeded(env.Environment), flagstore.RightsIn(a, env), env
	}
	return pl, nil
}

// chosen is a remembered choice for the query: NULL for none.
func chosen(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
