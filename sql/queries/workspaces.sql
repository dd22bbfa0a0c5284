-- name: CountWorkspaces :one
-- CountWorkspaces tells bootstrap whether the database is empty.
SELECT count(*) FROM workspaces;

-- name: CreateWorkspace :one
-- CreateWorkspace inserts a workspace with its owner (NULL for none).
INSERT INTO workspaces (name, key, owner_id) VALUES ($1, $2, $3) RETURNING *;

-- name: GetWorkspace :one
-- GetWorkspace returns a workspace by id.
SELECT * FROM workspaces WHERE id = $1;

-- name: GetWorkspaceByKey :one
-- GetWorkspaceByKey returns a workspace by key, case-insensitively.
SELECT * FROM workspaces WHERE lower(key) = lower(@key::text);

-- name: UpdateWorkspace :one
-- UpdateWorkspace sets the general settings.
UPDATE workspaces SET name = $2, key = $3, updated_at = now() WHERE id = $1 RETURNING *;

-- name: UpdateWorkspaceSSO :one
-- UpdateWorkspaceSSO replaces the stored OIDC settings.
UPDATE workspaces SET sso_oidc = $2, updated_at = now() WHERE id = $1 RETURNING *;

-- name: ListUserWorkspaces :many
-- ListUserWorkspaces returns the workspaces a user belongs to, oldest membership first.
SELECT w.* FROM workspaces w
JOIN workspace_users wu ON wu.workspace_id = w.id
WHERE wu.user_id = $1
ORDER BY wu.created_at, w.id;

-- name: AddWorkspaceUser :exec
-- AddWorkspaceUser makes a user a member of a workspace; adding twice is harmless.
INSERT INTO workspace_users (workspace_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;
