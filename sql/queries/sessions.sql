-- name: CreateSession :exec
-- CreateSession records a new sign-in, and deletes up to 100 expired
-- sessions, so the table holds little more than the live ones; concurrent
-- sweeps skip each other's rows.
WITH swept AS (
    DELETE FROM sessions WHERE id IN (
        SELECT expired.id FROM sessions AS expired WHERE expired.expires_at <= now() LIMIT 100 FOR UPDATE SKIP LOCKED
    )
)
INSERT INTO sessions (id, user_id, expires_at) VALUES (@id, @user_id, @expires_at);

-- name: GetSessionUser :one
-- GetSessionUser returns the user of a session that has not ended or expired.
SELECT users.* FROM sessions JOIN users ON users.id = sessions.user_id
WHERE sessions.id = @id AND sessions.user_id = @user_id AND sessions.expires_at > now();

-- name: DeleteSession :execrows
-- DeleteSession ends one session.
DELETE FROM sessions WHERE id = @id AND user_id = @user_id;

-- name: DeleteUserSessions :exec
-- DeleteUserSessions ends every session of a user.
DELETE FROM sessions WHERE user_id = $1;

-- name: GetSessionUserContext :one
-- GetSessionUserContext is GetSessionUser with where the user works
-- (GetUserContext), for the pages, which need both for every request: the
-- remembered organization while the user is still a member of it and of its
-- workspace, else their oldest membership; the nil uuid where the user
-- belongs to no organization at all.
SELECT sqlc.embed(users),
    coalesce(uc.workspace_id, '00000000-0000-0000-0000-000000000000')::uuid AS workspace_id,
    coalesce(uc.organization_id, '00000000-0000-0000-0000-000000000000')::uuid AS organization_id,
    uc.project_id, uc.env_id
FROM sessions
JOIN users ON users.id = sessions.user_id
LEFT JOIN LATERAL (
    SELECT o.workspace_id, o.id AS organization_id, c.project_id, c.env_id
    FROM organization_users ou
    JOIN organizations o ON o.id = ou.organization_id
    JOIN workspace_users wu ON wu.workspace_id = o.workspace_id AND wu.user_id = ou.user_id
    LEFT JOIN user_contexts c ON c.user_id = ou.user_id AND c.organization_id = ou.organization_id
    WHERE ou.user_id = users.id
    ORDER BY (c.user_id IS NULL), ou.created_at, o.id
    LIMIT 1
) uc ON true
WHERE sessions.id = @id AND sessions.user_id = @user_id AND sessions.expires_at > now();
