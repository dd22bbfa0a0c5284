package iam

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// What FeatBit's admin UI asks on its way in: whether to offer single
// sign-on, which organization the person enters, and the member list its
// pickers show.

// JoinOrganization is what FeatBit's UI calls once a person has picked the
// organization to work in. FeatBit adds a person who is not yet a member
// (its organization list offers every organization to someone signing in
// through SSO for the first time); Bunting lists only a person's own
// organizations, lets nobody name another (authentication answers 403), and
// makes SSO newcomers members of the default organization when they sign in.
// So joining is entering one of one's own organizations: it is remembered as
// where the person works, as switching organization in the pages does. An
// access token works only in its own organization and joins nothing.
func (s *IAM) JoinOrganization(ctx context.Context, a *core.Actor) error {
	if a.IsToken() {
		return core.ErrForbidden
	}
	if _, err := a.Org(); err != nil {
		return err
	}
	_, err := s.SetUserContext(ctx, a, core.UserContext{OrganizationID: a.OrgID})
	return err
}

// ListOrganizationMembers pages the organization's members for FeatBit's
// pickers (team-member filters of audit logs and access tokens, the
// reviewers of a change request), in the shape of ListMembers. FeatBit lets
// any member list them; Bunting lets those who use one of those pickers: who
// manage IAM, list access tokens, or may open an environment of the
// organization (audit logs, change requests).
func (s *IAM) ListOrganizationMembers(ctx context.Context, a *core.Actor, f IAMFilter) (core.Paged[Member], error) {
	if err := s.mayListOrganizationMembers(ctx, a); err != nil {
		return core.Paged[Member]{}, err
	}
	var v core.Validator
	f.check(&v, "searchText")
	if err := v.Err(); err != nil {
		return core.Paged[Member]{}, err
	}
	return s.listMembers(ctx, a, a.OrgID, f)
}

func (s *IAM) mayListOrganizationMembers(ctx context.Context, a *core.Actor) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	if a.Can(access.CanManageIAM, core.IAMRN) || a.Can(access.ListAccessTokens, core.AccessTokenRN) {
		return nil
	}
	envs, err := s.core.Q.ListResourceEnvironments(ctx, []uuid.UUID{orgID})
	if err != nil {
		return core.Translate(err)
	}
	for _, e := range envs {
		if a.Can(access.CanAccessEnv, core.EnvRN(e.ProjectKey, e.Key)) {
			return nil
		}
	}
	return core.ErrForbidden
}
