package core

import (
	"github.com/bunting-flags/bunting/sql/access"
)

// The pages offer a control only when the store would accept what it sends.
// Rather than restate the store's rules, they ask the store: the answers
// below are built from the same checks the operations make.

// OrgRights tells what a person may do in an organization: which of its
// settings they may change (a change is checked on the settings it
// changes), and what they may do there.
type OrgRights struct {
	Name               bool
	DefaultPermissions bool
	SortFlagsBy        bool
	Delete             bool
	// ManageIAM is managing its members, groups and policies.
	ManageIAM bool
	// Webhooks is managing its webhooks.
	Webhooks bool
	// RelayProxies is seeing its relay proxies (ListRelayProxies).
	RelayProxies     bool
	ListAccessTokens bool
	CreateProject    bool
	// CreateOrganization is creating another organization in the workspace.
	CreateOrganization bool

	a *Actor
}

// Settings tells whether the person may change any of the settings the
// organization's page shows: its name or its default permissions.
func (r OrgRights) Settings() bool { return r.Name || r.DefaultPermissions }

// OrganizationRights answers what a person may do in the organization with
// this key.
func OrganizationRights(a *Actor, key string) OrgRights {
	rn := OrganizationRN(key)
	return OrgRights{Name: a.Can(access.UpdateOrgName, rn), DefaultPermissions: a.Can(access.UpdateOrgDefaultUserPermissions, rn),
		SortFlagsBy: a.Can(access.UpdateOrgSortFlagsBy, rn), Delete: MayDeleteOrganization(a, key) == nil,
		ManageIAM: a.RequireIAM() == nil, Webhooks: a.Can(WebhookAction, rn), RelayProxies: a.Can(access.ListRelayProxies, RelayProxyRN), ListAccessTokens: MayListAccessTokens(a) == nil,
		CreateProject: MayCreateProject(a) == nil, CreateOrganization: MayCreateOrganization(a) == nil, a: a}
}

// Project answers what the person may do to the project with this key.
func (r OrgRights) Project(key string) ProjectRights {
	return ProjectRights{Rename: mayRenameProject(r.a, key) == nil, Delete: mayDeleteProject(r.a, key) == nil,
		CreateEnv: mayCreateEnvironment(r.a, key) == nil, a: r.a, key: key}
}

// ProjectRights tells what a person may do to a project.
type ProjectRights struct {
	Rename    bool
	Delete    bool
	CreateEnv bool

	a   *Actor
	key string
}

// Env answers what the person may do to the project's environment with this key.
func (r ProjectRights) Env(key string) EnvironmentRights {
	rn := EnvRN(r.key, key)
	return EnvironmentRights{Settings: r.a.Can(access.UpdateEnvSettings, rn), Delete: r.a.Can(access.DeleteEnv, rn),
		CreateSecret: r.a.Can(access.CreateEnvSecret, rn), RenameSecret: r.a.Can(access.UpdateEnvSecret, rn),
		DeleteSecret: r.a.Can(access.DeleteEnvSecret, rn)}
}

// EnvironmentRights tells what a person may do to an environment itself:
// its settings and secrets, and deleting it.
type EnvironmentRights struct {
	Settings     bool
	Delete       bool
	CreateSecret bool
	RenameSecret bool
	DeleteSecret bool
}

// The checks of the organization's and projects' operations that the rights
// above answer too.

func MayDeleteOrganization(a *Actor, key string) error {
	return a.Require(access.DeleteOrg, OrganizationRN(key))
}

func MayCreateOrganization(a *Actor) error { return a.Require(access.CreateOrg, OrganizationRN("*")) }

func MayListAccessTokens(a *Actor) error { return a.Require(access.ListAccessTokens, AccessTokenRN) }

func MayCreateProject(a *Actor) error { return a.Require(access.CreateProject, ProjectRN("*")) }

func mayRenameProject(a *Actor, key string) error {
	return a.Require(access.UpdateProjectSettings, ProjectRN(key))
}

func mayDeleteProject(a *Actor, key string) error {
	return a.Require(access.DeleteProject, ProjectRN(key))
}

func mayCreateEnvironment(a *Actor, projectKey string) error {
	return a.Require(access.CreateEnv, EnvRN(projectKey, "*"))
}

// WebhookAction is what managing webhooks takes. FeatBit's IAM has no
// webhook action (its UI shows the page to every member): a webhook sends
// flag data to any URL with the organization's name on it, so Bunting asks
// for the organization-management permission, on the organization's RN.
// A webhook's scopes and its delivery log also need CanAccessEnv on each
// environment they name (requireScopes): what it sends is what is read there.
const WebhookAction = access.UpdateOrgName
