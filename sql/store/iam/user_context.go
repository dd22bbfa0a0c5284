package iam

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// UserContext returns where a user last worked: the remembered organization
// while the user still belongs to it, otherwise their oldest membership with
// no project or environment chosen. It is the zero UserContext for a user who
// belongs to no organization. The remembered project and environment are not
// re-checked here: pages choose among what ListProjects returns anyway.
func (s *IAM) UserContext(ctx context.Context, userID uuid.UUID) (core.UserContext, error) {
	row, err := s.core.Q.GetUserContext(ctx, userID)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return core.UserContext{}, nil
	} else if err != nil {
		return core.UserContext{}, err
	}
	return core.UserContext{WorkspaceID: row.WorkspaceID, OrganizationID: row.OrganizationID,
		ProjectID: core.Deref(row.ProjectID), EnvID: core.Deref(row.EnvID)}, nil
}

// SetUserContext remembers where the signed-in user works. A zero
// OrganizationID keeps the actor's organization; an environment implies its
// project. The user must belong to the organization (403) and be allowed to
// access the project and environment, which must be in it (404).
func (s *IAM) SetUserContext(ctx context.Context, a *core.Actor, in core.UserContext) (core.UserContext, error) {
	if a.IsToken() {
		return core.UserContext{}, core.ErrForbidden
	}
	if in.OrganizationID == uuid.Nil {
		in.OrganizationID = a.OrgID
	}
	target, err := s.actorIn(ctx, a, in.OrganizationID)
	if err != nil {
		return core.UserContext{}, err
	}
	if in.EnvID != uuid.Nil {
		row, err := s.core.EnvironmentOf(ctx, target, in.EnvID)
		if err != nil {
			return core.UserContext{}, err
		}
		if in.ProjectID != uuid.Nil && in.ProjectID != row.Environment.ProjectID {
			return core.UserContext{}, core.ErrNotFound
		}
		if err := target.Require(access.CanAccessEnv, row.RN()); err != nil {
			return core.UserContext{}, err
		}
		in.ProjectID = row.Environment.ProjectID
	}
	if in.ProjectID != uuid.Nil {
		p, err := s.core.Project(ctx, target, in.ProjectID)
		if err != nil {
			return core.UserContext{}, err
		}
		if err := target.Require(access.CanAccessProject, core.ProjectRN(p.Key)); err != nil {
			return core.UserContext{}, err
		}
	}
	err = s.core.Q.SetUserContext(ctx, db.SetUserContextParams{UserID: a.UserID, OrganizationID: target.OrgID,
		ProjectID: nilIfZero(in.ProjectID), EnvID: nilIfZero(in.EnvID)})
	if err != nil {
		return core.UserContext{}, core.Translate(err)
	}
	// The pages keep where a person works with their cached session: this
	// instance forgets it now, the others when the change's notification
	// comes (migration 0047).
	s.core.AccessChanged()
	in.WorkspaceID = target.WorkspaceID
	return in, nil
}

// actorIn is the signed-in user of a acting in another of their
// organizations: ErrForbidden when they are not a member of it.
func (s *IAM) actorIn(ctx context.Context, a *core.Actor, orgID uuid.UUID) (*core.Actor, error) {
	if orgID == a.OrgID {
		if _, err := a.Org(); err != nil {
			return nil, err
		}
		return a, nil
	}
	org, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, core.Translate(err)
	}
	return s.UserActor(ctx, a.UserID, org.WorkspaceID.String(), org.ID.String())
}

func nilIfZero(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
