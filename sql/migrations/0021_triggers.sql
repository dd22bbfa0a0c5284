-- flag_triggers are secret URLs that turn a flag on or off when called
-- (FeatBit's Trigger). Only the token's SHA-256 is kept: the token itself is
-- shown once, when the trigger is made or its token reset. token_preview is
-- its first five characters, which lists show as FeatBit does.
CREATE TABLE flag_triggers (
    id                uuid PRIMARY KEY,
    flag_id           uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    type              text NOT NULL CHECK (type IN ('feature-flag-general')),
    action            text NOT NULL CHECK (action IN ('turn-on', 'turn-off')),
    description       text NOT NULL DEFAULT '',
    token_hash        bytea NOT NULL UNIQUE,
    token_preview     text NOT NULL,
    is_enabled        boolean NOT NULL DEFAULT true,
    triggered_times   integer NOT NULL DEFAULT 0,
    last_triggered_at timestamptz,
    creator_id        uuid NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX flag_triggers_flag ON flag_triggers (flag_id, created_at DESC);
