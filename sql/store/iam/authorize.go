package iam

import (
	"context"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// What an operation requires whatever its input says, for the API to
// refuse a caller before reading a body it would never act on: reading and
// decoding a body costs memory, and a caller who may not make the request
// should cost nothing. Each is the very check the operations it stands for
// make first, not a rule of its own; the operations still make it.

// AuthorizeIAM checks what every identity and access management operation
// requires: the caller's organization, and CanManageIAM.
func (s *IAM) AuthorizeIAM(a *core.Actor) error {
	_, err := a.IAMOrg(&core.Validator{})
	return err
}

// AuthorizeWorkspaceUpdate checks what changing the workspace's name and
// key requires (UpdateWorkspace).
func (s *IAM) AuthorizeWorkspaceUpdate(ctx context.Context, a *core.Actor) error {
	return s.authorizeWorkspace(ctx, a, access.UpdateWorkspaceGeneralSettings)
}

// AuthorizeWorkspaceSSO checks what changing or testing the workspace's
// single sign-on settings requires (UpdateWorkspaceSSO, CheckOIDCEndpoints).
func (s *IAM) AuthorizeWorkspaceSSO(ctx context.Context, a *core.Actor) error {
	return s.authorizeWorkspace(ctx, a, access.UpdateWorkspaceSSOSettings)
}

func (s *IAM) authorizeWorkspace(ctx context.Context, a *core.Actor, action access.Action) error {
	wsID, err := a.Workspace()
	if err != nil {
		return err
	}
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return core.Translate(err)
	}
	return s.core.RequireWorkspaceRight(ctx, a, action, ws)
}

// AuthorizeOrganizationUpdate checks what changing the organization's
// settings requires: UpdateOrganization refuses whoever may change none of
// them, whatever they send.
func (s *IAM) AuthorizeOrganizationUpdate(ctx context.Context, a *core.Actor) error {
	key, err := s.orgKey(ctx, a)
	if err != nil {
		return err
	}
	if may := core.OrganizationRights(a, key); !may.Name && !may.DefaultPermissions && !may.SortFlagsBy {
		return core.ErrForbidden
	}
	return nil
}

// AuthorizeOrganizationDeletion checks what deleting the organization requires.
func (s *IAM) AuthorizeOrganizationDeletion(ctx context.Context, a *core.Actor) error {
	key, err := s.orgKey(ctx, a)
	if err != nil {
		return err
	}
	return core.MayDeleteOrganization(a, key)
}

// AuthorizeOrganizationCreation checks what creating another organization
// in the workspace requires.
func (s *IAM) AuthorizeOrganizationCreation(a *core.Actor) error {
	return core.MayCreateOrganization(a)
}

func (s *IAM) orgKey(ctx context.Context, a *core.Actor) (string, error) {
	orgID, err := a.Org()
	if err != nil {
		return "", err
	}
	row, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return "", core.Translate(err)
	}
	return row.Key, nil
}
