-- name: UpsertEndUsers :one
-- UpsertEndUsers writes a batch of end users, given as parallel arrays with
-- each (env, key) once and "" for no name, in one statement: a known key gets its name (when
-- given), properties and last seen; a new key is inserted while its
-- environment has fewer than max_per_env end users, and dropped otherwise.
-- The environments' counts and the property names seen are kept with it.
-- It answers how many new keys were dropped. Rows are written in one order so
-- concurrent batches never deadlock; environments deleted meanwhile are skipped.
WITH input AS (
    SELECT t.env_id, t.key_id, nullif(t.name, '') AS name, t.properties, t.first_seen, t.last_seen
    FROM (SELECT unnest(@env_ids::uuid[]) AS env_id, unnest(@key_ids::text[]) AS key_id,
            unnest(@names::text[]) AS name, unnest(@properties::jsonb[]) AS properties,
            unnest(@first_seen::timestamptz[]) AS first_seen, unnest(@last_seen::timestamptz[]) AS last_seen) t
    JOIN environments en ON en.id = t.env_id
),
fresh AS (
    SELECT i.env_id, i.key_id, row_number() OVER (PARTITION BY i.env_id ORDER BY i.first_seen, i.key_id) AS n
    FROM input i
    WHERE NOT EXISTS (SELECT 1 FROM end_users e WHERE e.env_id = i.env_id AND e.key_id = i.key_id)
),
admitted AS (
    SELECT i.* FROM input i
    LEFT JOIN fresh f ON f.env_id = i.env_id AND f.key_id = i.key_id
    LEFT JOIN end_user_counts c ON c.env_id = i.env_id
    WHERE f.n IS NULL OR f.n + coalesce(c.users, 0) <= @max_per_env::bigint
),
written AS (
    INSERT INTO end_users AS e (env_id, key_id, name, properties, created_at, updated_at)
    SELECT a.env_id, a.key_id, a.name, a.properties, a.first_seen, a.last_seen FROM admitted a
    ORDER BY a.env_id, a.key_id
    ON CONFLICT (env_id, key_id) DO UPDATE
    SET name = coalesce(excluded.name, e.name),
        properties = CASE WHEN excluded.updated_at >= e.updated_at THEN excluded.properties ELSE e.properties END,
        updated_at = greatest(e.updated_at, excluded.updated_at)
    RETURNING e.env_id, (xmax = 0) AS inserted
),
counted AS (
    INSERT INTO end_user_counts (env_id, users)
    SELECT w.env_id, count(*) FILTER (WHERE w.inserted) FROM written w GROUP BY w.env_id
    ORDER BY w.env_id
    ON CONFLICT (env_id) DO UPDATE SET users = end_user_counts.users + excluded.users
),
seen AS (
    INSERT INTO end_user_properties (env_id, name)
    SELECT DISTINCT a.env_id, p.value->>'name' FROM admitted a, jsonb_array_elements(a.properties) p
    WHERE (SELECT count(*) FROM end_user_properties x WHERE x.env_id = a.env_id) < @max_properties::bigint
    ORDER BY 1, 2
    ON CONFLICT (env_id, name) DO NOTHING
)
SELECT ((SELECT count(*) FROM input) - (SELECT count(*) FROM admitted))::bigint AS dropped;

-- name: GetEndUser :one
-- GetEndUser returns one end user of an environment by id.
SELECT * FROM end_users WHERE env_id = $1 AND id = $2;

-- name: GetEndUserByKey :one
-- GetEndUserByKey returns one end user of an environment by key.
SELECT * FROM end_users WHERE env_id = $1 AND key_id = $2;

-- name: EndUsersByKeys :many
-- EndUsersByKeys returns the end users of an environment with the given keys.
SELECT * FROM end_users WHERE env_id = @env_id AND key_id = ANY(@key_ids::text[]) ORDER BY key_id;

-- name: EndUsersBefore :many
-- EndUsersBefore pages an environment's end users, most recently seen first,
-- after the cursor (updated_at, id) in that order, through end_users_seen.
-- pattern is a LIKE pattern matching part of the lower-cased key or name
-- ('%' for all; end_users_key_trgm and end_users_name_trgm find the matches
-- of a selective search).
SELECT * FROM end_users
WHERE env_id = @env_id AND (updated_at, id) < (@updated_at::timestamptz, @id::uuid)
  AND (lower(key_id) LIKE @pattern::text OR lower(name) LIKE @pattern::text)
ORDER BY updated_at DESC, id DESC
LIMIT @lim;

-- name: EndUsersAfter :many
-- EndUsersAfter pages backward: the end users just before the cursor in the
-- list's order, nearest first (the caller reverses them).
SELECT * FROM end_users
WHERE env_id = @env_id AND (updated_at, id) > (@updated_at::timestamptz, @id::uuid)
  AND (lower(key_id) LIKE @pattern::text OR lower(name) LIKE @pattern::text)
ORDER BY updated_at, id
LIMIT @lim;

-- name: EndUsersSeenBetween :many
-- EndUsersSeenBetween pages the end users last seen in [from, to], most
-- recently seen first, whose key or name matches the pattern.
SELECT * FROM end_users
WHERE env_id = @env_id AND updated_at >= @seen_from::timestamptz AND updated_at <= @seen_to::timestamptz
  AND (lower(key_id) LIKE @pattern::text OR lower(name) LIKE @pattern::text)
ORDER BY updated_at DESC, id DESC
LIMIT @lim OFFSET @skip;

-- name: CountEndUsersSeenBetween :one
-- CountEndUsersSeenBetween counts what EndUsersSeenBetween pages, up to a cap.
SELECT count(*) FROM (
    SELECT 1 FROM end_users
    WHERE env_id = @env_id AND updated_at >= @seen_from::timestamptz AND updated_at <= @seen_to::timestamptz
      AND (lower(key_id) LIKE @pattern::text OR lower(name) LIKE @pattern::text)
    LIMIT @cap
) c;

-- name: CountEnvEndUsers :one
-- CountEnvEndUsers returns how many end users an environment keeps.
SELECT coalesce((SELECT users FROM end_user_counts WHERE env_id = $1), 0)::bigint;

-- name: ListEndUserProperties :many
-- ListEndUserProperties returns an environment's end-user properties by name.
SELECT * FROM end_user_properties WHERE env_id = $1 ORDER BY name LIMIT 10000;

-- name: EndUserPropertyNames :many
-- EndUserPropertyNames returns the property names an environment has seen.
SELECT name FROM end_user_properties WHERE env_id = $1 ORDER BY name LIMIT @lim;

-- name: GetEndUserProperty :one
-- GetEndUserProperty returns one property of an environment by id.
SELECT * FROM end_user_properties WHERE env_id = $1 AND id = $2;

-- name: UpsertEndUserProperty :one
-- UpsertEndUserProperty creates a property with the given id, or updates the
-- environment's property of that id. A name another property has is a
-- unique violation.
INSERT INTO end_user_properties AS p (id, env_id, name, preset_values, use_preset_values_only, is_digest_field, remark)
VALUES (@id, @env_id, @name, @preset_values, @use_preset_values_only, @is_digest_field, @remark)
ON CONFLICT (id) DO UPDATE
SET name = excluded.name, preset_values = excluded.preset_values,
    use_preset_values_only = excluded.use_preset_values_only, is_digest_field = excluded.is_digest_field,
    remark = excluded.remark, updated_at = now()
WHERE p.env_id = excluded.env_id
RETURNING *;

-- name: DeleteEndUserProperty :execrows
-- DeleteEndUserProperty removes one property of an environment.
DELETE FROM end_user_properties WHERE env_id = $1 AND id = $2;

-- name: AddEndUserPropertyNames :exec
-- AddEndUserPropertyNames adds property names to an environment, keeping
-- those it has and its bound on names.
INSERT INTO end_user_properties (env_id, name)
SELECT @env_id::uuid, n.name FROM unnest(@names::text[]) AS n(name)
WHERE (SELECT count(*) FROM end_user_properties x WHERE x.env_id = @env_id::uuid) < @max_properties::bigint
ORDER BY n.name
ON CONFLICT (env_id, name) DO NOTHING;
