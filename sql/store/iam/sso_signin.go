package iam

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Signing in through single sign-on: the attempt, its state and the
// protocol are the sso seam's and web's; what a verified identity becomes
// (a user, a membership, a session, in one transaction) is identity's.

// OIDCSettingsOf reads a workspace's OIDC settings, the client secret still sealed.
func OIDCSettingsOf(ws db.Workspace) (OIDCSettings, error) {
	var o OIDCSettings
	if ws.SsoOidc == nil {
		return o, core.ErrSSONotConfigured
	}
	if err := json.Unmarshal(ws.SsoOidc, &o); err != nil {
		return o, err
	}
	if o.UserEmailClaim == "" {
		o.UserEmailClaim = "email"
	}
	return o, nil
}

// SignInWithSSO signs in the person a verified id token of the workspace's
// provider names. The email comes from the workspace's email claim; an
// email_verified claim that is false refuses the sign-in. The user is
// matched by email case-insensitively or created without a password; a
// user with no organization in the workspace joins it and its default
// (oldest) organization with that organization's default permissions. All of
// it, with its audit entry, is one transaction; nothing is kept on failure.
func (s *IAM) SignInWithSSO(ctx context.Context, wsID uuid.UUID, claims map[string]any) (Session, error) {
	return s.signInWithSSO(ctx, wsID, claims, nil)
}

// signInWithSSO is SignInWithSSO; also, when given, in the sign-in's
// transaction, with the session made.
func (s *IAM) signInWithSSO(ctx context.Context, wsID uuid.UUID, claims map[string]any, also func(*db.Queries, Session) error) (Session, error) {
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return Session{}, core.Translate(err)
	}
	settings, err := OIDCSettingsOf(ws)
	if err != nil {
		return Session{}, err
	}
	email, _ := claims[settings.UserEmailClaim].(string)
	email = strings.TrimSpace(email)
	var v core.Validator
	if checkEmail(&v, "email", email); v.Err() != nil {
		return Session{}, core.ErrSSOEmailMissing
	}
	if !emailVerified(claims["email_verified"]) {
		return Session{}, core.ErrSSOEmailUnverified
	}
	name, _ := claims["name"].(string)
	if name = strings.TrimSpace(name); name == "" || len([]rune(name)) > core.MaxNameLen {
		name = emailName(email)
	}
	// Two first sign-ins of one new email at once: the loser of the insert
	// race finds the winner's user on its second try.
	for try := 0; ; try++ {
		session, err := s.ssoSignIn(ctx, wsID, email, name, also)
		if try == 0 && errors.Is(err, core.ErrKeyUsed) {
			continue
		}
		return session, err
	}
}

// emailVerified is false only for a claim that says so, as a boolean or,
// from some providers, a string.
func emailVerified(claim any) bool {
	switch v := claim.(type) {
	case bool:
		return v
	case string:
		return !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return true
}

func (s *IAM) ssoSignIn(ctx context.Context, wsID uuid.UUID, email, name string, also func(*db.Queries, Session) error) (Session, error) {
	var session Session
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		user, err := q.GetUserByEmail(ctx, email)
		created := false
		if errors.Is(core.Translate(err), core.ErrNotFound) {
			user, err = q.CreateUser(ctx, db.CreateUserParams{Email: email, Name: name})
			created = true
		}
		if err != nil {
			return err
		}
		orgs, err := q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: user.ID})
		if err != nil {
			return err
		}
		var orgID uuid.UUID
		if len(orgs) > 0 {
			orgID = orgs[0].ID
		} else if orgID, err = s.joinDefaultOrganization(ctx, q, wsID, user.ID); err != nil {
			return err
		}
		// Land in the workspace signed in to, unless already working there.
		uc, err := q.GetUserContext(ctx, user.ID)
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) || (err == nil && uc.WorkspaceID != wsID) {
			err = q.SetUserContext(ctx, db.SetUserContextParams{UserID: user.ID, OrganizationID: orgID})
		}
		if err != nil {
			return err
		}
		session, err = s.newSession(ctx, q, user.ID)
		session.IsSsoFirstLogin = created
		if err != nil || also == nil {
			return err
		}
		return also(q, session)
	})
	return session, err
}

// joinDefaultOrganization makes a user a member of the workspace and of its
// default organization with that organization's default permissions, and
// records it as the user's own doing.
func (s *IAM) joinDefaultOrganization(ctx context.Context, q *db.Queries, wsID, userID uuid.UUID) (uuid.UUID, error) {
	org, err := q.GetDefaultOrganization(ctx, wsID)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, core.ErrSSONotConfigured
	} else if err != nil {
		return uuid.Nil, err
	}
	if err := q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: wsID, UserID: userID}); err != nil {
		return uuid.Nil, err
	}
	if added, err := q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: org.ID, UserID: userID}); err != nil || added == 0 {
		return org.ID, err // added == 0: a sign-in at the same moment made them a member
	}
	if err := q.AddMemberPolicies(ctx, db.AddMemberPoliciesParams{OrganizationID: org.ID, UserID: userID, Ids: org.DefaultPolicyIds}); err != nil {
		return uuid.Nil, err
	}
	if err := q.AddMemberGroups(ctx, db.AddMemberGroupsParams{OrganizationID: org.ID, UserID: userID, Ids: org.DefaultGroupIds}); err != nil {
		return uuid.Nil, err
	}
	r, err := q.GetMember(ctx, db.GetMemberParams{OrganizationID: org.ID, UserID: userID})
	if err != nil {
		return uuid.Nil, err
	}
	access, err := accessOf(ctx, q, org.ID, memberRow(r))
	if err != nil {
		return uuid.Nil, err
	}
	self := &core.Actor{UserID: userID, WorkspaceID: wsID, OrgID: org.ID}
	err = s.core.Audit(ctx, q, self, core.Change{RefType: "Member", RefID: userID.String(), Keyword: r.Email,
		Operation: core.OpCreate, Current: access, Comment: "Joined through single sign-on"})
	return org.ID, err
}
