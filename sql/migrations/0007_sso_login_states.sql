-- sso_login_states holds the single-use state of each single sign-on attempt
-- between the redirect to the identity provider and its answer: the state
-- and the browser binding are kept as SHA-256 hashes, so the table alone
-- cannot complete an attempt. A row is consumed (deleted) by the callback
-- and is worthless after expires_at (ten minutes).
CREATE TABLE sso_login_states (
    state_hash    bytea PRIMARY KEY,
    browser_hash  bytea NOT NULL,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    nonce         text NOT NULL,
    code_verifier text NOT NULL,
    -- next is the local path the person was going to.
    next          text NOT NULL,
    expires_at    timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sso_login_states_expires ON sso_login_states (expires_at);
