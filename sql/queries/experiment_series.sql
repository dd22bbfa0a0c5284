-- name: ExperimentExposureSteps :many
-- ExperimentExposureSteps adds up an iteration's exposed users per
-- variation and per step of their first exposure (steps of step_seconds
-- from origin), as ExperimentVariationTotals does for them all: added up
-- step after step, they give the results as they grew. One pass over the
-- iteration's users (experiment_users_variation).
SELECT variation_id::text AS variation_id,
       date_bin(make_interval(secs => @step_seconds::float8), exposed_at, @origin::timestamptz)::timestamptz AS step_start,
       count(*) AS users,
       count(*) FILTER (WHERE events > 0) AS converted,
       coalesce(sum(total), 0)::float8 AS total,
       coalesce(sum(total * total), 0)::float8 AS total_squares
FROM experiment_users
WHERE iteration_id = @iteration_id AND variation_id IS NOT NULL
GROUP BY 1, 2
ORDER BY 2, 1;
