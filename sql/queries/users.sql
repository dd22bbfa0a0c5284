-- name: CreateUser :one
-- CreateUser inserts a user; password_hash is NULL for SSO-only users, whose
-- origin is therefore Sso.
INSERT INTO users (email, name, password_hash, initial_password, origin)
VALUES ($1, $2, $3, $4, CASE WHEN $3::text IS NULL THEN 'Sso' ELSE 'Local' END)
RETURNING *;

-- name: GetUser :one
-- GetUser returns a user by id.
SELECT * FROM users WHERE id = $1;

-- name: GetUserByEmail :one
-- GetUserByEmail matches an email case-insensitively (users_email_unique).
SELECT * FROM users WHERE lower(email) = lower(@email::text);

-- name: UpdateUserPassword :one
-- UpdateUserPassword stores a new password hash and clears the initial
-- password. (users.session_epoch is no longer read: the sessions the change
-- ends are rows of table sessions.)
UPDATE users
SET password_hash = $2, initial_password = NULL, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: UpdateUserProfile :one
-- UpdateUserProfile sets a user's own name and email.
UPDATE users SET name = @name, email = @email, updated_at = now() WHERE id = @id RETURNING *;
