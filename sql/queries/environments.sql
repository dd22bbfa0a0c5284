-- name: CreateEnvironment :one
-- CreateEnvironment inserts an environment with an id chosen by the caller,
-- because its secrets embed that id.
INSERT INTO environments (id, project_id, name, key, description, require_change_comment)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: GetEnvironment :one
-- GetEnvironment returns an environment with the keys of its project and
-- organization, scoped to an organization.
SELECT sqlc.embed(e), p.key AS project_key, p.name AS project_name, p.organization_id,
    o.key AS organization_key, o.workspace_id
FROM environments e
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE p.organization_id = $1 AND e.id = $2;

-- name: ListEnvironments :many
-- ListEnvironments returns the environments of some projects in creation order.
SELECT * FROM environments WHERE project_id = ANY(@project_ids::uuid[]) ORDER BY created_at, id;

-- name: ListEnvironmentsWithProjects :many
-- ListEnvironmentsWithProjects returns every environment of an organization
-- with its project, in the order ListProjects and ListEnvironments give them
-- (projects, then their environments, in creation order): the pages choose
-- the one a person works in among them. The projects' unique key index
-- finds the organization's projects.
SELECT sqlc.embed(e), sqlc.embed(p)
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = $1
ORDER BY p.created_at, p.id, e.created_at, e.id;

-- name: UpdateEnvironment :one
-- UpdateEnvironment sets an environment's editable fields.
UPDATE environments
SET name = $2, key = $3, description = $4, require_change_comment = $5, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: DeleteEnvironment :execrows
-- DeleteEnvironment removes an environment; everything in it cascades.
DELETE FROM environments WHERE id = $1;

-- name: CreateSecret :one
-- CreateSecret inserts an environment secret.
INSERT INTO env_secrets (env_id, name, type, value) VALUES ($1, $2, $3, $4) RETURNING *;

-- name: ListSecrets :many
-- ListSecrets returns the secrets of some environments in creation order (env_secrets_env).
SELECT * FROM env_secrets WHERE env_id = ANY(@env_ids::uuid[]) ORDER BY created_at, id;

-- name: GetSecret :one
-- GetSecret returns one secret of an environment.
SELECT * FROM env_secrets WHERE env_id = $1 AND id = $2;

-- name: UpdateSecretName :one
-- UpdateSecretName renames a secret; its value never changes.
UPDATE env_secrets SET name = $3, updated_at = now() WHERE env_id = $1 AND id = $2 RETURNING *;

-- name: DeleteSecret :execrows
-- DeleteSecret removes a secret; SDKs using it are refused from then on.
DELETE FROM env_secrets WHERE env_id = $1 AND id = $2;
