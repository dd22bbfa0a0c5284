-- name: RecordEvaluations :exec
-- RecordEvaluations adds SDK-reported evaluation counts, given as parallel
-- arrays of flag keys, variation ids and counts (each pair once), to an
-- environment's flags: to their running totals and to the minute of at in
-- their time series. Unknown flags and variations are skipped; rows are
-- written in one order so concurrent reports never deadlock.
WITH counted AS (
    SELECT f.id AS flag_id, u.variation_id, u.count
    FROM (SELECT unnest(@keys::text[]) AS key, unnest(@variation_ids::text[]) AS variation_id,
            unnest(@counts::bigint[]) AS count) u
    JOIN feature_flags f ON f.env_id = @env_id AND lower(f.key) = lower(u.key) AND f.key = u.key
    WHERE f.variations @> jsonb_build_array(jsonb_build_object('id', u.variation_id))
),
totals AS (
    INSERT INTO flag_evaluations (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at)
    SELECT c.flag_id, c.variation_id, c.count, @at::timestamptz, @at::timestamptz FROM counted c
    ORDER BY c.flag_id, c.variation_id
    ON CONFLICT (flag_id, variation_id) DO UPDATE
    SET count = flag_evaluations.count + excluded.count,
        last_evaluated_at = greatest(flag_evaluations.last_evaluated_at, excluded.last_evaluated_at)
)
INSERT INTO flag_evaluation_series (flag_id, resolution, bucket, variation_id, count)
SELECT c.flag_id, 'minute', date_trunc('minute', @at::timestamptz, 'UTC'), c.variation_id, c.count FROM counted c
ORDER BY c.flag_id, c.variation_id
ON CONFLICT (flag_id, resolution, bucket, variation_id) DO UPDATE
SET count = flag_evaluation_series.count + excluded.count;

-- name: WriteEvaluationTallies :exec
-- WriteEvaluationTallies adds a batch of counted evaluations, given as
-- parallel arrays with each (flag, variation, minute) once, to the flags'
-- running totals and minute series in one statement. Flags deleted since
-- they were evaluated are skipped; rows are written in one order so
-- concurrent batches (of two instances) never deadlock.
WITH input AS (
    SELECT t.* FROM (SELECT unnest(@flag_ids::uuid[]) AS flag_id, unnest(@variation_ids::text[]) AS variation_id,
            unnest(@minutes::timestamptz[]) AS minute, unnest(@counts::bigint[]) AS count,
            unnest(@firsts::timestamptz[]) AS first, unnest(@lasts::timestamptz[]) AS last) t
    JOIN feature_flags f ON f.id = t.flag_id
),
totals AS (
    INSERT INTO flag_evaluations AS e (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at)
    SELECT i.flag_id, i.variation_id, sum(i.count)::bigint, min(i.first), max(i.last) FROM input i
    GROUP BY i.flag_id, i.variation_id
    ORDER BY i.flag_id, i.variation_id
    ON CONFLICT (flag_id, variation_id) DO UPDATE
    SET count = e.count + excluded.count,
        first_evaluated_at = least(e.first_evaluated_at, excluded.first_evaluated_at),
        last_evaluated_at = greatest(e.last_evaluated_at, excluded.last_evaluated_at)
)
INSERT INTO flag_evaluation_series AS s (flag_id, resolution, bucket, variation_id, count)
SELECT i.flag_id, 'minute', i.minute, i.variation_id, i.count FROM input i
ORDER BY i.flag_id, i.minute, i.variation_id
ON CONFLICT (flag_id, resolution, bucket, variation_id) DO UPDATE
SET count = s.count + excluded.count;

-- name: EvaluationSeries :many
-- EvaluationSeries reads the series of some flags of an environment in
-- [from_at, to_at) at every resolution kept, each row's bucket truncated to
-- unit ('minute' or 'hour', UTC) and summed, so a day's worth of minutes comes back as at most
-- 24 rows a variation when read by hour. The caller picks, per hour and per
-- day, the finest resolution present.
SELECT s.flag_id, s.resolution, date_trunc(@unit::text, s.bucket, 'UTC')::timestamptz AS bucket, s.variation_id,
    sum(s.count)::bigint AS count
FROM flag_evaluation_series s
WHERE s.flag_id = ANY(ARRAY(SELECT f.id FROM feature_flags f WHERE f.env_id = @env_id AND f.id = ANY(@flag_ids::uuid[])))
    AND s.resolution = ANY('{minute,hour,day}'::text[])
    AND s.bucket >= @from_at::timestamptz AND s.bucket < @to_at::timestamptz
GROUP BY s.flag_id, s.resolution, 3, s.variation_id
ORDER BY s.flag_id, 3, s.variation_id;

-- name: RollupMark :one
-- RollupMark is up to when a resolution has been summed from the finer one;
-- the zero time when never.
SELECT coalesce((SELECT done_until FROM flag_evaluation_rollups WHERE resolution = @resolution::text),
    '0001-01-01T00:00:00Z'::timestamptz)::timestamptz AS done_until;

-- name: SetRollupMark :exec
-- SetRollupMark moves a resolution's mark forward, never back (another
-- instance may have rolled further).
INSERT INTO flag_evaluation_rollups (resolution, done_until) VALUES (@resolution::text, @done_until::timestamptz)
ON CONFLICT (resolution) DO UPDATE
SET done_until = greatest(flag_evaluation_rollups.done_until, excluded.done_until);

-- name: RollUpHours :execrows
-- RollUpHours sets the hour rows of [from_at, to_at) to the sums of their
-- minutes. It sets rather than adds, so running it again, or on two
-- instances, gives the same rows.
INSERT INTO flag_evaluation_series AS s (flag_id, resolution, bucket, variation_id, count)
SELECT m.flag_id, 'hour', date_trunc('hour', m.bucket, 'UTC'), m.variation_id, sum(m.count)::bigint
FROM flag_evaluation_series m
WHERE m.resolution = 'minute' AND m.bucket >= @from_at::timestamptz AND m.bucket < @to_at::timestamptz
GROUP BY m.flag_id, date_trunc('hour', m.bucket, 'UTC'), m.variation_id
ORDER BY 1, 3, 4
ON CONFLICT (flag_id, resolution, bucket, variation_id) DO UPDATE SET count = excluded.count;

-- name: RollUpDays :execrows
-- RollUpDays sets the day rows of [from_at, to_at) to the sums of their
-- hours, as RollUpHours does for hours.
INSERT INTO flag_evaluation_series AS s (flag_id, resolution, bucket, variation_id, count)
SELECT h.flag_id, 'day', date_trunc('day', h.bucket, 'UTC'), h.variation_id, sum(h.count)::bigint
FROM flag_evaluation_series h
WHERE h.resolution = 'hour' AND h.bucket >= @from_at::timestamptz AND h.bucket < @to_at::timestamptz
GROUP BY h.flag_id, date_trunc('day', h.bucket, 'UTC'), h.variation_id
ORDER BY 1, 3, 4
ON CONFLICT (flag_id, resolution, bucket, variation_id) DO UPDATE SET count = excluded.count;

-- name: PruneEvaluationSeries :execrows
-- PruneEvaluationSeries deletes up to row_limit rows of a resolution older
-- than before; the runner repeats it until fewer are deleted, so no one
-- statement holds many locks.
DELETE FROM flag_evaluation_series
WHERE ctid IN (SELECT p.ctid FROM flag_evaluation_series p
    WHERE p.resolution = @resolution::text AND p.bucket < @before::timestamptz LIMIT @row_limit::int);

-- name: TryRollupLock :one
-- TryRollupLock takes the roll-up's advisory lock for the transaction, when
-- no other instance holds it.
SELECT pg_try_advisory_xact_lock(7146350123)::boolean AS locked;

-- name: FlagEvaluations :many
-- FlagEvaluations returns a flag's evaluation counts per variation.
SELECT * FROM flag_evaluations WHERE flag_id = $1 ORDER BY variation_id;

-- name: ListStaleFlags :many
-- ListStaleFlags pages an environment's flags that are not archived, those
-- never evaluated first, then those evaluated longest ago. It reads every
-- flag of the environment to sort them, as a report may. last_evaluated_at
-- means something only when evaluated is true.
SELECT f.id, f.key, f.name, f.is_enabled, f.created_at, (ev.flag_id IS NOT NULL)::boolean AS evaluated,
    coalesce(ev.last_evaluated_at, f.created_at)::timestamptz AS last_evaluated_at, coalesce(ev.count, 0)::bigint AS count
FROM feature_flags f
LEFT JOIN (
    SELECT e.flag_id, max(e.last_evaluated_at)::timestamptz AS last_evaluated_at, sum(e.count)::bigint AS count
    FROM flag_evaluations e
    JOIN feature_flags g ON g.id = e.flag_id AND g.env_id = @env_id
    GROUP BY e.flag_id
) ev ON ev.flag_id = f.id
WHERE f.env_id = @env_id AND NOT f.is_archived
ORDER BY ev.last_evaluated_at NULLS FIRST, f.key, f.id
LIMIT @page_size OFFSET @page_offset;
