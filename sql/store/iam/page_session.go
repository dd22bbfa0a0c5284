package iam

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// PageSession is a signed-in person as every admin page needs them: the
// actor in the organization they last chose, where they work there, and
// what the top bar shows of them.
type PageSession struct {
	// Actor is nil-organization (OrgID uuid.Nil) for a user who belongs to
	// no organization.
	Actor   *core.Actor
	Context core.UserContext
	Profile Profile
	// Organizations are the ones of the working workspace, for the switcher.
	Organizations []Organization
}

// PageSession resolves a page's session token in three statements: the
// session's user with where they work (which proves their membership of
// that workspace and organization, so the workspaces need no reading), the
// workspace's organizations they belong to, and their statements in the
// working one. ErrUnauthenticated unless the session is live, as
// SessionActor.
func (s *IAM) PageSession(ctx context.Context, token string) (PageSession, error) {
	sessionID, userID, ok := s.verifySessionToken(token)
	if !ok {
		return PageSession{}, core.ErrUnauthenticated
	}
	row, err := s.core.Q.GetSessionUserContext(ctx, db.GetSessionUserContextParams{ID: sessionID, UserID: userID})
	if err != nil {
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			return PageSession{}, core.ErrUnauthenticated
		}
		return PageSession{}, err
	}
	ps := PageSession{Actor: &core.Actor{UserID: userID, SessionID: sessionID}, Profile: profile(row.User),
		Context: core.UserContext{WorkspaceID: row.WorkspaceID, OrganizationID: row.OrganizationID,
			ProjectID: core.Deref(row.ProjectID), EnvID: core.Deref(row.EnvID)}}
	if row.OrganizationID == uuid.Nil {
		return ps, nil
	}
	orgs, err := s.core.Q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: row.WorkspaceID, UserID: userID})
	if err != nil {
		return PageSession{}, core.Translate(err)
	}
	a := ps.Actor
	for _, o := range orgs {
		ps.Organizations = append(ps.Organizations, organization(o))
		if o.ID == row.OrganizationID {
			a.WorkspaceID, a.OrgID, a.OrgKey = row.WorkspaceID, o.ID, o.Key
		}
	}
	if a.OrgID == uuid.Nil { // left the organization since the first statement
		return ps, nil
	}
	a.Granted, err = s.core.MemberStatements(ctx, s.core.Q, a.OrgID, userID)
	return ps, err
}
