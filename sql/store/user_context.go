package store

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
)

// UserContext is where a signed-in person works in the admin pages: an
// organization (of a workspace) and, in it, optionally a project and one of its
// environments. uuid.Nil stands for "none chosen".
type UserContext struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	ProjectID      uuid.UUID `json:"projectId"`
	EnvID          uuid.UUID `json:"envId"`
}

// UserContext returns where a user last worked: the remembered organization
// while the user still belongs to it, otherwise their oldest membership with
// no project or environment chosen. It is the zero UserContext for a user who
// belongs to no organization. The remembered project and environment are not
// re-checked here: pages choose among what ListProjects returns anyway.
func (s *Store) UserContext(ctx context.Context, userID uuid.UUID) (UserContext, error) {
	row, err := s.q.GetUserContext(ctx, userID)
	if err = translate(err); errors.Is(err, ErrNotFound) {
		return UserContext{}, nil
	} else if err != nil {
		return UserContext{}, err
	}
	return UserContext{WorkspaceID: row.WorkspaceID, OrganizationID: row.OrganizationID,
		ProjectID: deref(row.ProjectID), EnvID: deref(row.EnvID)}, nil
}

// SetUserContext remembers where the signed-in user works. A zero
// OrganizationID keeps the actor's organization; an environment implies its
// project. The user must belong to the organization (403) and be allowed to
// access the project and environment, which must be in it (404).
func (s *Store) SetUserContext(ctx context.Context, a *Actor, in UserContext) (UserContext, error) {
	if a.IsToken() {
		return UserContext{}, ErrForbidden
	}
	if in.OrganizationID == uuid.Nil {
		in.OrganizationID = a.OrgID
	}
	target, err := s.actorIn(ctx, a, in.OrganizationID)
	if err != nil {
		return UserContext{}, err
	}
	if in.EnvID != uuid.Nil {
		row, err := s.environmentOf(ctx, target, in.EnvID)
		if err != nil {
			return UserContext{}, err
		}
		if in.ProjectID != uuid.Nil && in.ProjectID != row.Environment.ProjectID {
			return UserContext{}, ErrNotFound
		}
		if err := target.require(access.CanAccessEnv, row.rn()); err != nil {
			return UserContext{}, err
		}
		in.ProjectID = row.Environment.ProjectID
	}
	if in.ProjectID != uuid.Nil {
		p, err := s.project(ctx, target, in.ProjectID)
		if err != nil {
			return UserContext{}, err
		}
		if err := target.require(access.CanAccessProject, ProjectRN(p.Key)); err != nil {
			return UserContext{}, err
		}
	}
	err = s.q.SetUserContext(ctx, db.SetUserContextParams{UserID: a.UserID, OrganizationID: target.OrgID,
		ProjectID: nilIfZero(in.ProjectID), EnvID: nilIfZero(in.EnvID)})
	if err != nil {
		return UserContext{}, translate(err)
	}
	in.WorkspaceID = target.WorkspaceID
	return in, nil
}

// actorIn is the signed-in user of a acting in another of their
// organizations: ErrForbidden when they are not a member of it.
func (s *Store) actorIn(ctx context.Context, a *Actor, orgID uuid.UUID) (*Actor, error) {
	if orgID == a.OrgID {
		if _, err := a.org(); err != nil {
			return nil, err
		}
		return a, nil
	}
	org, err := s.q.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	return s.UserActor(ctx, a.UserID, org.WorkspaceID.String(), org.ID.String())
}

func nilIfZero(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// Workplace is what frames every signed-in page: who is signed in, the
// organizations and projects they may switch between, and the environment
// they work in.
type Workplace struct {
	Profile       Profile
	Organizations []Organization
	Projects      []Project
	// Project and Env are the working environment and its project, as Place
	// has them (with the environment's secrets); nil when the person can
	// open no environment at all.
	Project *Project
	Env     *Environment
}

// Workplace loads the frame of the pages for a person working at uc.
func (s *Store) Workplace(ctx context.Context, a *Actor, uc UserContext) (Workplace, error) {
	profile, err := s.GetProfile(ctx, a)
	if err != nil {
		return Workplace{}, err
	}
	orgs, err := s.ListOrganizations(ctx, a)
	if err != nil {
		return Workplace{}, err
	}
	projects, err := s.ListProjects(ctx, a)
	if err != nil {
		return Workplace{}, err
	}
	w := Workplace{Profile: profile, Organizations: orgs, Projects: projects}
	w.Project, w.Env = workingEnvironment(uc, projects)
	return w, nil
}

// Place is where a signed-in person acts in the pages, which load it once a
// request with who they are: the project and environment they work in, and
// what they may do in the organization and there.
type Place struct {
	// Context is where the person last chose to work.
	Context UserContext
	// Project and Env are the working environment (without its secrets) and
	// its project; nil when the person may open no environment at all.
	Project *Project
	Env     *Environment
	// Approvals is how many approvals a change to what a flag serves needs
	// in Env; 0 where its changes need none (see approvalsNeeded).
	Approvals int
	// Org is what the person may do in their organization, EnvRights what
	// they may create in Env and do to its flags (nothing without Env).
	Org       OrgRights
	EnvRights EnvRights
}

// Place loads where a person acts in the pages, having last chosen uc, in
// one query: the environments of the organization the person may open, among
// which workingEnvironment chooses.
func (s *Store) Place(ctx context.Context, a *Actor, uc UserContext) (Place, error) {
	orgID, err := a.org()
	if err != nil {
		return Place{}, err
	}
	rows, err := s.q.ListEnvironmentsWithProjects(ctx, orgID)
	if err != nil {
		return Place{}, translate(err)
	}
	var projects []Project
	envs := map[uuid.UUID]envRow{}
	for _, r := range rows {
		if !mayOpenProject(a, r.Project.Key) || !mayOpenEnv(a, r.Project.Key, r.Environment.Key) {
			continue
		}
		if n := len(projects); n == 0 || projects[n-1].ID != r.Project.ID {
			projects = append(projects, Project{ID: r.Project.ID, Name: r.Project.Name, Key: r.Project.Key})
		}
		pr := &projects[len(projects)-1]
		pr.Environments = append(pr.Environments, environment(r.Environment))
		envs[r.Environment.ID] = envRow{db.GetEnvironmentRow{Environment: r.Environment, ProjectKey: r.Project.Key,
			ProjectName: r.Project.Name, OrganizationID: orgID, OrganizationKey: a.orgKey, WorkspaceID: a.WorkspaceID}}
	}
	pl := Place{Context: uc, Org: OrganizationRights(a, a.orgKey)}
	pl.Project, pl.Env = workingEnvironment(uc, projects)
	if pl.Env != nil {
		env := envs[pl.Env.ID]
		pl.Approvals, pl.EnvRights = approvalsNeeded(env.Environment), envRights(a, env)
	}
	return pl, nil
}

// workingEnvironment picks the environment the pages work in: the remembered
// one while the person can still see it, else the first environment of the
// remembered project, else the very first one.
func workingEnvironment(uc UserContext, projects []Project) (*Project, *Environment) {
	var project, first *Project
	var env, firstEnv *Environment
	for i := range projects {
		pr := &projects[i]
		for j := range pr.Environments {
			e := &pr.Environments[j]
			if e.ID == uc.EnvID {
				return pr, e
			}
			if j == 0 && pr.ID == uc.ProjectID {
				project, env = pr, e
			}
			if firstEnv == nil {
				first, firstEnv = pr, e
			}
		}
	}
	if env != nil {
		return project, env
	}
	return first, firstEnv
}
