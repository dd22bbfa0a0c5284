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
    WHERE mp.organization_id = @organization_id AND mp.user_id = @user_id
    UNION
    SELECT gp.policy_id FROM group_policies gp
    JOIN group_members gm ON gm.group_id = gp.group_id
    WHERE gm.organization_id = @organization_id AND gm.user_id = @user_id
);

-- name: UpsertBuiltinPolicy :exec
-- UpsertBuiltinPolicy keeps a built-in policy equal to its definition in code.
INSERT INTO policies (id, organization_id, name, key, description, type, statements)
VALUES ($1, NULL, $2, $3, $4, 'SysManaged', $5)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, key = EXCLUDED.key,
    description = EXCLUDED.description, statements = EXCLUDED.statements, updated_at = now()
WHERE policies.statements <> EXCLUDED.statements OR policies.name <> EXCLUDED.name
   OR policies.description <> EXCLUDED.description;
