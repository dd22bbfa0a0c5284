-- flag_evaluations counts what SDKs report evaluating, per flag and
-- variation (a flag belongs to one environment), so the pages can show when
-- a flag was last evaluated and find the stale ones. SDK reports are summed
-- into these rows (one upsert per flag and variation of a report), never kept
-- one row per event. variation_id is text like the flags' own variation ids.
CREATE TABLE flag_evaluations (
    flag_id            uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    variation_id       text NOT NULL,
    count              bigint NOT NULL,
    first_evaluated_at timestamptz NOT NULL,
    last_evaluated_at  timestamptz NOT NULL,
    PRIMARY KEY (flag_id, variation_id)
);
