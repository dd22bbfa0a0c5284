-- env_sdk_activity records when an environment first saw an SDK: any
-- request authenticated by one of its secrets (data-sync over streaming or
-- polling, insight events, OFREP). The first-run guide's live check reads
-- it; one row per environment, written once per environment and process.
CREATE TABLE env_sdk_activity (
    env_id        uuid PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    first_seen_at timestamptz NOT NULL
);
