-- name: RecordEvaluations :exec
-- RecordEvaluations adds SDK-reported evaluation counts, given as parallel
-- arrays of flag keys, variation ids and counts (each pair once), to an
-- environment's flags. Unknown flags and variations are skipped; rows are
-- written in one order so concurrent reports never deadlock.
INSERT INTO flag_evaluations (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at)
SELECT f.id, u.variation_id, u.count, @at::timestamptz, @at::timestamptz
FROM (SELECT unnest(@keys::text[]) AS key, unnest(@variation_ids::text[]) AS variation_id,
        unnest(@counts::bigint[]) AS count) u
JOIN feature_flags f ON f.env_id = @env_id AND lower(f.key) = lower(u.key) AND f.key = u.key
WHERE f.variations @> jsonb_build_array(jsonb_build_object('id', u.variation_id))
ORDER BY f.id, u.variation_id
ON CONFLICT (flag_id, variation_id) DO UPDATE
SET count = flag_evaluations.count + excluded.count,
    last_evaluated_at = greatest(flag_evaluations.last_evaluated_at, excluded.last_evaluated_at);

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
