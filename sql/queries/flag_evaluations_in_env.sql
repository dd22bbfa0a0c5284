-- name: FlagEvaluationsInEnv :many
-- FlagEvaluationsInEnv returns the evaluation counts per variation of a
-- flag of an environment, known already (a page that just changed it):
-- nothing when the flag is not the environment's.
SELECT ev.flag_id, ev.variation_id, ev.count, ev.first_evaluated_at, ev.last_evaluated_at
FROM flag_evaluations ev
JOIN feature_flags f ON f.id = ev.flag_id
WHERE ev.flag_id = @flag_id AND f.env_id = @env_id
ORDER BY ev.variation_id;
