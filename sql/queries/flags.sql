-- name: CreateFlag :one
-- CreateFlag inserts a feature flag.
INSERT INTO feature_flags (env_id, key, name, description, variation_type, variations, target_users, rules,
    is_enabled, disabled_variation_id, fallthrough, expt_include_all_targets, tags, segment_refs,
    revision, creator_id, updator_id)
VALUES (@env_id, @key, @name, @description, @variation_type, @variations, @target_users, @rules,
    @is_enabled, @disabled_variation_id, @fallthrough, @expt_include_all_targets, @tags, @segment_refs,
    @revision, @creator_id, @creator_id)
RETURNING *;

-- name: GetFlag :one
-- GetFlag returns a flag by its exact key (feature_flags_key_unique narrows, the key test is exact).
SELECT * FROM feature_flags WHERE env_id = @env_id AND lower(key) = lower(@key::text) AND key = @key::text;

-- name: LockFlag :one
-- LockFlag returns a flag by its exact key and locks it until the transaction
-- ends, so concurrent changes to one flag happen one after another.
SELECT * FROM feature_flags WHERE env_id = @env_id AND lower(key) = lower(@key::text) AND key = @key::text
FOR UPDATE;

-- name: UpdateFlag :one
-- UpdateFlag stores a changed flag under a new revision, only if the revision
-- is still the one the change was made from.
UPDATE feature_flags SET
    name = @name, description = @description, variation_type = @variation_type, variations = @variations,
    target_users = @target_users, rules = @rules, is_enabled = @is_enabled,
    disabled_variation_id = @disabled_variation_id, fallthrough = @fallthrough,
    expt_include_all_targets = @expt_include_all_targets, tags = @tags, is_archived = @is_archived,
    segment_refs = @segment_refs, revision = @new_revision, updator_id = @updator_id,
    -- SDKs keep a changed flag only when its updatedAt, in milliseconds, grew.
    updated_at = greatest(clock_timestamp(), date_trunc('milliseconds', updated_at) + interval '1 millisecond')
WHERE id = @id AND revision = @revision
RETURNING *;

-- name: DeleteFlag :execrows
-- DeleteFlag removes an archived flag for good.
DELETE FROM feature_flags WHERE id = $1 AND is_archived;

-- name: ListFlagsByCreated :many
-- ListFlagsByCreated pages an environment's flags newest first (feature_flags_env_created).
SELECT * FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled))
ORDER BY created_at DESC, id
LIMIT @page_size OFFSET @page_offset;

-- name: ListFlagsByKey :many
-- ListFlagsByKey pages an environment's flags by key (feature_flags_env_key).
SELECT * FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled))
ORDER BY key, id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchFlagsByCreated :many
-- SearchFlagsByCreated pages the flags whose name or key contains a text, newest
-- first; pattern is an escaped, lower-cased LIKE pattern (feature_flags_search).
SELECT * FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (lower(name) || ' ' || lower(key)) LIKE @pattern::text
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled))
ORDER BY created_at DESC, id
LIMIT @page_size OFFSET @page_offset;

-- name: SearchFlagsByKey :many
-- SearchFlagsByKey is SearchFlagsByCreated ordered by key.
SELECT * FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (lower(name) || ' ' || lower(key)) LIKE @pattern::text
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled))
ORDER BY key, id
LIMIT @page_size OFFSET @page_offset;

-- name: CountFlags :one
-- CountFlags counts what the list queries page through.
SELECT count(*) FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled));

-- name: CountFlagSearch :one
-- CountFlagSearch counts what the search queries page through (feature_flags_search).
SELECT count(*) FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
  AND (lower(name) || ' ' || lower(key)) LIKE @pattern::text
  AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
  AND (sqlc.narg(is_enabled)::boolean IS NULL OR is_enabled = sqlc.narg(is_enabled));

-- name: ListFlagTags :many
-- ListFlagTags returns every tag used by an environment's flags, sorted.
SELECT DISTINCT unnest(tags)::text AS tag FROM feature_flags WHERE env_id = $1 ORDER BY tag;

-- name: FlagKeyUsed :one
-- FlagKeyUsed tells whether a key is taken in an environment, case-insensitively.
SELECT EXISTS (SELECT 1 FROM feature_flags WHERE env_id = @env_id AND lower(key) = lower(@key::text));

-- name: InsertFlagRevision :exec
-- InsertFlagRevision keeps a version of a flag with the change's comment.
INSERT INTO flag_revisions (flag_id, revision, snapshot, comment, creator_id, creator_kind)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: ListFlagRevisions :many
-- ListFlagRevisions pages a flag's versions, newest first (flag_revisions_flag_created).
SELECT * FROM flag_revisions WHERE flag_id = @flag_id
ORDER BY created_at DESC, id
LIMIT @page_size OFFSET @page_offset;

-- name: CountFlagRevisions :one
-- CountFlagRevisions counts a flag's versions.
SELECT count(*) FROM flag_revisions WHERE flag_id = $1;

-- name: LastFlagRevisions :many
-- LastFlagRevisions returns the newest version of each of some flags, for list pages.
SELECT DISTINCT ON (flag_id) * FROM flag_revisions
WHERE flag_id = ANY(@flag_ids::uuid[])
ORDER BY flag_id, created_at DESC;

-- name: LockFlagsReferencingSegment :many
-- LockFlagsReferencingSegment returns, locked, the flags whose rules name a
-- segment (feature_flags_segment_refs).
SELECT * FROM feature_flags WHERE segment_refs @> ARRAY[@segment_id::uuid] ORDER BY id FOR UPDATE;

-- name: ListFlagsReferencingSegment :many
-- ListFlagsReferencingSegment returns the flags whose rules name a segment, with their environment.
SELECT f.id, f.key, f.name, f.env_id, f.is_archived, e.key AS env_key, e.name AS env_name, p.key AS project_key
FROM feature_flags f
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
WHERE f.segment_refs @> ARRAY[@segment_id::uuid]
ORDER BY p.key, e.key, f.key;

-- name: GetFlagInOrganization :one
-- GetFlagInOrganization reads a flag by its exact key together with the keys
-- that name it, scoped to an organization: one round trip for the most common read.
SELECT sqlc.embed(f), p.key AS project_key, e.key AS env_key
FROM feature_flags f
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND f.env_id = @env_id
  AND lower(f.key) = lower(@key::text) AND f.key = @key::text;

-- name: ActorsByIDs :many
-- ActorsByIDs names the users, access tokens and flag triggers among some ids
-- (who created or last changed the flags of a list page), by primary key.
SELECT id, name, email FROM users WHERE id = ANY(@ids::uuid[])
UNION ALL
SELECT id, name, 'Access token'::text AS email FROM access_tokens WHERE id = ANY(@ids::uuid[])
UNION ALL
SELECT id, (CASE WHEN description = '' THEN 'Trigger ' || token_preview || '…' ELSE 'Trigger “' || description || '”' END)::text AS name,
    'Trigger'::text AS email
FROM flag_triggers WHERE id = ANY(@ids::uuid[]);

-- name: FlagsByIDs :many
-- FlagsByIDs returns those of some flags that belong to an environment, by
-- key, for copying them to another environment.
SELECT * FROM feature_flags WHERE env_id = @env_id AND id = ANY(@ids::uuid[]) ORDER BY key;

-- name: LiveFlagsByKeys :many
-- LiveFlagsByKeys returns the flags of some environments that have one of
-- some keys exactly and are not archived: the other side of a comparison.
SELECT * FROM feature_flags
WHERE env_id = ANY(@env_ids::uuid[]) AND key = ANY(@keys::text[]) AND NOT is_archived
ORDER BY env_id, key;

-- name: FlagKeysUsed :many
-- FlagKeysUsed returns which of some keys are taken in an environment,
-- case-insensitively (as feature_flags_key_unique compares them), as stored there.
SELECT key FROM feature_flags WHERE env_id = @env_id AND lower(key) = ANY(@keys::text[]) ORDER BY key;
