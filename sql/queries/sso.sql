-- name: CountWorkspacesWithSSO :one
-- CountWorkspacesWithSSO counts every workspace and those with OIDC settings,
-- for the sign-in page (a handful of rows in any installation).
SELECT count(*) AS workspaces, count(*) FILTER (WHERE sso_oidc IS NOT NULL) AS with_sso
FROM workspaces;

-- name: ListSSOAuthorizationEndpoints :many
-- ListSSOAuthorizationEndpoints returns the distinct authorization endpoints
-- of the workspaces with OIDC settings, which the sign-in page may send
-- browsers to.
SELECT DISTINCT (sso_oidc->>'authorizationEndpoint')::text AS endpoint
FROM workspaces
WHERE sso_oidc IS NOT NULL
ORDER BY endpoint
LIMIT 100;

-- name: GetOnlyWorkspace :one
-- GetOnlyWorkspace returns the workspace of an installation that has exactly one.
SELECT * FROM workspaces WHERE (SELECT count(*) FROM workspaces) = 1;

-- name: GetDefaultOrganization :one
-- GetDefaultOrganization returns a workspace's oldest organization, which
-- people joining through single sign-on enter.
SELECT * FROM organizations WHERE workspace_id = $1 ORDER BY created_at, id LIMIT 1;
