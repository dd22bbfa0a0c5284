-- name: RecordSDKSeen :exec
-- RecordSDKSeen notes an environment's first SDK request; later ones keep
-- the first time.
INSERT INTO env_sdk_activity (env_id, first_seen_at) VALUES (@env_id, @at::timestamptz)
ON CONFLICT (env_id) DO NOTHING;

-- name: SDKFirstSeen :one
-- SDKFirstSeen tells whether and when an environment first saw an SDK: its
-- recorded first request, else its earliest recorded evaluation (reported
-- before requests were recorded). first_seen_at means something only when
-- seen is true.
SELECT (t.at IS NOT NULL)::boolean AS seen, coalesce(t.at, now())::timestamptz AS first_seen_at
FROM (SELECT coalesce(
    (SELECT a.first_seen_at FROM env_sdk_activity a WHERE a.env_id = @env_id),
    (SELECT min(e.first_evaluated_at) FROM flag_evaluations e
     JOIN feature_flags f ON f.id = e.flag_id WHERE f.env_id = @env_id)
) AS at) t;
