-- name: ListExperimentMetrics :many
-- ListExperimentMetrics is one page of an environment's live metrics, newest
-- change first (experiment_metrics_env), each with its maintainer's name and
-- email and the count of every match.
SELECT sqlc.embed(m), coalesce(u.name, '')::text AS maintainer_name, coalesce(u.email, '')::text AS maintainer_email,
       count(*) OVER () AS total
FROM experiment_metrics m
LEFT JOIN users u ON u.id = m.maintainer_user_id
WHERE m.env_id = @env_id AND NOT m.is_archived
  AND (@name::text = '' OR m.name ILIKE '%' || @name::text || '%')
  AND (@event_type::smallint = 0 OR m.event_type = @event_type::smallint)
ORDER BY m.updated_at DESC, m.id
LIMIT @lim OFFSET @off;

-- name: CountExperimentMetrics :one
-- CountExperimentMetrics counts what ListExperimentMetrics matches.
SELECT count(*) FROM experiment_metrics m
WHERE m.env_id = @env_id AND NOT m.is_archived
  AND (@name::text = '' OR m.name ILIKE '%' || @name::text || '%')
  AND (@event_type::smallint = 0 OR m.event_type = @event_type::smallint);

-- name: GetExperimentMetric :one
-- GetExperimentMetric is one metric of an environment, with its maintainer.
SELECT sqlc.embed(m), coalesce(u.name, '')::text AS maintainer_name, coalesce(u.email, '')::text AS maintainer_email
FROM experiment_metrics m
LEFT JOIN users u ON u.id = m.maintainer_user_id
WHERE m.env_id = @env_id AND m.id = @id;

-- name: InsertExperimentMetric :one
INSERT INTO experiment_metrics (env_id, name, description, maintainer_user_id, event_name, event_type,
    custom_event_track_option, custom_event_unit, custom_event_success_criteria, element_targets, target_urls)
VALUES (@env_id, @name, @description, @maintainer_user_id, @event_name, @event_type,
    @custom_event_track_option, @custom_event_unit, @custom_event_success_criteria, @element_targets, @target_urls)
RETURNING id;

-- name: UpdateExperimentMetric :execrows
UPDATE experiment_metrics SET name = @name, description = @description, maintainer_user_id = @maintainer_user_id,
    event_name = @event_name, event_type = @event_type, custom_event_track_option = @custom_event_track_option,
    custom_event_unit = @custom_event_unit, custom_event_success_criteria = @custom_event_success_criteria,
    element_targets = @element_targets, target_urls = @target_urls, updated_at = clock_timestamp()
WHERE env_id = @env_id AND id = @id AND NOT is_archived;

-- name: ArchiveExperimentMetric :execrows
UPDATE experiment_metrics SET is_archived = true, updated_at = clock_timestamp()
WHERE env_id = @env_id AND id = @id AND NOT is_archived;

-- name: ExperimentMetricInUse :one
-- ExperimentMetricInUse tells whether a live experiment measures the metric
-- (experiments_metric_live).
SELECT EXISTS (SELECT 1 FROM experiments WHERE metric_id = @metric_id AND NOT is_archived);

-- name: ListExperiments :many
-- ListExperiments is one page of an environment's live experiments, newest
-- first (experiments_env), with their flag and metric and the count of every
-- match.
SELECT sqlc.embed(e), f.key AS flag_key, f.name AS flag_name, f.variations AS flag_variations,
       f.fallthrough AS flag_fallthrough, f.tags AS flag_tags,
       -- Whether exposures can come from more than the default rule (targeted
       -- users, rules in the experiment), whose shares are not known.
       ((f.expt_include_all_targets AND (jsonb_array_length(f.target_users) > 0 OR jsonb_array_length(f.rules) > 0))
        OR (NOT f.expt_include_all_targets AND f.rules @> '[{"includedInExpt": true}]'))::boolean AS flag_mixed_traffic,
       m.name AS metric_name, m.event_name AS metric_event_name, m.event_type AS metric_event_type,
       m.custom_event_track_option AS metric_track_option, m.custom_event_success_criteria AS metric_success_criteria,
       m.custom_event_unit AS metric_unit, count(*) OVER () AS total
FROM experiments e
JOIN feature_flags f ON f.id = e.flag_id
JOIN experiment_metrics m ON m.id = e.metric_id
WHERE e.env_id = @env_id AND NOT e.is_archived
  AND (@flag_name::text = '' OR f.name ILIKE '%' || @flag_name::text || '%')
  AND (sqlc.narg('flag_id')::uuid IS NULL OR e.flag_id = sqlc.narg('flag_id')::uuid)
  AND (@baseline::text = '' OR e.baseline_variation_id = @baseline::text)
ORDER BY e.created_at DESC, e.id
LIMIT @lim OFFSET @off;

-- name: CountExperiments :one
-- CountExperiments counts what ListExperiments matches.
SELECT count(*) FROM experiments e
JOIN feature_flags f ON f.id = e.flag_id
WHERE e.env_id = @env_id AND NOT e.is_archived
  AND (@flag_name::text = '' OR f.name ILIKE '%' || @flag_name::text || '%')
  AND (sqlc.narg('flag_id')::uuid IS NULL OR e.flag_id = sqlc.narg('flag_id')::uuid)
  AND (@baseline::text = '' OR e.baseline_variation_id = @baseline::text);

-- name: GetExperiment :one
-- GetExperiment is one experiment of an environment with its flag and
-- metric, archived or not.
SELECT sqlc.embed(e), f.key AS flag_key, f.name AS flag_name, f.variations AS flag_variations,
       f.fallthrough AS flag_fallthrough, f.tags AS flag_tags,
       -- Whether exposures can come from more than the default rule (targeted
       -- users, rules in the experiment), whose shares are not known.
       ((f.expt_include_all_targets AND (jsonb_array_length(f.target_users) > 0 OR jsonb_array_length(f.rules) > 0))
        OR (NOT f.expt_include_all_targets AND f.rules @> '[{"includedInExpt": true}]'))::boolean AS flag_mixed_traffic,
       m.name AS metric_name, m.event_name AS metric_event_name, m.event_type AS metric_event_type,
       m.custom_event_track_option AS metric_track_option, m.custom_event_success_criteria AS metric_success_criteria,
       m.custom_event_unit AS metric_unit
FROM experiments e
JOIN feature_flags f ON f.id = e.flag_id
JOIN experiment_metrics m ON m.id = e.metric_id
WHERE e.env_id = @env_id AND e.id = @id;

-- name: LockExperiment :one
-- LockExperiment holds an experiment while its status and iterations change,
-- so two starts or a start and a stop run one after the other.
SELECT status FROM experiments WHERE env_id = @env_id AND id = @id AND NOT is_archived FOR UPDATE;

-- name: GetLiveExperiment :one
-- GetLiveExperiment is the live experiment of a flag and metric, if any
-- (experiments_flag_metric_live).
SELECT * FROM experiments WHERE flag_id = @flag_id AND metric_id = @metric_id AND NOT is_archived;

-- name: InsertExperiment :one
-- InsertExperiment adds an experiment unless a live one of the same flag and
-- metric exists (then it answers no row).
INSERT INTO experiments (env_id, flag_id, metric_id, baseline_variation_id, alpha)
VALUES (@env_id, @flag_id, @metric_id, @baseline_variation_id, @alpha)
ON CONFLICT (flag_id, metric_id) WHERE NOT is_archived DO NOTHING
RETURNING *;

-- name: SetExperimentStatus :exec
UPDATE experiments SET status = @status, is_archived = @is_archived, updated_at = clock_timestamp()
WHERE id = @id;

-- name: ExperimentStatusCounts :many
-- ExperimentStatusCounts groups an environment's live experiments by status.
SELECT status, count(*) AS count FROM experiments
WHERE env_id = @env_id AND NOT is_archived
GROUP BY status ORDER BY status;

-- name: GetFlagForExperiment :one
-- GetFlagForExperiment is what an experiment needs of its flag.
SELECT id, key, name, variations, fallthrough, tags, is_archived FROM feature_flags WHERE env_id = @env_id AND id = @id;

-- name: ListExperimentIterations :many
-- ListExperimentIterations is the live iterations of some experiments, oldest
-- first.
SELECT * FROM experiment_iterations
WHERE experiment_id = ANY (@experiment_ids::uuid[]) AND NOT is_archived
ORDER BY experiment_id, start_time, id;

-- name: GetExperimentIteration :one
SELECT i.* FROM experiment_iterations i
WHERE i.experiment_id = @experiment_id AND i.id = @id;

-- name: OpenExperimentIterations :many
-- OpenExperimentIterations is an experiment's iterations still recording.
SELECT * FROM experiment_iterations
WHERE experiment_id = @experiment_id AND end_time IS NULL AND NOT is_archived
ORDER BY start_time;

-- name: InsertExperimentIteration :one
INSERT INTO experiment_iterations (experiment_id, env_id, start_time, event_name, event_type,
    custom_event_track_option, custom_event_unit, custom_event_success_criteria)
VALUES (@experiment_id, @env_id, @start_time, @event_name, @event_type,
    @custom_event_track_option, @custom_event_unit, @custom_event_success_criteria)
RETURNING *;

-- name: FinishExperimentIteration :exec
UPDATE experiment_iterations SET end_time = @end_time, is_finish = true, results = @results, updated_at = @end_time
WHERE id = @id;

-- name: SaveExperimentIterationResults :exec
UPDATE experiment_iterations SET results = @results, updated_at = @updated_at, is_finish = @is_finish
WHERE id = @id;

-- name: ArchiveExperimentIterations :execrows
UPDATE experiment_iterations SET is_archived = true WHERE experiment_id = @experiment_id AND NOT is_archived;

-- name: ExperimentVariationTotals :many
-- ExperimentVariationTotals is an iteration's sums per variation: exposed
-- users, those of them with at least one event, and the sums over them of
-- each user's value and its square. One row per variation.
SELECT variation_id, users, converted, total, total_squares
FROM experiment_variation_totals
WHERE iteration_id = @iteration_id;

-- name: RecordExperimentExposures :execrows
-- RecordExperimentExposures records a batch of exposures in the open
-- iterations of the environment's experiments on each flag: a user keeps the
-- variation first seen. Each newly exposed user is added to the variation's
-- sums, with what they sent before. Rows are written in key order, users
-- before sums, so concurrent batches lock them in the same order.
WITH ev AS (
    SELECT unnest(@flag_keys::text[]) AS flag_key, unnest(@user_keys::text[]) AS user_key,
           unnest(@variation_ids::text[]) AS variation_id, unnest(@ats::timestamptz[]) AS at
), live AS (
    SELECT i.id, i.start_time, f.key AS flag_key
    FROM experiment_iterations i
    JOIN experiments x ON x.id = i.experiment_id
    JOIN feature_flags f ON f.id = x.flag_id
    WHERE i.env_id = @env_id AND i.end_time IS NULL AND NOT i.is_archived AND x.status = 'Recording'
), firsts AS (
    SELECT DISTINCT ON (l.id, e.user_key) l.id AS iteration_id, e.user_key, e.variation_id, e.at
    FROM ev e JOIN live l ON l.flag_key = e.flag_key AND e.at >= l.start_time
    ORDER BY l.id, e.user_key, e.at
), exposed AS (
    INSERT INTO experiment_users AS u (iteration_id, user_key, variation_id, exposed_at)
    SELECT iteration_id, user_key, variation_id, at FROM firsts ORDER BY iteration_id, user_key
    ON CONFLICT (iteration_id, user_key) DO UPDATE SET variation_id = excluded.variation_id, exposed_at = excluded.exposed_at
    WHERE u.variation_id IS NULL
    RETURNING u.iteration_id, u.variation_id, u.events, u.total
)
INSERT INTO experiment_variation_totals AS t (iteration_id, variation_id, users, converted, total, total_squares)
SELECT iteration_id, variation_id, count(*), count(*) FILTER (WHERE events > 0), sum(total), sum(total * total)
FROM exposed GROUP BY iteration_id, variation_id ORDER BY iteration_id, variation_id
ON CONFLICT (iteration_id, variation_id) DO UPDATE SET users = t.users + excluded.users,
    converted = t.converted + excluded.converted, total = t.total + excluded.total,
    total_squares = t.total_squares + excluded.total_squares;

-- name: RecordExperimentEvents :execrows
-- RecordExperimentEvents adds a batch of metric events to the running totals
-- of the users in the open iterations measuring them, exposed yet or not,
-- and those of exposed users to their variation's sums: a user whose total
-- goes from T - s to T adds s to the sum and s(2T - s) to the sum of
-- squares, and converts when these are their first events.
WITH ev AS (
    SELECT unnest(@event_names::text[]) AS event_name, unnest(@event_types::smallint[]) AS event_type,
           unnest(@user_keys::text[]) AS user_key, unnest(@vals::float8[]) AS val, unnest(@ats::timestamptz[]) AS at
), live AS (
    SELECT i.id, i.start_time, i.event_name, i.event_type
    FROM experiment_iterations i
    JOIN experiments x ON x.id = i.experiment_id
    WHERE i.env_id = @env_id AND i.end_time IS NULL AND NOT i.is_archived AND x.status = 'Recording'
), sums AS (
    SELECT l.id AS iteration_id, e.user_key, count(*) AS n, sum(e.val) AS s, sum(e.val * e.val) AS ss
    FROM ev e JOIN live l ON l.event_name = e.event_name AND l.event_type = e.event_type AND e.at >= l.start_time
    GROUP BY l.id, e.user_key
), added AS (
    INSERT INTO experiment_users AS u (iteration_id, user_key, events, total, total_squares)
    SELECT iteration_id, user_key, n, s, ss FROM sums ORDER BY iteration_id, user_key
    ON CONFLICT (iteration_id, user_key) DO UPDATE SET events = u.events + excluded.events,
        total = u.total + excluded.total, total_squares = u.total_squares + excluded.total_squares
    RETURNING u.iteration_id, u.user_key, u.variation_id, u.events, u.total
)
INSERT INTO experiment_variation_totals AS t (iteration_id, variation_id, users, converted, total, total_squares)
SELECT a.iteration_id, a.variation_id, 0, count(*) FILTER (WHERE a.events = s.n), sum(s.s), sum(s.s * (2 * a.total - s.s))
FROM added a JOIN sums s ON s.iteration_id = a.iteration_id AND s.user_key = a.user_key
WHERE a.variation_id IS NOT NULL
GROUP BY a.iteration_id, a.variation_id ORDER BY a.iteration_id, a.variation_id
ON CONFLICT (iteration_id, variation_id) DO UPDATE SET converted = t.converted + excluded.converted,
    total = t.total + excluded.total, total_squares = t.total_squares + excluded.total_squares;

-- name: HasOpenExperimentIterations :one
-- HasOpenExperimentIterations tells whether anything in the environment is
-- recording (experiment_iterations_open), so a batch of events for an
-- environment without experiments costs one index probe.
SELECT EXISTS (SELECT 1 FROM experiment_iterations WHERE env_id = @env_id AND end_time IS NULL AND NOT is_archived);

-- name: ShareExperimentMetric :one
-- ShareExperimentMetric holds a metric while an experiment of it is made,
-- so archiving it (an update) waits, then finds the experiment.
SELECT is_archived FROM experiment_metrics WHERE env_id = @env_id AND id = @id FOR SHARE;

-- name: SnapshotExperimentTotals :exec
-- SnapshotExperimentTotals keeps the sums of the environment's recording
-- iterations as they stand this minute, unless a snapshot of the minute is
-- already kept.
INSERT INTO experiment_snapshots (iteration_id, at, totals)
SELECT i.id, date_trunc('minute', @at::timestamptz),
       jsonb_agg(jsonb_build_object('v', t.variation_id, 'n', t.users, 'c', t.converted, 's', t.total, 'q', t.total_squares))
FROM experiment_iterations i
JOIN experiment_variation_totals t ON t.iteration_id = i.id
WHERE i.env_id = @env_id AND i.end_time IS NULL AND NOT i.is_archived
GROUP BY i.id
ON CONFLICT (iteration_id, at) DO NOTHING;

-- name: ListExperimentSnapshots :many
-- ListExperimentSnapshots is an iteration's latest snapshots, newest first.
SELECT at, totals FROM experiment_snapshots
WHERE iteration_id = @iteration_id
ORDER BY at DESC
LIMIT @lim;
