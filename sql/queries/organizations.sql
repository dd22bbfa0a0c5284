-- name: CreateOrganization :one
-- CreateOrganization inserts an organization.
INSERT INTO organizations (workspace_id, name, key, default_policy_ids, default_group_ids)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: GetOrganization :one
-- GetOrganization returns an organization by id.
SELECT * FROM organizations WHERE id = $1;

-- name: ListUserOrganizations :many
-- ListUserOrganizations returns the organizations of a workspace a user is a member of.
SELECT o.* FROM organizations o
JOIN organization_users ou ON ou.organization_id = o.id
WHERE o.workspace_id = $1 AND ou.user_id = $2
ORDER BY ou.created_at, o.id;

-- name: AddOrganizationUser :execrows
-- AddOrganizationUser makes a user a member of an organization; it reports 0
-- rows when the user already was one.
INSERT INTO organization_users (organization_id, user_id, invitor_id) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING;

-- name: IsOrganizationUser :one
-- IsOrganizationUser tells whether a user is a member of an organization.
SELECT EXISTS (SELECT 1 FROM organization_users WHERE organization_id = $1 AND user_id = $2);
