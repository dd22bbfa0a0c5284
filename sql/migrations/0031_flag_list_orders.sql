-- The flag list's orders by name and by last change read an environment's
-- flags in that order (FlagListSorted, planned with its order in hand), as
-- newest first and by key read feature_flags_env_created and
-- feature_flags_env_key; the other way round is the same index backwards.
CREATE INDEX feature_flags_env_name ON feature_flags (env_id, is_archived, lower(name), id);
CREATE INDEX feature_flags_env_updated ON feature_flags (env_id, is_archived, updated_at, id);
