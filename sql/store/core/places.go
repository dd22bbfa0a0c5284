package core

import (
	"context"

	"github.com/google/uuid"
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

// WorkingEnvironment picks the environment the pages work in: the remembered
// one while the person can still see it, else the first environment of the
// remembered project, else the very first one.
func WorkingEnvironment(uc UserContext, projects []Project) (*Project, *Environment) {
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

// FrameProjects is ListProjects for a page that loaded, with its place, the
// environments the person may open (opened: the projects that have some,
// with them): it reads the organization's projects, for those without any,
// and the secrets of the working environment at uc alone, the only ones a
// page's frame shows. Other environments come without their secrets.
func (s *Core) FrameProjects(ctx context.Context, a *Actor, uc UserContext, opened []Project) ([]Project, error) {
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	rows, err := s.Q.ListProjects(ctx, orgID)
	if err != nil {
		return nil, Translate(err)
	}
	envs := make(map[uuid.UUID][]Environment, len(opened))
	for _, pr := range opened {
		envs[pr.ID] = pr.Environments
	}
	var projects []Project
	for _, r := range rows {
		if MayOpenProject(a, r.Key) {
			// a copy: the frame's working environment gets its secrets
			pr := Project{ID: r.ID, Name: r.Name, Key: r.Key, Environments: append([]Environment{}, envs[r.ID]...)}
			projects = append(projects, pr)
		}
	}
	if _, env := WorkingEnvironment(uc, projects); env != nil {
		secrets, err := s.Q.ListSecrets(ctx, []uuid.UUID{env.ID})
		if err != nil {
			return nil, Translate(err)
		}
		env.Secrets = make([]Secret, len(secrets))
		for i, sr := range secrets {
			env.Secrets[i] = secret(sr)
		}
	}
	return projects, nil
}
