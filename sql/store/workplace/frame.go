package workplace

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

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
	projects := make([]core.Project, 0, len(pl.framed))
	for _, pr := range pl.framed {
		// a copy: the frame's working environment gets its secrets
		pr.Environments = append([]core.Environment{}, pr.Environments...)
		projects = append(projects, pr)
	}
	// No row tells how many projects there are when none has an environment.
	if pl.projectsInOrganization == 0 || pl.projectsRead < pl.projectsInOrganization {
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
