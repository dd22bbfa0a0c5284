-- name: GetUserContext :one
-- GetUserContext returns where a user works: the remembered organization while
-- the user is still a member of it and of its workspace, otherwise the user's
-- oldest membership (organization_users_user), with no project or environment.
SELECT o.workspace_id, o.id AS organization_id, uc.project_id, uc.env_id
FROM organization_users ou
JOIN organizations o ON o.id = ou.organization_id
JOIN workspace_users wu ON wu.workspace_id = o.workspace_id AND wu.user_id = ou.user_id
LEFT JOIN user_contexts uc ON uc.user_id = ou.user_id AND uc.organization_id = ou.organization_id
WHERE ou.user_id = $1
ORDER BY (uc.user_id IS NULL), ou.created_at, o.id
LIMIT 1;

-- name: SetUserContext :exec
-- SetUserContext remembers where a user works, replacing the earlier choice.
INSERT INTO user_contexts (user_id, organization_id, project_id, env_id)
VALUES ($1, $2, $3, $4)
ON CONFLICT (user_id) DO UPDATE
SET organization_id = excluded.organization_id, project_id = excluded.project_id,
    env_id = excluded.env_id, updated_at = now();
