package iam

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Workspace is the top of the tenancy tree.
type Workspace struct {
	ID      uuid.UUID `json:"id"`
	Name    string    `json:"name"`
	Key     string    `json:"key"`
	License string    `json:"license"`
	SSO     *SSO      `json:"sso"`
}

// SSO holds a workspace's single sign-on settings.
type SSO struct {
	OIDC OIDCSettings `json:"oidc"`
}

// OIDCSettings configure sign-in through an OpenID Connect provider. In
// answers ClientSecret is masked: MaskedSecret when one is stored.
type OIDCSettings struct {
	ClientID                   string `json:"clientId"`
	ClientSecret               string `json:"clientSecret"`
	TokenEndpoint              string `json:"tokenEndpoint"`
	ClientAuthenticationMethod string `json:"clientAuthenticationMethod"`
	AuthorizationEndpoint      string `json:"authorizationEndpoint"`
	Scope                      string `json:"scope"`
	UserEmailClaim             string `json:"userEmailClaim"`
	Issuer                     string `json:"issuer"`
}

// MaskedSecret stands for a stored secret in answers; sent back, it keeps the secret.
const MaskedSecret = "********"

// OIDC client authentication methods.
const (
	ClientSecretBasic = "client_secret_basic"
	ClientSecretPost  = "client_secret_post"
)

// Organization is an organization of a workspace.
type Organization struct {
	ID                 uuid.UUID            `json:"id"`
	WorkspaceID        uuid.UUID            `json:"workspaceId"`
	Name               string               `json:"name"`
	Key                string               `json:"key"`
	Initialized        bool                 `json:"initialized"`
	DefaultPermissions DefaultPermissions   `json:"defaultPermissions"`
	Settings           OrganizationSettings `json:"settings"`
	CreatedAt          time.Time            `json:"createdAt"`
	UpdatedAt          time.Time            `json:"updatedAt"`
}

// OrganizationSettings are an organization's preferences (FeatBit's
// OrganizationSetting).
type OrganizationSettings struct {
	// FlagSortedBy is the default order of flag lists: FlagsByCreatedAt or FlagsByKey.
	FlagSortedBy string `json:"flagSortedBy"`
}

// Flag list orders an organization may prefer.
const (
	FlagsByCreatedAt = "created_at"
	FlagsByKey       = "key"
)

// DefaultPermissions are what a member added without explicit policies or groups gets.
type DefaultPermissions struct {
	PolicyIDs []uuid.UUID `json:"policyIds"`
	GroupIDs  []uuid.UUID `json:"groupIds"`
}

// Profile is the caller's own user.
type Profile struct {
	ID    uuid.UUID `json:"id"`
	Email string    `json:"email"`
	Name  string    `json:"name"`
	// Origin is how the user joined: "Local" (email and password) or "Sso".
	Origin string `json:"origin"`
}

// GetProfile returns the caller's user.
func (s *IAM) GetProfile(ctx context.Context, a *core.Actor) (Profile, error) {
	u, err := s.core.Q.GetUser(ctx, a.UserID)
	if err != nil {
		return Profile{}, core.Translate(err)
	}
	return profile(u), nil
}

// ListOrganizations returns the caller's organizations in the current workspace.
func (s *IAM) ListOrganizations(ctx context.Context, a *core.Actor) ([]Organization, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return nil, err
	}
	if a.IsToken() { // a token knows only its own organization
		o, err := s.core.Q.GetOrganization(ctx, a.OrgID)
		if err != nil {
			return nil, core.Translate(err)
		}
		return []Organization{organization(o)}, nil
	}
	rows, err := s.core.Q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: a.UserID})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]Organization, len(rows))
	for i, r := range rows {
		out[i] = organization(r)
	}
	return out, nil
}

func organization(o db.Organization) Organization {
	return Organization{ID: o.ID, WorkspaceID: o.WorkspaceID, Name: o.Name, Key: o.Key, Initialized: o.Initialized,
		DefaultPermissions: DefaultPermissions{PolicyIDs: o.DefaultPolicyIds, GroupIDs: o.DefaultGroupIds},
		Settings:           OrganizationSettings{FlagSortedBy: o.FlagSortedBy},
		CreatedAt:          o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC()}
}

// GetWorkspace returns the current workspace.
func (s *IAM) GetWorkspace(ctx context.Context, a *core.Actor) (Workspace, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return Workspace{}, err
	}
	row, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return Workspace{}, core.Translate(err)
	}
	return s.workspace(ctx, a, row)
}

// workspace shapes a workspace for the caller: the licence (see license.go)
// only for those allowed UpdateWorkspaceLicense, as FeatBit's workspace view,
// the client secret masked.
func (s *IAM) workspace(ctx context.Context, a *core.Actor, row db.Workspace) (Workspace, error) {
	w := Workspace{ID: row.ID, Name: row.Name, Key: row.Key}
	if s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceLicense, row) == nil {
		w.License = workspaceLicense(row)
	}
	if row.SsoOidc != nil {
		var o OIDCSettings
		if err := json.Unmarshal(row.SsoOidc, &o); err != nil {
			return Workspace{}, err
		}
		if o.ClientSecret != "" {
			o.ClientSecret = MaskedSecret
		}
		w.SSO = &SSO{OIDC: o}
	}
	return w, nil
}

// WorkspaceInput updates a workspace's name and key.
type WorkspaceInput struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// UpdateWorkspace changes the current workspace's name and key.
func (s *IAM) UpdateWorkspace(ctx context.Context, a *core.Actor, in WorkspaceInput) (Workspace, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return Workspace{}, err
	}
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.Key("key", in.Key)
	if err := v.Err(); err != nil {
		return Workspace{}, err
	}
	before, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return Workspace{}, core.Translate(err)
	}
	if err := s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceGeneralSettings, before); err != nil {
		return Workspace{}, err
	}
	var row db.Workspace
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if row, err = q.UpdateWorkspace(ctx, db.UpdateWorkspaceParams{ID: wsID, Name: strings.TrimSpace(in.Name), Key: in.Key}); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Workspace", RefID: wsID.String(), Keyword: row.Key, Operation: core.OpUpdate,
			Previous: WorkspaceInput{before.Name, before.Key}, Current: WorkspaceInput{row.Name, row.Key}})
	})
	if err != nil {
		return Workspace{}, err
	}
	return s.workspace(ctx, a, row)
}

// UpdateWorkspaceSSO stores the workspace's OIDC settings. The client secret
// is write-only: empty or MaskedSecret keeps the stored one.
func (s *IAM) UpdateWorkspaceSSO(ctx context.Context, a *core.Actor, in OIDCSettings) (Workspace, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return Workspace{}, err
	}
	before, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return Workspace{}, core.Translate(err)
	}
	if err := s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceSSOSettings, before); err != nil {
		return Workspace{}, err
	}
	var stored OIDCSettings
	if before.SsoOidc != nil {
		if err := json.Unmarshal(before.SsoOidc, &stored); err != nil {
			return Workspace{}, err
		}
	}
	in.Scope = strings.TrimSpace(in.Scope)
	if in.Scope == "" {
		in.Scope = "openid email profile"
	}
	if in.UserEmailClaim == "" {
		in.UserEmailClaim = "email"
	}
	var v core.Validator
	v.Required("clientId", in.ClientID, 512)
	keep := in.ClientSecret == "" || in.ClientSecret == MaskedSecret
	if keep && stored.ClientSecret == "" {
		v.Add("clientSecret", "required")
	} else if !keep {
		v.Text("clientSecret", in.ClientSecret, 1024)
	}
	CheckOIDCURLs(&v, in, s.core.SSOPrivateNetworks)
	v.OneOf("clientAuthenticationMethod", in.ClientAuthenticationMethod, ClientSecretBasic, ClientSecretPost)
	if !slices.Contains(strings.Fields(in.Scope), "openid") || !v.Text("scope", in.Scope, 512) {
		v.Add("scope", "invalid")
	}
	v.Text("userEmailClaim", in.UserEmailClaim, 128)
	if err := v.Err(); err != nil {
		return Workspace{}, err
	}
	if keep {
		in.ClientSecret = stored.ClientSecret
	} else {
		in.ClientSecret = s.core.ServerKeys.Seal(in.ClientSecret)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return Workspace{}, err
	}
	var row db.Workspace
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if row, err = q.UpdateWorkspaceSSO(ctx, db.UpdateWorkspaceSSOParams{ID: wsID, SsoOidc: raw}); err != nil {
			return err
		}
		after := in
		after.ClientSecret = MaskedSecret
		var previous any
		if before.SsoOidc != nil {
			stored.ClientSecret = MaskedSecret
			previous = stored
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Workspace", RefID: wsID.String(), Keyword: row.Key, Operation: core.OpUpdate,
			Previous: previous, Current: after})
	})
	if err != nil {
		return Workspace{}, err
	}
	return s.workspace(ctx, a, row)
}

// CheckOIDCURLs checks the provider URLs of OIDC settings. Bunting fetches
// them from the server, so they are plain https URLs (http only where
// private networks are allowed, as in tests): no user info, and no query or
// fragment, which would turn the discovery suffix into something else.
func CheckOIDCURLs(v *core.Validator, in OIDCSettings, privateNetworks bool) {
	checkURL(v, "authorizationEndpoint", in.AuthorizationEndpoint, true, privateNetworks)
	checkURL(v, "tokenEndpoint", in.TokenEndpoint, true, privateNetworks)
	checkURL(v, "issuer", in.Issuer, false, privateNetworks)
}

func checkURL(v *core.Validator, field, value string, required, privateNetworks bool) {
	if value == "" {
		if required {
			v.Add(field, "required")
		}
		return
	}
	u, err := url.Parse(value)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery ||
		u.Fragment != "" || strings.Contains(value, "#") || len(value) > 2048 ||
		(u.Scheme != "https" && (u.Scheme != "http" || !privateNetworks)) {
		v.Add(field, "invalid")
	}
}

// CanChangeWorkspace tells the pages whether to offer a workspace setting:
// the same check the changes make.
func (s *IAM) CanChangeWorkspace(ctx context.Context, a *core.Actor, action access.Action) bool {
	if a.WorkspaceID == uuid.Nil {
		return false
	}
	ws, err := s.core.Q.GetWorkspace(ctx, a.WorkspaceID)
	if err != nil {
		return false
	}
	return s.core.RequireWorkspaceRight(ctx, a, action, ws) == nil
}
