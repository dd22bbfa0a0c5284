package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
)

// The is-key-used and is-name-used checks FeatBit's clients make while a key
// or name is typed. Each needs the permission of the change it prepares, so
// that nobody learns which keys another part of the workspace uses; a missing
// key or name is refused rather than answered.

// IsWorkspaceKeyUsed tells whether another workspace has the key (needs
// UpdateWorkspaceGeneralSettings as changing the key does, see
// RequireWorkspaceRight: only those who may change the key ask).
func (s *Core) IsWorkspaceKeyUsed(ctx context.Context, a *Actor, key string) (bool, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return false, err
	}
	if err := requiredQuery("key", key); err != nil {
		return false, err
	}
	ws, err := s.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return false, Translate(err)
	}
	if err := s.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceGeneralSettings, ws); err != nil {
		return false, err
	}
	used, err := s.Q.IsWorkspaceKeyUsed(ctx, db.IsWorkspaceKeyUsedParams{ID: wsID, Key: key})
	return used, Translate(err)
}

// IsOrganizationKeyUsed tells whether an organization of the current
// workspace has the key, the current one included (needs CreateOrg, or
// UpdateOrgName for onboarding, which sets the current organization's key).
func (s *Core) IsOrganizationKeyUsed(ctx context.Context, a *Actor, key string) (bool, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return false, err
	}
	if err := requiredQuery("key", key); err != nil {
		return false, err
	}
	allowed := MayCreateOrganization(a) == nil
	if !allowed && a.OrgID != uuid.Nil {
		org, err := s.Q.GetOrganization(ctx, a.OrgID)
		if err != nil {
			return false, Translate(err)
		}
		allowed = a.Can(access.UpdateOrgName, OrganizationRN(org.Key))
	}
	if !allowed {
		return false, ErrForbidden
	}
	used, err := s.Q.IsOrganizationKeyUsed(ctx, db.IsOrganizationKeyUsedParams{WorkspaceID: wsID, Key: key})
	return used, Translate(err)
}

// IsProjectKeyUsed tells whether the organization has a project with the key
// (needs CreateProject).
func (s *Core) IsProjectKeyUsed(ctx context.Context, a *Actor, key string) (bool, error) {
	orgID, err := a.Org()
	if err != nil {
		return false, err
	}
	if err := requiredQuery("key", key); err != nil {
		return false, err
	}
	if err := MayCreateProject(a); err != nil {
		return false, err
	}
	used, err := s.Q.IsProjectKeyUsed(ctx, db.IsProjectKeyUsedParams{OrganizationID: orgID, Key: key})
	return used, Translate(err)
}

// IsEnvironmentKeyUsed tells whether a project of the organization has an
// environment with the key (needs CreateEnv in the project).
func (s *Core) IsEnvironmentKeyUsed(ctx context.Context, a *Actor, projectID uuid.UUID, key string) (bool, error) {
	p, err := s.Project(ctx, a, projectID)
	if err != nil {
		return false, err
	}
	if err := requiredQuery("key", key); err != nil {
		return false, err
	}
	if err := mayCreateEnvironment(a, p.Key); err != nil {
		return false, err
	}
	used, err := s.Q.IsEnvironmentKeyUsed(ctx, db.IsEnvironmentKeyUsedParams{ProjectID: projectID, Key: key})
	return used, Translate(err)
}

// IsGroupNameUsed tells whether the organization has a group with the name
// (needs CanManageIAM).
func (s *Core) IsGroupNameUsed(ctx context.Context, a *Actor, name string) (bool, error) {
	var v Validator
	v.Required("name", name, MaxNameLen)
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return false, err
	}
	used, err := s.Q.IsGroupNameUsed(ctx, db.IsGroupNameUsedParams{OrganizationID: orgID, Name: name})
	return used, Translate(err)
}

// IsAccessTokenNameUsed tells whether the organization has an access token
// with the name (needs ManagePersonalAccessTokens or ManageServiceAccessTokens).
func (s *Core) IsAccessTokenNameUsed(ctx context.Context, a *Actor, name string) (bool, error) {
	orgID, err := a.Org()
	if err != nil {
		return false, err
	}
	if err := requiredQuery("name", name); err != nil {
		return false, err
	}
	if !a.Can(access.ManagePersonalAccessTokens, AccessTokenRN) && !a.Can(access.ManageServiceAccessTokens, AccessTokenRN) {
		return false, ErrForbidden
	}
	used, err := s.Q.IsAccessTokenNameUsed(ctx, db.IsAccessTokenNameUsedParams{OrganizationID: orgID, Name: name})
	return used, Translate(err)
}

// requiredQuery refuses a missing or overlong key or name to look up.
func requiredQuery(field, value string) error {
	var v Validator
	v.Required(field, value, MaxNameLen)
	return v.Err()
}
