package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
)

// What the operations on projects, environments and secrets require
// whatever their input says, for the surfaces to refuse a caller before
// reading a body they would never act on (see iam's AuthorizeIAM). Each is
// the check its operation makes, by the project or environment the path
// names; the operations still make it.

// AuthorizeProjectCreation checks what creating a project requires.
func (s *Core) AuthorizeProjectCreation(a *Actor) error {
	if _, err := a.Org(); err != nil {
		return err
	}
	return MayCreateProject(a)
}

// AuthorizeProjectRename checks what renaming a project requires.
func (s *Core) AuthorizeProjectRename(ctx context.Context, a *Actor, projectID uuid.UUID) error {
	p, err := s.Project(ctx, a, projectID)
	if err != nil {
		return err
	}
	return mayRenameProject(a, p.Key)
}

// AuthorizeProjectDeletion checks what deleting a project requires.
func (s *Core) AuthorizeProjectDeletion(ctx context.Context, a *Actor, projectID uuid.UUID) error {
	p, err := s.Project(ctx, a, projectID)
	if err != nil {
		return err
	}
	return mayDeleteProject(a, p.Key)
}

// AuthorizeEnvironmentCreation checks what adding an environment to a
// project requires.
func (s *Core) AuthorizeEnvironmentCreation(ctx context.Context, a *Actor, projectID uuid.UUID) error {
	p, err := s.Project(ctx, a, projectID)
	if err != nil {
		return err
	}
	return mayCreateEnvironment(a, p.Key)
}

// AuthorizeEnvironmentUpdate checks what changing a project's environment
// (its name, description and settings) requires.
func (s *Core) AuthorizeEnvironmentUpdate(ctx context.Context, a *Actor, projectID, envID uuid.UUID) error {
	return s.authorizeInProjectEnv(ctx, a, projectID, envID, access.UpdateEnvSettings)
}

// AuthorizeEnvironmentDeletion checks what deleting a project's
// environment requires.
func (s *Core) AuthorizeEnvironmentDeletion(ctx context.Context, a *Actor, projectID, envID uuid.UUID) error {
	return s.authorizeInProjectEnv(ctx, a, projectID, envID, access.DeleteEnv)
}

// AuthorizeSecretCreation checks what adding a secret to an environment requires.
func (s *Core) AuthorizeSecretCreation(ctx context.Context, a *Actor, envID uuid.UUID) error {
	return s.authorizeInEnv(ctx, a, envID, access.CreateEnvSecret)
}

// AuthorizeSecretRename checks what renaming an environment's secret requires.
func (s *Core) AuthorizeSecretRename(ctx context.Context, a *Actor, envID uuid.UUID) error {
	return s.authorizeInEnv(ctx, a, envID, access.UpdateEnvSecret)
}

// AuthorizeSecretDeletion checks what deleting an environment's secret requires.
func (s *Core) AuthorizeSecretDeletion(ctx context.Context, a *Actor, envID uuid.UUID) error {
	return s.authorizeInEnv(ctx, a, envID, access.DeleteEnvSecret)
}

func (s *Core) authorizeInProjectEnv(ctx context.Context, a *Actor, projectID, envID uuid.UUID, action access.Action) error {
	row, err := s.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return err
	}
	return a.Require(action, row.RN())
}

func (s *Core) authorizeInEnv(ctx context.Context, a *Actor, envID uuid.UUID, action access.Action) error {
	row, err := s.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return a.Require(action, row.RN())
}
