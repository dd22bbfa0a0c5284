package core

import (
	"context"
	"encoding/json"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/google/uuid"
)

// The actor every operation is checked against, and the checks of it
// every seam makes.

// Actor is who makes a request and the workspace and organization it is made in.
type Actor struct {
	UserID uuid.UUID
	// TokenID is the access token that authenticated the request, or uuid.Nil
	// for a signed-in user.
	TokenID uuid.UUID
	// SessionID is the session that authenticated the request, or uuid.Nil.
	SessionID uuid.UUID
	// WorkspaceID and OrgID are the request's context; uuid.Nil when the
	// caller belongs to several and the request named none.
	WorkspaceID uuid.UUID
	OrgID       uuid.UUID
	// Address is the client's network address, for rate limits; may be empty.
	Address string
	// TriggerID is the flag trigger whose URL was called (RunTrigger), or uuid.Nil.
	TriggerID uuid.UUID
	Granted   []access.Statement
	// OrgKey is OrgID's key, which names it in resource names (organization
	// keys never change); "" when the request has no organization.
	OrgKey string
	// ServiceToken is set when a Service token authenticated the request: it
	// acts on its own statements, not as the UserID who made it.
	ServiceToken bool
}

// Can reports whether the actor may perform action on the resource named rn.
func (a *Actor) Can(action access.Action, rn string) bool {
	return access.Allows(a.Granted, action, rn)
}

// Statements returns the statements the actor acts with.
func (a *Actor) Statements() []access.Statement { return a.Granted }

// IsToken reports whether an access token authenticated the actor.
func (a *Actor) IsToken() bool { return a.TokenID != uuid.Nil }

// require returns ErrForbidden unless the actor may perform action on rn.
func (a *Actor) Require(action access.Action, rn string) error {
	if !a.Can(action, rn) {
		return ErrForbidden
	}
	return nil
}

// org returns the actor's organization, or a validation error when the
// request must name one.
func (a *Actor) Org() (uuid.UUID, error) {
	if a.OrgID == uuid.Nil {
		return uuid.Nil, Invalid("organization_is_required")
	}
	return a.OrgID, nil
}

func (a *Actor) Workspace() (uuid.UUID, error) {
	if a.WorkspaceID == uuid.Nil {
		return uuid.Nil, Invalid("workspace_is_required")
	}
	return a.WorkspaceID, nil
}

// MemberStatements returns a member's statements in an organization, from
// direct policies and from groups.
func (s *Core) MemberStatements(ctx context.Context, q *db.Queries, orgID, userID uuid.UUID) ([]access.Statement, error) {
	rows, err := q.ListMemberStatements(ctx, db.ListMemberStatementsParams{OrganizationID: orgID, UserID: userID})
	if err != nil {
		return nil, Translate(err)
	}
	var all []access.Statement
	for _, raw := range rows {
		var sts []access.Statement
		if err := json.Unmarshal(raw, &sts); err != nil {
			return nil, err
		}
		all = append(all, sts...)
	}
	return all, nil
}

// TokenStatements returns the statements an access token acts with: a
// Service token's own, a Personal token's creator's. A token that is turned
// off, or whose creator has left its organization, acts with nothing
// (ErrUnauthenticated): a token dies with its creator's membership.
func (s *Core) TokenStatements(ctx context.Context, t db.AccessToken) ([]access.Statement, error) {
	if t.Status != TokenActive {
		return nil, ErrUnauthenticated
	}
	member, err := s.Q.IsOrganizationUser(ctx, db.IsOrganizationUserParams{OrganizationID: t.OrganizationID, UserID: t.CreatorID})
	if err != nil {
		return nil, Translate(err)
	}
	if !member {
		return nil, ErrUnauthenticated
	}
	if t.Type != TokenService {
		return s.MemberStatements(ctx, s.Q, t.OrganizationID, t.CreatorID)
	}
	var sts []access.Statement
	if err := json.Unmarshal(t.Permissions, &sts); err != nil {
		return nil, err
	}
	return sts, nil
}

// Access token types and statuses.
const (
	TokenPersonal = "Personal"
	TokenService  = "Service"

	TokenActive   = "Active"
	TokenInactive = "Inactive"
)

// RequireIAM checks the one action every IAM read and write needs: who may
// manage IAM may grant anything, so nobody else may change or read it.
func (a *Actor) RequireIAM() error { return a.Require(access.CanManageIAM, IAMRN) }

// IAMOrg returns the actor's organization after checking the filter or
// other input problems in v, then CanManageIAM.
func (a *Actor) IAMOrg(v *Validator) (uuid.UUID, error) {
	orgID, err := a.Org()
	if err != nil {
		return uuid.Nil, err
	}
	if err := v.Err(); err != nil {
		return uuid.Nil, err
	}
	return orgID, a.RequireIAM()
}

// RequireWorkspaceRight checks a workspace setting's permission. The
// settings (single sign-on above all, which signs people in to all of them)
// act on every organization of the workspace, so the owner of one must not
// change them for the others: the permission is needed in every
// organization. The workspace's owner needs it only in the organization
// they act in, so organizations made without them (any member allowed
// CreateOrg can make some) cannot lock them out of their own workspace. An
// access token acts in its own organization only, so it may change them
// only when that is the workspace's one organization, whoever made it.
func (s *Core) RequireWorkspaceRight(ctx context.Context, a *Actor, action access.Action, ws db.Workspace) error {
	if err := a.Require(action, WorkspaceRN(ws.Key)); err != nil {
		return err
	}
	if !IsWorkspaceOwner(a, ws) && !s.canInEveryOrg(ctx, a, action, ws) {
		return ErrForbidden
	}
	return nil
}

// IsWorkspaceOwner reports whether a signed-in person is the workspace's
// owner (the account bootstrap created). Their access tokens are not: a
// token acts in its own organization only.
func IsWorkspaceOwner(a *Actor, ws db.Workspace) bool {
	return !a.IsToken() && ws.OwnerID != nil && *ws.OwnerID == a.UserID
}

// canInEveryOrg reports whether the actor holds action on the workspace in
// each of its organizations other than the current one (checked by the
// caller from the actor's statements).
func (s *Core) canInEveryOrg(ctx context.Context, a *Actor, action access.Action, ws db.Workspace) bool {
	orgs, err := s.Q.ListWorkspaceOrganizationIDs(ctx, ws.ID)
	if err != nil {
		return false
	}
	for _, org := range orgs {
		if org == a.OrgID {
			continue
		}
		if a.IsToken() {
			return false
		}
		sts, err := s.MemberStatements(ctx, s.Q, org, a.UserID)
		if err != nil || !access.Allows(sts, action, WorkspaceRN(ws.Key)) {
			return false
		}
	}
	return true
}

// TokenCreator is the user who created a token.
type TokenCreator struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email string    `json:"email"`
}
