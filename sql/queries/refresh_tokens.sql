-- name: CreateRefreshToken :exec
-- CreateRefreshToken records a refresh token issued with a session, in the
-- family of the sign-in it descends from, and deletes up to 100 expired
-- ones, so the table holds little more than the live ones (a spent token is
-- kept until it expires, so that presenting it again is recognized as reuse);
-- concurrent sweeps skip each other's rows.
WITH swept AS (
    DELETE FROM refresh_tokens WHERE token_hash IN (
        SELECT expired.token_hash FROM refresh_tokens AS expired
        WHERE expired.expires_at <= now() LIMIT 100 FOR UPDATE SKIP LOCKED
    )
)
INSERT INTO refresh_tokens (token_hash, user_id, session_id, family_id, created_by_ip, expires_at)
VALUES (@token_hash, @user_id, @session_id, @family_id, @created_by_ip, @expires_at);

-- name: RevokeRefreshToken :one
-- RevokeRefreshToken revokes a live refresh token (not revoked, not
-- expired), naming its successor when it is replaced, and returns it; no row
-- when the token is unknown, revoked or expired. The row lock makes two
-- refreshes with one token at once revoke it once: the second finds it revoked.
UPDATE refresh_tokens
SET revoked_at = clock_timestamp(), revoked_by_ip = @revoked_by_ip, replaced_by = @replaced_by
WHERE token_hash = @token_hash AND revoked_at IS NULL AND expires_at > now()
RETURNING user_id, session_id, family_id;

-- name: GetSpentRefreshToken :one
-- GetSpentRefreshToken returns the family of a refresh token already revoked
-- (spent by a refresh, or revoked with its chain or at a sign-out) and not
-- yet swept; no row for an unknown or merely expired one.
SELECT user_id, family_id FROM refresh_tokens
WHERE token_hash = @token_hash AND revoked_at IS NOT NULL;

-- name: RevokeRefreshFamily :execrows
-- RevokeRefreshFamily revokes every live token of a family (every token
-- descended from one sign-in) and ends every session issued with one of
-- them; it answers how many sessions ended.
WITH revoked AS (
    UPDATE refresh_tokens SET revoked_at = clock_timestamp(), revoked_by_ip = @revoked_by_ip
    WHERE family_id = @family_id AND revoked_at IS NULL
)
DELETE FROM sessions
WHERE sessions.user_id = @user_id AND sessions.id IN (SELECT r.session_id FROM refresh_tokens r WHERE r.family_id = @family_id);

-- name: RevokeSessionRefreshTokens :exec
-- RevokeSessionRefreshTokens revokes the live refresh tokens issued with a
-- session, as the session ends (a sign-out, by its bearer token or the
-- pages'), so the cookie kept beside it stops working too.
UPDATE refresh_tokens SET revoked_at = clock_timestamp(), revoked_by_ip = @revoked_by_ip
WHERE session_id = @session_id AND user_id = @user_id AND revoked_at IS NULL;

-- name: MoveSessionRefreshTokens :exec
-- MoveSessionRefreshTokens ties a session's live refresh tokens to the
-- session that replaces it (a bearer refresh), so ending the new one
-- revokes them.
UPDATE refresh_tokens SET session_id = @new_session_id
WHERE session_id = @session_id AND user_id = @user_id AND revoked_at IS NULL;

-- name: DeleteUserRefreshTokens :exec
-- DeleteUserRefreshTokens removes every refresh token of a user (a password change).
DELETE FROM refresh_tokens WHERE user_id = $1;
