-- Tenancy, identity, access control, projects and environments, and history.
-- Creation times use clock_timestamp() so rows made in one transaction keep their order.
-- Keys and names are unique case-insensitively in their parent (decisions.md §4);
-- the unique indexes carry the names that store.translate maps to KeyHasBeenUsed
-- or NameHasBeenUsed, so keep the suffixes `_key_unique` and `_name_unique`.

-- settings holds instance-wide values every Bunting process must agree on,
-- such as the generated secret key.
CREATE TABLE settings (
    name  text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE workspaces (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    key        text NOT NULL,
    license    text NOT NULL DEFAULT '',
    -- sso_oidc is the OIDC settings object with clientSecret encrypted by the
    -- server key (see store.sealer); NULL when SSO was never configured.
    sso_oidc   jsonb,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_key_unique ON workspaces (lower(key));

CREATE TABLE organizations (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id        uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name                text NOT NULL,
    key                 text NOT NULL,
    initialized         boolean NOT NULL DEFAULT true,
    -- default_policy_ids and default_group_ids are what a new member gets when
    -- added without explicit policies or groups.
    default_policy_ids  uuid[] NOT NULL DEFAULT '{}',
    default_group_ids   uuid[] NOT NULL DEFAULT '{}',
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_key_unique ON organizations (workspace_id, lower(key));

CREATE TABLE users (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email            text NOT NULL,
    name             text NOT NULL,
    -- password_hash is bcrypt; NULL for users who only sign in through SSO.
    password_hash    text,
    -- initial_password is the generated first password, sealed with the
    -- server key so only the inviter can be shown it; cleared on change.
    initial_password text,
    -- session_epoch is carried in session tokens; bumping it revokes them all.
    session_epoch    integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

CREATE TABLE workspace_users (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_users_user ON workspace_users (user_id);

CREATE TABLE organization_users (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    invitor_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_users_user ON organization_users (user_id);

-- policies with organization_id NULL are the built-in SysManaged policies
-- shared by every organization.
CREATE TABLE policies (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    key             text NOT NULL,
    description     text NOT NULL DEFAULT '',
    type            text NOT NULL CHECK (type IN ('SysManaged', 'CustomerManaged')),
    statements      jsonb NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX policies_key_unique
    ON policies (coalesce(organization_id, '00000000-0000-0000-0000-000000000000'), lower(key));

CREATE TABLE groups (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX groups_name_unique ON groups (organization_id, lower(name));

CREATE TABLE member_policies (
    organization_id uuid NOT NULL,
    user_id         uuid NOT NULL,
    policy_id       uuid NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (organization_id, user_id, policy_id),
    FOREIGN KEY (organization_id, user_id)
        REFERENCES organization_users (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX member_policies_policy ON member_policies (policy_id);

CREATE TABLE group_members (
    group_id        uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL,
    user_id         uuid NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (group_id, user_id),
    FOREIGN KEY (organization_id, user_id)
        REFERENCES organization_users (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX group_members_user ON group_members (organization_id, user_id);

CREATE TABLE group_policies (
    group_id   uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    policy_id  uuid NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (group_id, policy_id)
);
CREATE INDEX group_policies_policy ON group_policies (policy_id);

CREATE TABLE access_tokens (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    creator_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text NOT NULL,
    type            text NOT NULL CHECK (type IN ('Personal', 'Service')),
    status          text NOT NULL DEFAULT 'Active' CHECK (status IN ('Active', 'Inactive')),
    -- token_hash is SHA-256 of the full token; the token itself is never stored.
    token_hash      bytea NOT NULL UNIQUE,
    -- preview is the masked form shown in lists, e.g. "api-AbCd…wXyZ".
    preview         text NOT NULL,
    -- permissions are the statements of a Service token; empty for Personal.
    permissions     jsonb NOT NULL DEFAULT '[]',
    last_used_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX access_tokens_name_unique ON access_tokens (organization_id, lower(name));

CREATE TABLE projects (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    key             text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX projects_key_unique ON projects (organization_id, lower(key));

CREATE TABLE environments (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id             uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name                   text NOT NULL,
    key                    text NOT NULL,
    description            text NOT NULL DEFAULT '',
    require_change_comment boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX environments_key_unique ON environments (project_id, lower(key));

CREATE TABLE env_secrets (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id     uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name       text NOT NULL,
    type       text NOT NULL CHECK (type IN ('server', 'client')),
    -- value is what SDKs present; it embeds the environment id (store.NewSecretValue).
    value      text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX env_secrets_env ON env_secrets (env_id, created_at);

-- audit_logs records every change (decisions.md §6). env_id is set for
-- changes inside an environment and cascades with it; organization-level
-- entries (projects, IAM, tokens) keep env_id NULL and outlive what they describe.
CREATE TABLE audit_logs (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    env_id          uuid REFERENCES environments (id) ON DELETE CASCADE,
    ref_type        text NOT NULL,
    ref_id          text NOT NULL,
    keyword         text NOT NULL DEFAULT '',
    operation       text NOT NULL CHECK (operation IN ('Create', 'Update', 'Archive', 'Restore', 'Remove')),
    previous        jsonb,
    current         jsonb,
    comment         text NOT NULL DEFAULT '',
    -- creator_id is a user id or an access-token id; creator_kind says which.
    creator_id      uuid NOT NULL,
    creator_kind    text NOT NULL CHECK (creator_kind IN ('user', 'token', 'system')),
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX audit_logs_env_created ON audit_logs (env_id, created_at DESC) WHERE env_id IS NOT NULL;
CREATE INDEX audit_logs_org_created ON audit_logs (organization_id, created_at DESC);
CREATE INDEX audit_logs_ref ON audit_logs (ref_id, created_at DESC);

-- login_failures counts recent failed sign-ins per subject ("email:…" or
-- "addr:…") so throttling holds across every instance on this database.
CREATE TABLE login_failures (
    subject      text PRIMARY KEY,
    failures     integer NOT NULL,
    window_start timestamptz NOT NULL
);
