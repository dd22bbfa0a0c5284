-- sessions are the sign-ins that have not ended. A session token (API) and the
-- page cookie carry the row's random id, signed; a request is signed in only
-- while its row exists. Signing out deletes the row; a password change deletes
-- every row of the user. Rows past expires_at are swept as new ones are made.
CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- Ending a live session must empty the actor cache of every instance
-- (store.authCache). A new session is in no cache, and sweeping expired rows
-- ends nothing (their tokens are refused by their expiry), so only deletions
-- of live rows notify; pg_notify sends one notification per transaction for
-- any number of rows.
CREATE TRIGGER sessions_auth_changed AFTER DELETE ON sessions
    FOR EACH ROW WHEN (OLD.expires_at > now()) EXECUTE FUNCTION bunting_auth_changed();

-- login_failures now counts attempts, reserved before the password is
-- compared; stale windows are swept by their start.
CREATE INDEX login_failures_window ON login_failures (window_start);
