package store

// Resource names for Actor.Can, so the admin pages can hide what the store
// would refuse. They name resources exactly as the store's own checks do.

// ProjectRN names a project by key; ProjectRN("*") names any project.
func ProjectRN(projectKey string) string { return projectRN(projectKey) }

// EnvRN names an environment of a project; EnvRN(projectKey, "*") names any of them.
func EnvRN(projectKey, envKey string) string { return envRN(projectKey, envKey) }

// WorkspaceRN names a workspace by key.
func WorkspaceRN(key string) string { return workspaceRN(key) }

// AccessTokenRN names every access token; IAMRN names identity and access management.
const (
	AccessTokenRN = accessTokenRN
	IAMRN         = iamRN
)

// TokenAction is the action that manages access tokens of a type.
func TokenAction(typ string) string { return tokenAction(typ) }
