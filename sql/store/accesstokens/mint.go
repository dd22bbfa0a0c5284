package accesstokens

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// MintAccessToken creates an access token for an existing user in their first
// organization, for scripts (the `bunting token create` command). A Service
// token gets a copy of the user's current statements.
func (s *Tokens) MintAccessToken(ctx context.Context, email, name, typ string) (AccessToken, error) {
	user, err := s.core.Q.GetUserByEmail(ctx, email)
	if err != nil {
		return AccessToken{}, fmt.Errorf("user %q: %w", email, core.Translate(err))
	}
	a, err := s.iam.UserActor(ctx, user.ID, "", "")
	if err != nil {
		return AccessToken{}, err
	}
	if a.OrgID == uuid.Nil { // several workspaces or organizations: take the oldest membership
		workspaces, err := s.core.Q.ListUserWorkspaces(ctx, user.ID)
		if err != nil || len(workspaces) == 0 {
			return AccessToken{}, fmt.Errorf("user %q belongs to no workspace", email)
		}
		orgs, err := s.core.Q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: workspaces[0].ID, UserID: user.ID})
		if err != nil || len(orgs) == 0 {
			return AccessToken{}, fmt.Errorf("user %q belongs to no organization", email)
		}
		if a, err = s.iam.UserActor(ctx, user.ID, workspaces[0].ID.String(), orgs[0].ID.String()); err != nil {
			return AccessToken{}, err
		}
	}
	in := AccessTokenInput{Name: name, Type: typ}
	if typ == core.TokenService {
		in.Permissions = a.Granted
	}
	return s.CreateAccessToken(ctx, a, in)
}
