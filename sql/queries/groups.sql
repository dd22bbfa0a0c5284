-- name: CreateGroup :one
-- CreateGroup inserts a group; names are unique per organization (groups_name_unique).
INSERT INTO groups (organization_id, name, description) VALUES ($1, $2, $3) RETURNING *;

-- name: GetGroup :one
-- GetGroup returns one of an organization's groups.
SELECT * FROM groups WHERE organization_id = $1 AND id = $2;

-- name: UpdateGroup :one
-- UpdateGroup renames and describes a group.
UPDATE groups SET name = $3, description = $4, updated_at = now()
WHERE organization_id = $1 AND id = $2
RETURNING *;

-- name: DeleteGroup :execrows
-- DeleteGroup removes a group; its member and policy attachments cascade.
DELETE FROM groups WHERE organization_id = $1 AND id = $2;

-- name: ListGroups :many
-- ListGroups pages an organization's groups by name, walking groups_name_unique.
SELECT * FROM groups
WHERE organization_id = $1
ORDER BY lower(name), id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchGroups :many
-- SearchGroups, not ListGroups with an optional condition (see
-- ListPolicyGroups), pages an organization's groups whose name contains the
-- escaped text, by name (groups_name_trgm, or groups_name_unique).
SELECT * FROM groups
WHERE organization_id = @organization_id AND lower(name) LIKE '%' || lower(@name::text) || '%'
ORDER BY lower(name), id
LIMIT @page_size OFFSET @page_offset;

-- name: CountGroups :one
-- CountGroups counts an organization's groups.
SELECT count(*) FROM groups WHERE organization_id = $1;

-- name: CountSearchGroups :one
-- CountSearchGroups counts what SearchGroups pages through.
SELECT count(*) FROM groups
WHERE organization_id = @organization_id AND lower(name) LIKE '%' || lower(@name::text) || '%';

-- name: CountOrganizationGroups :one
-- CountOrganizationGroups counts how many of ids are an organization's
-- groups; callers pass distinct ids.
SELECT count(*) FROM groups WHERE id = ANY(@ids::uuid[]) AND organization_id = @organization_id;

-- name: AddGroupMember :exec
-- AddGroupMember puts a member of the group's organization in the group;
-- adding twice is harmless.
INSERT INTO group_members (group_id, organization_id, user_id) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING;

-- name: AddMemberGroups :exec
-- AddMemberGroups puts a member in those of ids that are the organization's groups.
INSERT INTO group_members (group_id, organization_id, user_id)
SELECT g.id, @organization_id, @user_id FROM groups g
WHERE g.id = ANY(@ids::uuid[]) AND g.organization_id = @organization_id
ON CONFLICT DO NOTHING;

-- name: RemoveGroupMember :exec
-- RemoveGroupMember takes a member out of a group; removing twice is harmless.
DELETE FROM group_members WHERE group_id = $1 AND user_id = $2;

-- name: ListMemberGroupIDs :many
-- ListMemberGroupIDs returns the groups a member belongs to (group_members_user).
SELECT group_id FROM group_members
WHERE organization_id = $1 AND user_id = $2
ORDER BY group_id;

-- name: ListGroupsOfMembers :many
-- ListGroupsOfMembers returns the groups each of several members belongs
-- to, by name (group_members_user).
SELECT gm.user_id, g.id, g.name, g.description
FROM group_members gm
JOIN groups g ON g.id = gm.group_id
WHERE gm.organization_id = @organization_id AND gm.user_id = ANY(@user_ids::uuid[])
ORDER BY lower(g.name), g.id;

-- name: ListMemberGroups :many
-- ListMemberGroups pages an organization's groups by name, each marked when
-- the member belongs to it; without get_all only those. It walks the
-- organization's groups (groups_name_unique) and probes group_members' key.
-- Each row counts them all (an organization has few groups), and there are
-- none unless the user is a member of the organization (its key, once): an
-- empty page alone leaves the caller to ask which.
SELECT g.id, g.name, g.description, (gm.user_id IS NOT NULL)::boolean AS is_group_member, count(*) OVER () AS total
FROM groups g
LEFT JOIN group_members gm ON gm.group_id = g.id AND gm.user_id = @user_id
WHERE g.organization_id = @organization_id
  AND lower(g.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gm.user_id IS NOT NULL)
  AND EXISTS (SELECT 1 FROM organization_users ou WHERE ou.organization_id = @organization_id AND ou.user_id = @user_id)
ORDER BY lower(g.name), g.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountMemberGroups :one
-- CountMemberGroups counts what ListMemberGroups pages through.
SELECT count(*) FROM groups g
LEFT JOIN group_members gm ON gm.group_id = g.id AND gm.user_id = @user_id
WHERE g.organization_id = @organization_id
  AND lower(g.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gm.user_id IS NOT NULL);

-- name: ListPolicyGroups :many
-- ListPolicyGroups pages the groups a policy is attached to, by name
-- (groups_name_unique, or group_policies_policy when the policy has few).
-- With a search the page is SearchPolicyGroups, with "all groups"
-- ListAllGroupsForPolicy: one query with optional conditions would get a
-- generic plan that cannot drop them and loses the index that suits each case.
SELECT g.id, g.name, g.description FROM groups g
WHERE g.organization_id = @organization_id
  AND EXISTS (SELECT 1 FROM group_policies gp WHERE gp.group_id = g.id AND gp.policy_id = @policy_id)
ORDER BY lower(g.name), g.id
LIMIT @page_size OFFSET @page_offset;

-- name: ListAllGroupsForPolicy :many
-- ListAllGroupsForPolicy pages every group of an organization by name
-- (groups_name_unique), each marked when the policy is attached to it.
SELECT g.id, g.name, g.description, (gp.group_id IS NOT NULL)::boolean AS is_policy_group
FROM groups g
LEFT JOIN group_policies gp ON gp.group_id = g.id AND gp.policy_id = @policy_id
WHERE g.organization_id = @organization_id
ORDER BY lower(g.name), g.id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchPolicyGroups :many
-- SearchPolicyGroups pages the groups whose name contains the escaped
-- text (groups_name_trgm), each marked when the policy is attached to it;
-- without get_all only those.
SELECT g.id, g.name, g.description, (gp.group_id IS NOT NULL)::boolean AS is_policy_group
FROM groups g
LEFT JOIN group_policies gp ON gp.group_id = g.id AND gp.policy_id = @policy_id
WHERE g.organization_id = @organization_id
  AND lower(g.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gp.group_id IS NOT NULL)
ORDER BY lower(g.name), g.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountPolicyGroups :one
-- CountPolicyGroups counts the groups of an organization a policy is attached to.
SELECT count(*) FROM group_policies gp
JOIN groups g ON g.id = gp.group_id
WHERE gp.policy_id = @policy_id AND g.organization_id = @organization_id;

-- name: CountSearchPolicyGroups :one
-- CountSearchPolicyGroups counts what SearchPolicyGroups pages through.
SELECT count(*) FROM groups g
LEFT JOIN group_policies gp ON gp.group_id = g.id AND gp.policy_id = @policy_id
WHERE g.organization_id = @organization_id
  AND lower(g.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gp.group_id IS NOT NULL);
