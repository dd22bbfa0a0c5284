-- name: InsertSSOLoginState :exec
-- InsertSSOLoginState keeps a single sign-on attempt until its callback.
INSERT INTO sso_login_states (state_hash, browser_hash, workspace_id, nonce, code_verifier, next, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: ConsumeSSOLoginState :one
-- ConsumeSSOLoginState deletes and returns the attempt with this state begun
-- in this browser, so each state is used at most once.
DELETE FROM sso_login_states
WHERE state_hash = @state_hash AND browser_hash = @browser_hash
RETURNING *;

-- name: DeleteExpiredSSOLoginStates :exec
-- DeleteExpiredSSOLoginStates drops abandoned attempts (sso_login_states_expires).
DELETE FROM sso_login_states WHERE expires_at < now();

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

-- name: CountPendingSSOLoginStates :one
-- CountPendingSSOLoginStates counts a workspace's unexpired attempts, up to
-- @most (the cap BeginSSO enforces), so the count stays cheap.
SELECT count(*) FROM (
    SELECT 1 FROM sso_login_states
    WHERE workspace_id = @workspace_id AND expires_at > now()
    LIMIT @most::int
) pending;
