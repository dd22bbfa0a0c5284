-- Feature flags, segments, flag revisions.

-- pg_trgm lets "part of a name" searches use an index (trusted extension since PostgreSQL 13).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE feature_flags (
    id                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id                   uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key                      text NOT NULL,
    name                     text NOT NULL,
    description              text NOT NULL DEFAULT '',
    variation_type           text NOT NULL,
    variations               jsonb NOT NULL,
    target_users             jsonb NOT NULL DEFAULT '[]',
    rules                    jsonb NOT NULL DEFAULT '[]',
    is_enabled               boolean NOT NULL DEFAULT false,
    disabled_variation_id    text NOT NULL,
    fallthrough              jsonb NOT NULL,
    expt_include_all_targets boolean NOT NULL DEFAULT true,
    tags                     text[] NOT NULL DEFAULT '{}',
    is_archived              boolean NOT NULL DEFAULT false,
    -- segment_refs are the segments the rules name, kept by the store on every
    -- write so "is this segment used?" is one index lookup.
    segment_refs             uuid[] NOT NULL DEFAULT '{}',
    revision                 uuid NOT NULL,
    creator_id               uuid NOT NULL,
    updator_id               uuid NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at               timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX feature_flags_key_unique ON feature_flags (env_id, lower(key));
-- Lookup by exact key and listing sorted by key.
CREATE INDEX feature_flags_env_key ON feature_flags (env_id, is_archived, key);
-- Listing newest first.
CREATE INDEX feature_flags_env_created ON feature_flags (env_id, is_archived, created_at DESC, id);
-- Search by part of the name or key.
CREATE INDEX feature_flags_search ON feature_flags USING gin ((lower(name) || ' ' || lower(key)) gin_trgm_ops);
CREATE INDEX feature_flags_tags ON feature_flags USING gin (tags);
CREATE INDEX feature_flags_segment_refs ON feature_flags USING gin (segment_refs);

-- flag_revisions keeps every version of a flag with the change's comment.
CREATE TABLE flag_revisions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    flag_id      uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    revision     uuid NOT NULL,
    snapshot     jsonb NOT NULL,
    comment      text NOT NULL DEFAULT '',
    creator_id   uuid NOT NULL,
    creator_kind text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX flag_revisions_flag_created ON flag_revisions (flag_id, created_at DESC);

CREATE TABLE segments (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- env_id is the environment the segment was created in; a shared segment
    -- is also visible in every environment its scopes select.
    env_id          uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key             text NOT NULL,
    name            text NOT NULL,
    type            text NOT NULL CHECK (type IN ('environment-specific', 'shared')),
    scopes          text[] NOT NULL,
    description     text NOT NULL DEFAULT '',
    included        text[] NOT NULL DEFAULT '{}',
    excluded        text[] NOT NULL DEFAULT '{}',
    rules           jsonb NOT NULL DEFAULT '[]',
    tags            text[] NOT NULL DEFAULT '{}',
    is_archived     boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX segments_key_unique ON segments (env_id, lower(key));
CREATE INDEX segments_env_updated ON segments (env_id, is_archived, updated_at DESC);
-- Shared segments of an organization, found by the scopes an environment matches.
CREATE INDEX segments_shared_scopes ON segments USING gin (scopes) WHERE type = 'shared';
CREATE INDEX segments_search ON segments USING gin (lower(name) gin_trgm_ops);

-- Audit entries are listed per environment and filtered by what they are about.
CREATE INDEX audit_logs_env_ref ON audit_logs (env_id, ref_type, ref_id, created_at DESC) WHERE env_id IS NOT NULL;
