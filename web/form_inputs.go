package web

import (
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// The forms the pages post, decoded by bind and turned into the store's
// input types: the same types the API decodes from JSON. The field names
// are the forms'; what a field means, and its checks, are the store's. A
// form field the store has no field for (confirmPassword, edit buttons) is
// read by the page that posts it.

// changeForm is the comment and revision every form that changes a flag or
// a segment posts. Forms hold it in a field named Change: bind fills only
// exported fields.
type changeForm struct {
	Comment  string     `form:"comment"`
	Revision *uuid.UUID `form:"revision"`
}

func (f changeForm) input() flagstore.Change {
	return flagstore.Change{Comment: f.Comment, Revision: f.Revision}
}

// flagForm creates a flag.
type flagForm struct {
	Name                string   `form:"name"`
	Key                 string   `form:"key"`
	Description         string   `form:"description"`
	VariationType       string   `form:"variationType"`
	EnabledVariationID  string   `form:"enabledVariationId"`
	DisabledVariationID string   `form:"disabledVariationId"`
	IsEnabled           bool     `form:"isEnabled"`
	Tags                []string `form:"tags"`
	Change              changeForm
}

func (f flagForm) input() flagstore.FlagInput {
	return flagstore.FlagInput{Name: f.Name, Key: f.Key, Description: f.Description, VariationType: f.VariationType,
		EnabledVariationID: f.EnabledVariationID, DisabledVariationID: f.DisabledVariationID, IsEnabled: f.IsEnabled,
		Tags: f.Tags, Change: f.Change.input()}
}

// offVariationForm chooses what a flag serves when off.
type offVariationForm struct {
	OffVariationID string `form:"disabledVariationId"`
	Change         changeForm
}

func (f offVariationForm) input() flagstore.OffVariationInput {
	return flagstore.OffVariationInput{OffVariationID: f.OffVariationID, Change: f.Change.input()}
}

// variationsForm is the variations editor's type; its variations are read
// by parseVariations.
type variationsForm struct {
	VariationType string `form:"variationType"`
	Change        changeForm
}

// cloneForm names a flag's copy.
type cloneForm struct {
	Name   string `form:"name"`
	Key    string `form:"key"`
	Change changeForm
}

// segmentForm creates a segment; its scopes are read as typed.
type segmentForm struct {
	Name        string   `form:"name"`
	Key         string   `form:"key"`
	Type        string   `form:"type"`
	Description string   `form:"description"`
	Tags        []string `form:"tags"`
	Change      changeForm
}

func (f segmentForm) input() segments.SegmentInput {
	return segments.SegmentInput{Name: f.Name, Key: f.Key, Type: f.Type, Description: f.Description, Tags: f.Tags,
		Change: f.Change.input()}
}

// nameKeyForm names and keys a project, a workspace or a new organization.
type nameKeyForm struct {
	Name string `form:"name"`
	Key  string `form:"key"`
}

// environmentForm creates or changes an environment; its settings are read
// by updateEnvironment.
type environmentForm struct {
	Name        string  `form:"name"`
	Key         string  `form:"key"`
	Description *string `form:"description"`
}

func (f environmentForm) input() core.EnvironmentInput {
	return core.EnvironmentInput{Name: f.Name, Key: f.Key, Description: f.Description}
}

// secretForm creates or renames an environment's secret.
type secretForm struct {
	Name string `form:"name"`
	Type string `form:"type"`
}

// describedForm names and describes a group, or a policy's settings.
type describedForm struct {
	Name        string `form:"name"`
	Description string `form:"description"`
}

// policyForm creates or clones a policy.
type policyForm struct {
	Name        string `form:"name"`
	Key         string `form:"key"`
	Description string `form:"description"`
}

// tokenForm creates an access token; its statements are the editor's.
type tokenForm struct {
	Name string `form:"name"`
	Type string `form:"type"`
}

// loginForm signs in with a password.
type loginForm struct {
	Email    string `form:"email"`
	Password string `form:"password"`
}

// passwordForm changes the signed-in person's password.
type passwordForm struct {
	CurrentPassword string `form:"currentPassword"`
	NewPassword     string `form:"newPassword"`
}

// ssoStartForm starts single sign-on in a workspace.
type ssoStartForm struct {
	Workspace string `form:"workspace"`
	Next      string `form:"next"`
}

// oidcForm is the workspace's single sign-on settings.
type oidcForm struct {
	ClientID                   string `form:"clientId"`
	ClientSecret               string `form:"clientSecret"`
	TokenEndpoint              string `form:"tokenEndpoint"`
	ClientAuthenticationMethod string `form:"clientAuthenticationMethod"`
	AuthorizationEndpoint      string `form:"authorizationEndpoint"`
	Scope                      string `form:"scope"`
	UserEmailClaim             string `form:"userEmailClaim"`
	Issuer                     string `form:"issuer"`
}

func (f oidcForm) input() iam.OIDCSettings { return iam.OIDCSettings(f) }

// contextForm is the switcher's choice of organization or environment.
type contextForm struct {
	OrganizationID uuid.UUID `form:"organizationId"`
	ProjectID      uuid.UUID `form:"projectId"`
	EnvID          uuid.UUID `form:"envId"`
}

func (f contextForm) input() core.UserContext {
	return core.UserContext{OrganizationID: f.OrganizationID, ProjectID: f.ProjectID, EnvID: f.EnvID}
}
