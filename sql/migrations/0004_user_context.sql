-- user_contexts remembers, per user, the organization, project and environment
-- the admin pages last showed, so the context switcher survives sign-outs and
-- follows the person across browsers. A deleted project or environment leaves
-- the choice empty and the pages fall back to the first one the user may see.
-- (Migrations 0002 and 0003 are reserved for other branches.)
CREATE TABLE user_contexts (
    user_id         uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    project_id      uuid REFERENCES projects (id) ON DELETE SET NULL,
    env_id          uuid REFERENCES environments (id) ON DELETE SET NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
