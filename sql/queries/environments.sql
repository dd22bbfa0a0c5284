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
-- the one a person works in among them. Each row carries, for the frame of
-- every page, so that it needs no statement of its own: how many change
-- requests wait for the member's review there
-- (flag_change_request_reviewers_undecided), how many projects the
-- organization has (those without an environment are in no row), and, on
-- the row of the likely working environment (the remembered one, else the
-- first of the remembered project, else the very first, as
-- core.WorkingEnvironment chooses before permissions), its secrets. The
-- projects' unique key index finds the organization's projects.
WITH likely AS (
    SELECT coalesce(sqlc.narg(env_id)::uuid, (
        SELECT le.id FROM environments le JOIN projects lp ON lp.id = le.project_id
        WHERE lp.organization_id = @organization_id
        ORDER BY (lp.id = sqlc.narg(project_id)::uuid) IS NOT TRUE, lp.created_at, lp.id, le.created_at, le.id
        LIMIT 1)) AS env_id
)
SELECT sqlc.embed(e), sqlc.embed(p),
    coalesce(w.waiting, 0)::int AS reviews_waiting,
    (SELECT count(*) FROM projects op WHERE op.organization_id = @organization_id)::int AS projects_in_organization,
    CASE WHEN e.id = (SELECT env_id FROM likely) THEN
        (SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'name', s.name, 'type', s.type, 'value', s.value)
                ORDER BY s.created_at, s.id), '[]')
         FROM env_secrets s WHERE s.env_id = e.id)
    END::jsonb AS working_env_secrets
FROM environments e
JOIN projects p ON p.id = e.project_id
LEFT JOIN (
    SELECT cr.env_id, count(*) AS waiting
    FROM flag_change_request_reviewers r
    JOIN flag_change_requests cr ON cr.id = r.change_request_id
    WHERE r.member_id = @member_id AND r.action = 'Empty' AND cr.status = 'PendingReview'
    GROUP BY cr.env_id
) w ON w.env_id = e.id
WHERE p.organization_id = @organization_id
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
