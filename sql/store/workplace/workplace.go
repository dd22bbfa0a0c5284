// Package workplace is where a signed-in person works in the admin pages:
// the environment they work in, what they may do there and in their
// organization (Place), and what frames every page (Frame). A page loads
// both in one statement, besides its session, in the common case.
package workplace

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Workplaces loads places and frames over the core.
type Workplaces struct{ core *core.Core }

// New returns the workplaces over c.
func New(c *core.Core) *Workplaces { return &Workplaces{core: c} }

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
		// As the Reviews page lists them: in the environments the person may open.
		if core.MayOpenEnv(a, r.Project.Key, r.Environment.Key) {
			pl.ReviewsWaiting += int(r.ReviewsWaiting)
		}
		if !core.MayOpenProject(a, r.Project.Key) || !core.MayOpenEnv(a, r.Project.Key, r.Environment.Key) {
			continue
		}
		if r.WorkingEnvSecrets != nil {
			if err := json.Unmarshal(r.WorkingEnvSecrets, &pl.secrets); err != nil {
				return Place{}, err
			}
			pl.secretsOf = r.Environment.ID
		}
		if n := len(pl.Projects); n == 0 || pl.Projects[n-1].ID != r.Project.ID {
			pl.Projects = append(pl.Projects, core.Project{ID: r.Project.ID, Name: r.Project.Name, Key: r.Project.Key})
		}
		pr := &pl.Projects[len(pl.Projects)-1]
		pr.Environments = append(pr.Environments, core.EnvironmentFrom(r.Environment))
		envs[r.Environment.ID] = core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: r.Environment, ProjectKey: r.Project.Key,
			ProjectName: r.Project.Name, OrganizationID: orgID, OrganizationKey: a.OrgKey, WorkspaceID: a.WorkspaceID}}
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

// Frame is what frames every signed-in page: who is signed in, the
// organizations and projects they may switch between, and the environment
// they work in.
type Frame struct {
	Profile       iam.Profile
	Organizations []iam.Organization
	// Projects are the projects the person may open, with the environments
	// they may open in them (a project may have none).
	Projects []core.Project
	// Project and Env are the working environment, with its secrets, and
	// its project, as Place has them; nil when the person can open no
	// environment at all.
	Project *core.Project
	Env     *core.Environment
}

// Frame is the frame of the pages for the session ps working at pl. It reads
// nothing where pl has it all: the organization's projects are read only when
// one has no environment, and the working environment's secrets only when
// permissions made another the working one than the query took.
func (w *Workplaces) Frame(ctx context.Context, ps iam.PageSession, pl Place) (Frame, error) {
	a := ps.Actor
	projects := make([]core.Project, 0, len(pl.Projects))
	for _, pr := range pl.Projects {
		// a copy: the frame's working environment gets its secrets
		pr.Environments = append([]core.Environment{}, pr.Environments...)
		projects = append(projects, pr)
	}
	if pl.projectsRead < pl.projectsInOrganization || len(pl.Projects) == 0 {
		rows, err := w.core.Q.ListProjects(ctx, a.OrgID)
		if err != nil {
			return Frame{}, core.Translate(err)
		}
		projects = withBareProjects(a, rows, projects)
	}
	f := Frame{Profile: ps.Profile, Organizations: ps.Organizations, Projects: projects}
	f.Project, f.Env = core.WorkingEnvironment(pl.Context, projects)
	if f.Env == nil {
		return f, nil
	}
	secrets := pl.secrets
	if f.Env.ID != pl.secretsOf {
		rows, err := w.core.Q.ListSecrets(ctx, []uuid.UUID{f.Env.ID})
		if err != nil {
			return Frame{}, core.Translate(err)
		}
		secrets = make([]core.Secret, len(rows))
		for i, r := range rows {
			secrets[i] = core.Secret{ID: r.ID, Name: r.Name, Type: r.Type, Value: r.Value}
		}
	}
	f.Env.Secrets = secrets
	return f, nil
}

// FrameAt is Frame with the place of ps read anew: after a change, which
// may have changed the projects and environments.
func (w *Workplaces) FrameAt(ctx context.Context, ps iam.PageSession) (Frame, error) {
	pl, err := w.Place(ctx, ps.Actor, ps.Context)
	if err != nil {
		return Frame{}, err
	}
	return w.Frame(ctx, ps, pl)
}

// withBareProjects is every project of rows the person may open, in their
// order, with the environments opened has for them (none for the rest).
func withBareProjects(a *core.Actor, rows []db.Project, opened []core.Project) []core.Project {
	envs := make(map[uuid.UUID][]core.Environment, len(opened))
	for _, pr := range opened {
		envs[pr.ID] = pr.Environments
	}
	var projects []core.Project
	for _, r := range rows {
		if core.MayOpenProject(a, r.Key) {
			projects = append(projects, core.Project{ID: r.ID, Name: r.Name, Key: r.Key, Environments: append([]core.Environment{}, envs[r.ID]...)})
		}
	}
	return projects
}
