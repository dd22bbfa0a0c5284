package core

import (
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
