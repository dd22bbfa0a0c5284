-- refresh_tokens are the long-lived sign-in credentials FeatBit's admin UI
-- keeps in an HttpOnly cookie (refresh-token, path /api/v1/identity) to get a
-- new session token when its own expires. Only the SHA-256 hash of the token
-- is kept. A token is used once: refreshing revokes it (revoked_at) and names
-- its successor (replaced_by), as FeatBit's RefreshToken does; it is worthless
-- after expires_at (30 days). session_id is the session issued with it, which
-- the refresh ends (its token stops working, as a bearer refresh does).
-- Rows go with their user; a password change deletes them all.
CREATE TABLE refresh_tokens (
    token_hash    bytea PRIMARY KEY,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id    uuid NOT NULL,
    created_by_ip text NOT NULL DEFAULT '',
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    revoked_by_ip text,
    replaced_by   bytea,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

-- An organization is initialized (FeatBit's onboarding is behind it) once it
-- has a project, however the project came: onboarding, the API, the pages'
-- first-run guide. FeatBit's admin UI sends a member of an uninitialized
-- organization to onboarding, and of an initialized one without any project
-- to "Permission Denied"; so an organization without a project must not say
-- it is initialized, and one with a project must.
CREATE FUNCTION bunting_project_initializes_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organizations SET initialized = true, updated_at = now()
    WHERE id = NEW.organization_id AND NOT initialized;
    RETURN NULL;
END;
$$;
CREATE TRIGGER projects_initialize_org AFTER INSERT ON projects
    FOR EACH ROW EXECUTE FUNCTION bunting_project_initializes_org();

-- The default organization of a fresh install was made initialized without a
-- project; every organization still without one awaits onboarding.
UPDATE organizations o SET initialized = false
WHERE o.initialized AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.organization_id = o.id);
