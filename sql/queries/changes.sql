-- name: Notify :exec
-- Notify queues a change event (store.Event as JSON) on the channel every
-- instance listens on; PostgreSQL delivers it when the transaction commits.
SELECT pg_notify('bunting_changes', @payload::text);

-- name: ListOrganizationEnvironments :many
-- ListOrganizationEnvironments returns every environment of an organization
-- with its project, to find those a shared segment's scopes select.
SELECT e.id, e.key, e.project_id, p.key AS project_key
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = $1
ORDER BY e.id;
