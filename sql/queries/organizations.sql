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

-- name: LockOrganization :exec
-- LockOrganization serializes the changes that could remove an
-- organization's last owner. NO KEY UPDATE leaves inserts that reference the
-- organization unblocked.
SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE;

-- name: UpdateOrganization :one
-- UpdateOrganization sets the name and the default permissions of new members.
UPDATE organizations
SET name = @name, default_policy_ids = @default_policy_ids, default_group_ids = @default_group_ids, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: RemoveDefaultPolicy :exec
-- RemoveDefaultPolicy drops a deleted policy from the default permissions.
UPDATE organizations SET default_policy_ids = array_remove(default_policy_ids, @policy_id::uuid)
WHERE id = @id AND @policy_id::uuid = ANY(default_policy_ids);

-- name: RemoveDefaultGroup :exec
-- RemoveDefaultGroup drops a deleted group from the default permissions.
UPDATE organizations SET default_group_ids = array_remove(default_group_ids, @group_id::uuid)
WHERE id = @id AND @group_id::uuid = ANY(default_group_ids);

-- name: ListWorkspaceOrganizationIDs :many
-- ListWorkspaceOrganizationIDs returns every organization of a workspace, for
-- the workspace settings that need a permission in each.
SELECT id FROM organizations WHERE workspace_id = $1 ORDER BY id;
