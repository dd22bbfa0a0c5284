-- name: CreatePolicy :one
-- CreatePolicy inserts a policy; built-ins pass their fixed id and a NULL organization.
INSERT INTO policies (id, organization_id, name, key, description, type, statements)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: AddMemberPolicy :exec
-- AddMemberPolicy attaches a policy to a member directly; attaching twice is harmless.
INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING;

-- name: ListMemberStatements :many
-- ListMemberStatements returns the statements of every policy a member holds in
-- an organization, directly or through a group, each policy once.
SELECT p.statements FROM policies p
WHERE p.id IN (
    SELECT mp.policy_id FROM member_policies mp
    WHERE mp.organization_id = @organization_id::uuid AND mp.user_id = @user_id
    UNION
    SELECT gp.policy_id FROM group_policies gp
    JOIN group_members gm ON gm.group_id = gp.group_id
    WHERE gm.organization_id = @organization_id::uuid AND gm.user_id = @user_id
);

-- name: UpsertBuiltinPolicy :exec
-- UpsertBuiltinPolicy keeps a built-in policy equal to its definition in code.
INSERT INTO policies (id, organization_id, name, key, description, type, statements)
VALUES ($1, NULL, $2, $3, $4, 'SysManaged', $5)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, key = EXCLUDED.key,
    description = EXCLUDED.description, statements = EXCLUDED.statements, updated_at = now()
WHERE policies.statements <> EXCLUDED.statements OR policies.name <> EXCLUDED.name
   OR policies.description <> EXCLUDED.description;

-- name: GetPolicy :one
-- GetPolicy returns one of an organization's policies or a built-in one.
SELECT * FROM policies
WHERE id = @id AND (organization_id = @organization_id::uuid OR organization_id IS NULL);

-- name: GetPolicyByKey :one
-- GetPolicyByKey finds the policy with exactly this key among an
-- organization's and the built-in ones, the organization's first.
SELECT * FROM policies
WHERE key = @key AND (organization_id = @organization_id::uuid OR organization_id IS NULL)
ORDER BY organization_id NULLS LAST
LIMIT 1;

-- name: IsPolicyKeyUsed :one
-- IsPolicyKeyUsed tells whether a key, compared case-insensitively, is taken
-- by one of an organization's policies or a built-in one.
SELECT EXISTS (
    SELECT 1 FROM policies
    WHERE lower(key) = lower(@key::text) AND (organization_id = @organization_id::uuid OR organization_id IS NULL)
);

-- name: ListPolicies :many
-- ListPolicies pages the built-in policies and an organization's, built-ins
-- first, then by name, filtered by part of the name (an escaped LIKE
-- pattern); policies_org_name.
SELECT * FROM policies
WHERE (organization_id = @organization_id::uuid OR organization_id IS NULL)
  AND lower(name) LIKE '%' || lower(@name::text) || '%'
ORDER BY organization_id IS NOT NULL, lower(name), id
LIMIT @page_size OFFSET @page_offset;

-- name: CountPolicies :one
-- CountPolicies counts what ListPolicies pages through.
SELECT count(*) FROM policies
WHERE (organization_id = @organization_id::uuid OR organization_id IS NULL)
  AND lower(name) LIKE '%' || lower(@name::text) || '%';

-- name: CountUsablePolicies :one
-- CountUsablePolicies counts how many of ids are an organization's policies
-- or built-in ones; callers pass distinct ids.
SELECT count(*) FROM policies
WHERE id = ANY(@ids::uuid[]) AND (organization_id = @organization_id::uuid OR organization_id IS NULL);

-- name: UpdatePolicySettings :one
-- UpdatePolicySettings renames and describes one of an organization's own
-- policies; built-ins never match.
UPDATE policies SET name = @name, description = @description, updated_at = now()
WHERE id = @id AND organization_id = @organization_id::uuid
RETURNING *;

-- name: UpdatePolicyStatements :one
-- UpdatePolicyStatements replaces the statements of one of an organization's
-- own policies; built-ins never match.
UPDATE policies SET statements = @statements, updated_at = now()
WHERE id = @id AND organization_id = @organization_id::uuid
RETURNING *;

-- name: DeletePolicy :execrows
-- DeletePolicy removes one of an organization's own policies; its member and
-- group attachments cascade.
DELETE FROM policies WHERE id = @id AND organization_id = @organization_id::uuid;

-- name: RemoveMemberPolicy :exec
-- RemoveMemberPolicy detaches a policy from a member; detaching twice is harmless.
DELETE FROM member_policies WHERE organization_id = $1 AND user_id = $2 AND policy_id = $3;

-- name: AddMemberPolicies :exec
-- AddMemberPolicies attaches to a member those of ids that are the
-- organization's policies or built-in ones.
INSERT INTO member_policies (organization_id, user_id, policy_id)
SELECT @organization_id::uuid, @user_id, p.id FROM policies p
WHERE p.id = ANY(@ids::uuid[]) AND (p.organization_id = @organization_id::uuid OR p.organization_id IS NULL)
ON CONFLICT DO NOTHING;

-- name: ListMemberPolicyIDs :many
-- ListMemberPolicyIDs returns the policies a member holds directly.
SELECT policy_id FROM member_policies
WHERE organization_id = $1 AND user_id = $2
ORDER BY policy_id;

-- name: ListMemberPolicies :many
-- ListMemberPolicies pages the policies usable in an organization, each
-- marked when the member holds it directly; without get_all only those.
-- An organization has few policies (policies_org_name), and each row counts
-- them all; there are none unless the user is a member of the organization
-- (its key, once): an empty page alone leaves the caller to ask which.
SELECT p.id, p.name, p.type, p.description, (mp.policy_id IS NOT NULL)::boolean AS is_member_policy, count(*) OVER () AS total
FROM policies p
LEFT JOIN member_policies mp
       ON mp.organization_id = @organization_id::uuid AND mp.user_id = @user_id AND mp.policy_id = p.id
WHERE (p.organization_id = @organization_id::uuid OR p.organization_id IS NULL)
  AND lower(p.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR mp.policy_id IS NOT NULL)
  AND EXISTS (SELECT 1 FROM organization_users ou WHERE ou.organization_id = @organization_id::uuid AND ou.user_id = @user_id)
ORDER BY p.organization_id IS NOT NULL, lower(p.name), p.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountMemberPolicies :one
-- CountMemberPolicies counts what ListMemberPolicies pages through.
SELECT count(*) FROM policies p
LEFT JOIN member_policies mp
       ON mp.organization_id = @organization_id::uuid AND mp.user_id = @user_id AND mp.policy_id = p.id
WHERE (p.organization_id = @organization_id::uuid OR p.organization_id IS NULL)
  AND lower(p.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR mp.policy_id IS NOT NULL);

-- name: ListInheritedPolicies :many
-- ListInheritedPolicies pages the policies a member holds through groups,
-- one row per policy and group (group_members_user), each counting them
-- all. It starts from the user's membership of the organization (its key):
-- a member without any has one row of zero values (total 0), so only an
-- empty page says the user is not a member, or is past the last row.
SELECT coalesce(ip.id, '00000000-0000-0000-0000-000000000000')::uuid AS id, coalesce(ip.name, '')::text AS name,
       coalesce(ip.type, '')::text AS type, coalesce(ip.description, '')::text AS description,
       coalesce(ip.created_at, 'epoch')::timestamptz AS created_at,
       coalesce(ip.group_id, '00000000-0000-0000-0000-000000000000')::uuid AS group_id,
       coalesce(ip.group_name, '')::text AS group_name, count(ip.id) OVER () AS total
FROM organization_users ou
LEFT JOIN (
    SELECT p.id, p.name, p.type, p.description, p.created_at, g.id AS group_id, g.name AS group_name, gm.user_id
    FROM group_members gm
    JOIN groups g ON g.id = gm.group_id
    JOIN group_policies gp ON gp.group_id = g.id
    JOIN policies p ON p.id = gp.policy_id
    WHERE gm.organization_id = @organization_id::uuid AND gm.user_id = @user_id
      AND lower(p.name) LIKE '%' || lower(@name::text) || '%'
) ip ON ip.user_id = ou.user_id
WHERE ou.organization_id = @organization_id::uuid AND ou.user_id = @user_id
ORDER BY lower(ip.name), ip.id, lower(ip.group_name), ip.group_id
LIMIT @page_size OFFSET @page_offset;

-- name: CountInheritedPolicies :one
-- CountInheritedPolicies counts what ListInheritedPolicies pages through.
SELECT count(*)
FROM group_members gm
JOIN group_policies gp ON gp.group_id = gm.group_id
JOIN policies p ON p.id = gp.policy_id
WHERE gm.organization_id = @organization_id::uuid AND gm.user_id = @user_id
  AND lower(p.name) LIKE '%' || lower(@name::text) || '%';

-- name: AddGroupPolicy :exec
-- AddGroupPolicy attaches a policy to a group; attaching twice is harmless.
INSERT INTO group_policies (group_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- name: RemoveGroupPolicy :exec
-- RemoveGroupPolicy detaches a policy from a group; detaching twice is harmless.
DELETE FROM group_policies WHERE group_id = $1 AND policy_id = $2;

-- name: ListGroupPolicyIDs :many
-- ListGroupPolicyIDs returns the policies attached to a group.
SELECT policy_id FROM group_policies WHERE group_id = $1 ORDER BY policy_id;

-- name: ListGroupPolicies :many
-- ListGroupPolicies pages the policies usable in an organization, each
-- marked when attached to the group; without get_all only those. An
-- organization has few policies (policies_org_name).
SELECT p.id, p.name, p.type, p.description, (gp.policy_id IS NOT NULL)::boolean AS is_group_policy
FROM policies p
LEFT JOIN group_policies gp ON gp.group_id = @group_id AND gp.policy_id = p.id
WHERE (p.organization_id = @organization_id::uuid OR p.organization_id IS NULL)
  AND lower(p.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gp.policy_id IS NOT NULL)
ORDER BY p.organization_id IS NOT NULL, lower(p.name), p.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountGroupPolicies :one
-- CountGroupPolicies counts what ListGroupPolicies pages through.
SELECT count(*) FROM policies p
LEFT JOIN group_policies gp ON gp.group_id = @group_id AND gp.policy_id = p.id
WHERE (p.organization_id = @organization_id::uuid OR p.organization_id IS NULL)
  AND lower(p.name) LIKE '%' || lower(@name::text) || '%'
  AND (@get_all::boolean OR gp.policy_id IS NOT NULL);

-- name: OrganizationHasOwner :one
-- OrganizationHasOwner tells whether some member holds the owner policy,
-- directly (member_policies_org_policy) or through a group with members.
SELECT EXISTS (
    SELECT 1 FROM member_policies mp
    WHERE mp.organization_id = @organization_id::uuid AND mp.policy_id = @owner_policy_id::uuid
    UNION ALL
    SELECT 1 FROM group_policies gp
    JOIN groups g ON g.id = gp.group_id
    WHERE g.organization_id = @organization_id::uuid AND gp.policy_id = @owner_policy_id::uuid
      AND EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id)
);

-- name: ListHeldPolicies :many
-- ListHeldPolicies returns every policy a member holds in an organization,
-- directly or through a group, each once, in ListPolicies' order
-- (member_policies' key and group_members_user lead with the organization
-- and user).
SELECT p.* FROM policies p
WHERE p.id IN (
    SELECT mp.policy_id FROM member_policies mp
    WHERE mp.organization_id = @organization_id::uuid AND mp.user_id = @user_id
    UNION
    SELECT gp.policy_id FROM group_policies gp
    JOIN group_members gm ON gm.group_id = gp.group_id
    WHERE gm.organization_id = @organization_id::uuid AND gm.user_id = @user_id
)
ORDER BY p.organization_id IS NOT NULL, lower(p.name), p.id;
