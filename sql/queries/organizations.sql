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
-- UpdateOrganization sets the name, the default permissions of new members
-- and the default flag order.
UPDATE organizations
SET name = @name, default_policy_ids = @default_policy_ids, default_group_ids = @default_group_ids,
    flag_sorted_by = @flag_sorted_by, updated_at = now()
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

-- name: StartOrganization :one
-- StartOrganization inserts an organization that still awaits onboarding
-- (initialized false), as FeatBit's clients expect of a new one, recording
-- who created it.
INSERT INTO organizations (workspace_id, name, key, initialized, default_policy_ids, default_group_ids, creator_id)
VALUES (@workspace_id, @name, @key, false, @default_policy_ids, @default_group_ids, @creator_id)
RETURNING *;

-- name: OnboardOrganization :one
-- OnboardOrganization names an organization and marks it initialized.
UPDATE organizations SET name = @name, key = @key, initialized = true, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: LockWorkspace :exec
-- LockWorkspace serializes the creations and deletions of a workspace's
-- organizations, whose number is bounded both ways. The count that follows,
-- in a statement of its own, sees every organization committed before the
-- lock was granted (a count in the locking statement would read the
-- snapshot taken before waiting). NO KEY UPDATE leaves the organizations'
-- references to the workspace unblocked.
SELECT id FROM workspaces WHERE id = $1 FOR NO KEY UPDATE;

-- name: CountWorkspaceOrganizations :one
-- CountWorkspaceOrganizations counts a workspace's organizations and those of
-- them one user created (organizations_key_unique leads with workspace_id;
-- a workspace has at most store.MaxWorkspaceOrganizations).
SELECT count(*) AS total, count(*) FILTER (WHERE creator_id = @creator_id::uuid) AS created
FROM organizations WHERE workspace_id = @workspace_id;

-- name: DeleteOrganization :execrows
-- DeleteOrganization removes an organization; its projects, environments,
-- flags, segments, policies, groups, memberships and tokens go with it
-- (ON DELETE CASCADE).
DELETE FROM organizations WHERE id = $1;

-- name: IsOrganizationKeyUsed :one
-- IsOrganizationKeyUsed tells whether a key is taken in a workspace,
-- case-insensitively (organizations_key_unique).
SELECT EXISTS (SELECT 1 FROM organizations WHERE workspace_id = @workspace_id AND lower(key) = lower(@key::text));
-- name: ListWorkspaceOrganizationIDs :many
-- ListWorkspaceOrganizationIDs returns every organization of a workspace, for
-- the workspace settings that need a permission in each.
SELECT id FROM organizations WHERE workspace_id = $1 ORDER BY id;

-- name: OrganizationContents :one
-- OrganizationContents counts what deleting an organization removes with
-- it, and the organizations of its workspace (the last one stays).
SELECT
    (SELECT count(*) FROM organizations o
     WHERE o.workspace_id = (SELECT w.workspace_id FROM organizations w WHERE w.id = @id))::bigint AS in_workspace,
    (SELECT count(*) FROM projects p WHERE p.organization_id = @id)::bigint AS projects,
    (SELECT count(*) FROM environments e JOIN projects p ON p.id = e.project_id WHERE p.organization_id = @id)::bigint AS environments,
    (SELECT count(*) FROM feature_flags f JOIN environments e ON e.id = f.env_id
     JOIN projects p ON p.id = e.project_id WHERE p.organization_id = @id)::bigint AS flags,
    (SELECT count(*) FROM segments s WHERE s.organization_id = @id)::bigint AS segments,
    (SELECT count(*) FROM organization_users u WHERE u.organization_id = @id)::bigint AS members,
    (SELECT count(*) FROM groups g WHERE g.organization_id = @id)::bigint AS groups,
    (SELECT count(*) FROM policies x WHERE x.organization_id = @id)::bigint AS policies,
    (SELECT count(*) FROM access_tokens t WHERE t.organization_id = @id)::bigint AS access_tokens;
