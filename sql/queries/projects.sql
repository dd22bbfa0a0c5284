-- name: CreateProject :one
-- CreateProject inserts a project.
INSERT INTO projects (organization_id, name, key) VALUES ($1, $2, $3) RETURNING *;

-- name: GetProject :one
-- GetProject returns one of an organization's projects.
SELECT * FROM projects WHERE organization_id = $1 AND id = $2;

-- name: ListProjects :many
-- ListProjects returns an organization's projects in creation order.
SELECT * FROM projects WHERE organization_id = $1 ORDER BY created_at, id;

-- name: UpdateProjectName :one
-- UpdateProjectName renames a project.
UPDATE projects SET name = $3, updated_at = now()
WHERE organization_id = $1 AND id = $2
RETURNING *;

-- name: DeleteProject :execrows
-- DeleteProject removes a project; its environments and all they hold cascade.
DELETE FROM projects WHERE organization_id = $1 AND id = $2;
