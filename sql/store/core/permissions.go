package core

import (
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
)

// Built-in policy ids, the same as FeatBit's so exported statements carry over.
var (
	OwnerPolicyID         = uuid.MustParse("98881f6a-5c6c-4277-bcf7-fda94c538785")
	AdministratorPolicyID = uuid.MustParse("3e961f0f-6fd4-4cf4-910f-52d356f8cc08")
	DeveloperPolicyID     = uuid.MustParse("66f3687f-939d-4257-bd3f-c3553d39e1b6")
)

// builtinPolicy is a SysManaged policy as code defines it; bootstrap keeps the
// database copy equal to it.
type builtinPolicy struct {
	ID                     uuid.UUID
	Name, Key, Description string
	Statements             []access.Statement
}

func allow(id, rtype string, resources string, actions ...access.Action) access.Statement {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = string(a)
	}
	return access.Statement{ID: id, ResourceType: rtype, Effect: "allow", Actions: names, Resources: []string{resources}}
}

var BuiltinPolicies = []builtinPolicy{
	{OwnerPolicyID, "Owner", "owner", "Full access to everything in the organization.", []access.Statement{
		allow("owner-all", access.TypeAll, "*", "*"),
	}},
	{AdministratorPolicyID, "Administrator", "administrator", "Manages the organization, its members, projects and flags.", []access.Statement{
		allow("admin-organization", access.TypeOrganization, "organization/*", access.UpdateOrgSortFlagsBy, access.UpdateOrgName, access.UpdateOrgDefaultUserPermissions, access.CreateOrg),
		allow("admin-iam", access.TypeIAM, "iam/*", access.CanManageIAM),
		allow("admin-access-token", access.TypeAccessToken, "access-token/*", access.ListAccessTokens, access.ManagePersonalAccessTokens, access.ManageServiceAccessTokens),
		allow("admin-relay-proxy", access.TypeRelayProxy, RelayProxyRN, access.ManageRelayProxies, access.ListRelayProxies),
		allow("admin-project", access.TypeProject, "project/*", access.CanAccessProject, access.CreateProject, access.DeleteProject, access.UpdateProjectSettings, access.CreateEnv),
		allow("admin-env", access.TypeEnv, "project/*:env/*", access.CanAccessEnv, access.DeleteEnv, access.UpdateEnvSettings, access.CreateEnvSecret, access.DeleteEnvSecret, access.UpdateEnvSecret),
		allow("admin-workspace", access.TypeWorkspace, "workspace/*", access.UpdateWorkspaceGeneralSettings, access.UpdateWorkspaceLicense, access.UpdateWorkspaceSSOSettings),
		allow("admin-flag", access.TypeFlag, "project/*:env/*:flag/*", "*"),
		allow("admin-segment", access.TypeSegment, "project/*:env/*:segment/*", "*"),
	}},
	{DeveloperPolicyID, "Developer", "developer", "Works with flags and segments in every project.", []access.Statement{
		allow("developer-access-token", access.TypeAccessToken, "access-token/*", access.ListAccessTokens, access.ManagePersonalAccessTokens, access.ManageServiceAccessTokens),
		allow("developer-relay-proxy", access.TypeRelayProxy, RelayProxyRN, access.ManageRelayProxies, access.ListRelayProxies),
		allow("developer-project", access.TypeProject, "project/*", access.CanAccessProject),
		allow("developer-env", access.TypeEnv, "project/*:env/*", access.CanAccessEnv),
		allow("developer-flag", access.TypeFlag, "project/*:env/*:flag/*", "*"),
		allow("developer-segment", access.TypeSegment, "project/*:env/*:segment/*", "*"),
	}},
}

// Resource names for permission checks (no organization prefix), exported so
// the admin pages can hide exactly what the store would refuse.

// WorkspaceRN names a workspace by key.
func WorkspaceRN(key string) string { return "workspace/" + key }

// OrganizationRN names an organization by key; OrganizationRN("*") names any.
func OrganizationRN(key string) string { return "organization/" + key }

// ProjectRN names a project by key; ProjectRN("*") names any project.
func ProjectRN(projectKey string) string { return "project/" + projectKey }

// EnvRN names an environment of a project; EnvRN(projectKey, "*") names any of them.
func EnvRN(projectKey, envKey string) string { return ProjectRN(projectKey) + ":env/" + envKey }

// IAMRN names identity and access management; AccessTokenRN every access
// token; RelayProxyRN every relay proxy.
const (
	IAMRN         = "iam/*"
	AccessTokenRN = "access-token/*"
	RelayProxyRN  = "relay-proxy/*"
)
