-- Resource lists for the policy editor and the segment scope picker
-- (FeatBit's GET /resources): projects and environments of some
-- organizations, with the keys their resource names are made of.

-- name: ListResourceProjects :many
-- ListResourceProjects returns the projects of some organizations with their
-- organization, in creation order (projects_key_unique leads with organization_id).
SELECT o.id AS organization_id, o.key AS organization_key, o.name AS organization_name,
       p.id, p.key, p.name
FROM projects p JOIN organizations o ON o.id = p.organization_id
WHERE p.organization_id = ANY(@organization_ids::uuid[])
ORDER BY o.created_at, o.id, p.created_at, p.id;

-- name: ListResourceEnvironments :many
-- ListResourceEnvironments returns the environments of some organizations
-- with their project and organization, in creation order.
SELECT o.id AS organization_id, o.key AS organization_key, o.name AS organization_name,
       p.key AS project_key, p.name AS project_name, e.id, e.key, e.name
FROM environments e
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE p.organization_id = ANY(@organization_ids::uuid[])
ORDER BY o.created_at, o.id, p.created_at, p.id, e.created_at, e.id;
