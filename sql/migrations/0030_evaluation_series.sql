-- flag_evaluation_series keeps how often SDKs were served each variation of
-- a flag over time, at three resolutions: 'minute' rows are written as
-- evaluations are counted (OFREP answers and insight events), 'hour' rows
-- are summed from minutes and 'day' rows from hours by sql/runner, which
-- also prunes each resolution past its retention. Buckets are UTC starts.
-- A minute's rows are pruned only whole hours at a time and an hour's only
-- whole days at a time, once rolled up, so a reader takes each hour from its
-- minutes when any are kept and each day from its hours (sdkdata.series).
CREATE TABLE flag_evaluation_series (
    flag_id      uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    resolution   text NOT NULL CHECK (resolution IN ('minute', 'hour', 'day')),
    bucket       timestamptz NOT NULL,
    variation_id text NOT NULL,
    count        bigint NOT NULL,
    PRIMARY KEY (flag_id, resolution, bucket, variation_id)
);
-- Roll-ups and pruning read one resolution's buckets across every flag.
CREATE INDEX flag_evaluation_series_bucket ON flag_evaluation_series (resolution, bucket);

-- flag_evaluation_rollups says up to when each coarser resolution has been
-- summed from the finer one ('hour' from minutes, 'day' from hours), so a
-- roll-up reads only what is new and pruning never drops rows not yet
-- rolled up.
CREATE TABLE flag_evaluation_rollups (
    resolution text PRIMARY KEY CHECK (resolution IN ('hour', 'day')),
    done_until timestamptz NOT NULL
);
