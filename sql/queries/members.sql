-- name: GetMember :one
-- GetMember returns a member of an organization with the number of
-- organizations the user belongs to.
SELECT u.id, u.email, u.name, u.initial_password, ou.invitor_id,
       (SELECT count(*) FROM organization_users o2 WHERE o2.user_id = u.id) AS organization_count
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id AND ou.user_id = @user_id;

-- name: ListMembers :many
-- ListMembers pages an organization's members, newest first
-- (organization_users_org_created). Member pages come in separate queries
-- for "no search", "search" and "all members" rather than one with optional
-- conditions: a prepared statement's generic plan cannot drop an empty
-- condition, and would lose the index that suits each case. Flags such as
-- is_policy_member are LEFT JOINs on the attachment's key, not EXISTS in the
-- select list, which the planner may turn into a hash of every attachment.
SELECT u.id, u.email, u.name, u.initial_password, ou.invitor_id,
       (SELECT count(*) FROM organization_users o2 WHERE o2.user_id = u.id) AS organization_count
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchMembers :many
-- SearchMembers pages the members whose email or name contains the escaped
-- text (users_email_trgm, users_name_trgm), newest first.
SELECT u.id, u.email, u.name, u.initial_password, ou.invitor_id,
       (SELECT count(*) FROM organization_users o2 WHERE o2.user_id = u.id) AS organization_count
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND (lower(u.email) LIKE '%' || lower(@search::text) || '%' OR lower(u.name) LIKE '%' || lower(@search::text) || '%')
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: CountMembers :one
-- CountMembers counts an organization's members.
SELECT count(*) FROM organization_users WHERE organization_id = $1;

-- name: CountSearchMembers :one
-- CountSearchMembers counts what SearchMembers pages through.
SELECT count(*)
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND (lower(u.email) LIKE '%' || lower(@search::text) || '%' OR lower(u.name) LIKE '%' || lower(@search::text) || '%');

-- name: RemoveOrganizationUser :execrows
-- RemoveOrganizationUser takes a user out of an organization; the user's
-- policies and group memberships there cascade.
DELETE FROM organization_users WHERE organization_id = $1 AND user_id = $2;

-- name: RemoveWorkspaceUserWithoutOrganizations :exec
-- RemoveWorkspaceUserWithoutOrganizations takes a user out of a workspace
-- once the user belongs to none of its organizations.
DELETE FROM workspace_users wu
WHERE wu.workspace_id = @workspace_id AND wu.user_id = @user_id
  AND NOT EXISTS (SELECT 1 FROM organization_users ou
                  JOIN organizations o ON o.id = ou.organization_id
                  WHERE o.workspace_id = wu.workspace_id AND ou.user_id = wu.user_id);

-- name: ListPolicyMembers :many
-- ListPolicyMembers pages the members who hold a policy directly, newest
-- first (organization_users_org_created probing member_policies' key, or
-- member_policies_org_policy when few hold it). With a search the page is
-- SearchPolicyMembers, with "all members" ListAllMembersForPolicy.
SELECT u.id, u.name, u.email
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND EXISTS (SELECT 1 FROM member_policies mp
              WHERE mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = @policy_id)
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: ListAllMembersForPolicy :many
-- ListAllMembersForPolicy pages every member of an organization, newest
-- first, each marked when holding the policy directly.
SELECT u.id, u.name, u.email, (mp.user_id IS NOT NULL)::boolean AS is_policy_member
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN member_policies mp
       ON mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = @policy_id
WHERE ou.organization_id = @organization_id
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchPolicyMembers :many
-- SearchPolicyMembers pages the members whose email contains the escaped
-- text (users_email_trgm), newest first, each marked when holding the policy
-- directly; without get_all only those. Each row counts them all: the few
-- a search matches are all read to be sorted anyway. It finds none unless
-- the policy is the organization's or built in (policies' primary key,
-- once).
SELECT u.id, u.name, u.email, (mp.user_id IS NOT NULL)::boolean AS is_policy_member, count(*) OVER () AS total
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN member_policies mp
       ON mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = @policy_id
WHERE ou.organization_id = @organization_id
  AND EXISTS (SELECT 1 FROM policies p
              WHERE p.id = @policy_id AND (p.organization_id = @organization_id OR p.organization_id IS NULL))
  AND lower(u.email) LIKE '%' || lower(@search::text) || '%'
  AND (@get_all::boolean OR mp.user_id IS NOT NULL)
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: UsersByEmailPart :many
-- UsersByEmailPart finds the users (of every workspace) whose email contains
-- the escaped text, at most max of them (users_email_trgm): a search's first
-- step, planned with its pattern each time (searchPlans) and so kept to one
-- table. PolicyMembersAmong pages those of an organization.
SELECT u.id FROM users u
WHERE lower(u.email) LIKE '%' || lower(@search::text) || '%'
LIMIT @max;

-- name: PolicyMembersAmong :many
-- PolicyMembersAmong is SearchPolicyMembers among the users ids names, as
-- UsersByEmailPart found them (organization_users_user, member_policies'
-- key). It has no pattern, and is written so that PostgreSQL keeps a
-- generic plan of it: with a join to member_policies filtered by get_all
-- it planned every call anew, expecting a plan for the ids at hand to be
-- cheaper.
SELECT u.id, u.name, u.email, held.policy AS is_policy_member, count(*) OVER () AS total
FROM unnest(@ids::uuid[]) AS found(id)
JOIN organization_users ou ON ou.organization_id = @organization_id AND ou.user_id = found.id
JOIN users u ON u.id = ou.user_id
CROSS JOIN LATERAL (
    SELECT EXISTS (SELECT 1 FROM member_policies mp
                   WHERE mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = @policy_id)::boolean AS policy
) held
WHERE (@get_all::boolean OR held.policy)
  AND EXISTS (SELECT 1 FROM policies p
              WHERE p.id = @policy_id AND (p.organization_id = @organization_id OR p.organization_id IS NULL))
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: CountPolicyMembers :one
-- CountPolicyMembers counts the members who hold a policy directly
-- (member_policies_org_policy).
SELECT count(*) FROM member_policies WHERE organization_id = @organization_id AND policy_id = @policy_id;

-- name: CountSearchPolicyMembers :one
-- CountSearchPolicyMembers counts what SearchPolicyMembers pages through.
SELECT count(*)
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN member_policies mp
       ON mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = @policy_id
WHERE ou.organization_id = @organization_id
  AND lower(u.email) LIKE '%' || lower(@search::text) || '%'
  AND (@get_all::boolean OR mp.user_id IS NOT NULL);

-- name: ListGroupMembers :many
-- ListGroupMembers pages the members of a group, newest first.
SELECT u.id, u.name, u.email
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = @group_id AND gm.user_id = ou.user_id)
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: ListAllMembersForGroup :many
-- ListAllMembersForGroup pages every member of an organization, newest
-- first, each marked when in the group.
SELECT u.id, u.name, u.email, (gm.user_id IS NOT NULL)::boolean AS is_group_member
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN group_members gm ON gm.group_id = @group_id AND gm.user_id = ou.user_id
WHERE ou.organization_id = @organization_id
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchGroupMembers :many
-- SearchGroupMembers pages the members whose email or name contains the
-- escaped text, newest first, each marked when in the group; without get_all
-- only those.
SELECT u.id, u.name, u.email, (gm.user_id IS NOT NULL)::boolean AS is_group_member
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN group_members gm ON gm.group_id = @group_id AND gm.user_id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND (lower(u.email) LIKE '%' || lower(@search::text) || '%' OR lower(u.name) LIKE '%' || lower(@search::text) || '%')
  AND (@get_all::boolean OR gm.user_id IS NOT NULL)
ORDER BY ou.created_at DESC, ou.user_id
LIMIT @page_size OFFSET @page_offset;

-- name: CountGroupMembers :one
-- CountGroupMembers counts the members of a group.
SELECT count(*) FROM group_members WHERE group_id = $1;

-- name: CountSearchGroupMembers :one
-- CountSearchGroupMembers counts what SearchGroupMembers pages through.
SELECT count(*)
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
LEFT JOIN group_members gm ON gm.group_id = @group_id AND gm.user_id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND (lower(u.email) LIKE '%' || lower(@search::text) || '%' OR lower(u.name) LIKE '%' || lower(@search::text) || '%')
  AND (@get_all::boolean OR gm.user_id IS NOT NULL);
