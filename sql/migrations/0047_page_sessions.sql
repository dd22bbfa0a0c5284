-- A page's session is resolved once and kept in the actor cache with what
-- frames every page: where the person works (user_contexts), who they are
-- (their name and email in the top bar) and their organizations. So a change
-- to any of these must empty the caches as access changes do (0012).
DROP TRIGGER users_auth_changed ON users;
CREATE TRIGGER users_auth_changed AFTER UPDATE OF session_epoch, password_hash, name, email, origin OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER user_contexts_auth_changed AFTER INSERT OR UPDATE OR DELETE ON user_contexts
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
