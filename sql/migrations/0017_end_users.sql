-- end_users are the users SDKs evaluate for, per environment, as insight
-- events and client SDKs' data-syncs name them (FeatBit's EndUser).
-- created_at is when the key was first seen, updated_at when it was last seen
-- (or upserted). Writes come in batches from the SDK endpoints' buffer.
CREATE TABLE end_users (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id     uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key_id     text NOT NULL,
    name       text,
    -- customizedProperties as SDKs send them: [{"name": …, "value": …}].
    properties jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (env_id, key_id)
);
-- The list pages by (updated_at, id), most recently seen first (keyset paging).
CREATE INDEX end_users_seen ON end_users (env_id, updated_at DESC, id DESC);
-- Searches match the start of the key or the name, case-insensitively.
CREATE INDEX end_users_key_prefix ON end_users (env_id, lower(key_id) text_pattern_ops);
CREATE INDEX end_users_name_prefix ON end_users (env_id, lower(name) text_pattern_ops);

-- end_user_counts counts each environment's end users, so the per-environment
-- bound on new keys is checked without counting millions of rows.
CREATE TABLE end_user_counts (
    env_id uuid PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    users  bigint NOT NULL
);

-- end_user_properties are the property names seen in an environment (and
-- those people add), FeatBit's EndUserProperty; the rule editors suggest them.
CREATE TABLE end_user_properties (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id                 uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name                   text NOT NULL,
    preset_values          jsonb NOT NULL DEFAULT '[]',
    use_preset_values_only boolean NOT NULL DEFAULT false,
    is_digest_field        boolean NOT NULL DEFAULT false,
    remark                 text NOT NULL DEFAULT '',
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT end_user_properties_name_unique UNIQUE (env_id, name)
);
