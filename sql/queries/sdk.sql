-- name: GetSecretByValue :one
-- GetSecretByValue finds the environment an SDK secret opens, with its
-- organization (env_secrets.value is unique).
SELECT s.id, s.type, s.env_id, p.organization_id
FROM env_secrets s
JOIN environments e ON e.id = s.env_id
JOIN projects p ON p.id = e.project_id
WHERE s.value = $1;

-- name: ListEnvFlags :many
-- ListEnvFlags returns every flag of an environment, archived ones too, as
-- SDKs receive them (feature_flags_env_key).
SELECT * FROM feature_flags WHERE env_id = $1 ORDER BY key, id;

-- name: ListEnvSegments :many
-- ListEnvSegments returns every segment visible in an environment, archived
-- ones too: its own environment-specific ones and the shared ones whose
-- scopes select it (segments_env_updated, segments_shared_scopes).
SELECT * FROM segments
WHERE organization_id = @organization_id
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]))
ORDER BY id;

-- name: GetFlagByID :one
-- GetFlagByID returns a flag of an environment by id.
SELECT * FROM feature_flags WHERE env_id = @env_id AND id = @id;
