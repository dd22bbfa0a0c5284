-- name: CreateTrigger :one
-- CreateTrigger adds a trigger to a flag; only its token's hash is stored.
INSERT INTO flag_triggers (id, flag_id, type, action, description, token_hash, token_preview, creator_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING *;

-- name: CountFlagTriggers :one
-- CountFlagTriggers counts a flag's triggers, which are bounded per flag.
SELECT count(*) FROM flag_triggers WHERE flag_id = $1;

-- name: ListFlagTriggers :many
-- ListFlagTriggers returns a flag's triggers, newest first (flag_triggers_flag).
SELECT * FROM flag_triggers WHERE flag_id = $1 ORDER BY created_at DESC, id LIMIT $2;

-- name: GetTriggerInOrganization :one
-- GetTriggerInOrganization reads a trigger with the flag it changes and the
-- keys that name that flag, scoped to an organization.
SELECT sqlc.embed(t), f.env_id, f.key AS flag_key, f.tags AS flag_tags, p.key AS project_key, e.key AS env_key
FROM flag_triggers t
JOIN feature_flags f ON f.id = t.flag_id
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND t.id = @id;

-- name: GetTriggerByToken :one
-- GetTriggerByToken finds the trigger whose token hashes to token_hash, with
-- the keys and tags that name its flag and the organization and workspace it
-- belongs to.
SELECT sqlc.embed(t), f.env_id, f.key AS flag_key, f.tags AS flag_tags, p.key AS project_key, e.key AS env_key,
       o.id AS organization_id, o.workspace_id
FROM flag_triggers t
JOIN feature_flags f ON f.id = t.flag_id
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE t.token_hash = @token_hash;

-- name: ResetTriggerToken :one
-- ResetTriggerToken replaces a trigger's token: the old one stops working.
UPDATE flag_triggers SET token_hash = $2, token_preview = $3, updated_at = clock_timestamp()
WHERE id = $1
RETURNING *;

-- name: SetTriggerEnabled :one
-- SetTriggerEnabled turns a trigger on or off.
UPDATE flag_triggers SET is_enabled = $2, updated_at = clock_timestamp()
WHERE id = $1
RETURNING *;

-- name: MarkTriggerRun :one
-- MarkTriggerRun counts one run of a trigger, in the run's transaction. It
-- finds no row when the trigger was disabled, reset or deleted since it was
-- read, and then the run's change is rolled back.
UPDATE flag_triggers SET triggered_times = triggered_times + 1, last_triggered_at = clock_timestamp()
WHERE id = @id AND token_hash = @token_hash AND is_enabled
RETURNING *;

-- name: DeleteTrigger :execrows
-- DeleteTrigger removes a trigger.
DELETE FROM flag_triggers WHERE id = $1;

-- name: GetTriggerTarget :one
-- GetTriggerTarget reads the flag a trigger is for by its id, with the keys
-- that name it, scoped to an organization (FeatBit names a trigger's flag
-- by id, its targetId).
SELECT sqlc.embed(f), p.key AS project_key, e.key AS env_key
FROM feature_flags f
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND f.id = @id;
