-- Every change that can alter who may do what notifies channel bunting_auth
-- when its transaction commits, so each instance can drop the credentials and
-- statements it resolved earlier (store.authCache). Triggers, not call sites,
-- so no write path can forget. A token's last_used_at is not such a change.
CREATE FUNCTION bunting_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bunting_auth', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER users_auth_changed AFTER UPDATE OF session_epoch, password_hash OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER access_tokens_auth_changed AFTER UPDATE OF status, permissions, organization_id OR DELETE ON access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER workspace_users_auth_changed AFTER INSERT OR UPDATE OR DELETE ON workspace_users
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER organization_users_auth_changed AFTER INSERT OR UPDATE OR DELETE ON organization_users
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER organizations_auth_changed AFTER INSERT OR UPDATE OR DELETE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER policies_auth_changed AFTER UPDATE OR DELETE ON policies
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER member_policies_auth_changed AFTER INSERT OR UPDATE OR DELETE ON member_policies
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER group_members_auth_changed AFTER INSERT OR UPDATE OR DELETE ON group_members
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
CREATE TRIGGER group_policies_auth_changed AFTER INSERT OR UPDATE OR DELETE ON group_policies
    FOR EACH STATEMENT EXECUTE FUNCTION bunting_auth_changed();
