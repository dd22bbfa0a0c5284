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
