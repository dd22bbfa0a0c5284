-- name: CreateSegment :one
-- CreateSegment inserts a segment.
INSERT INTO segments (workspace_id, organization_id, env_id, key, name, type, scopes, description,
    included, excluded, rules, tags)
VALUES (@workspace_id, @organization_id, @env_id, @key, @name, @type, @scopes, @description,
    @included, @excluded, @rules, @tags)
RETURNING *;

-- name: GetSegment :one
-- GetSegment returns one of an organization's segments.
SELECT * FROM segments WHERE organization_id = @organization_id AND id = @id;

-- name: LockSegmentInOrganization :one
-- LockSegmentInOrganization returns a segment of an organization locked
-- until the transaction ends, with the environment it is changed from
-- (GetEnvironment's columns) and whether any flag's rules name it
-- (feature_flags_segment_refs): one round trip for what a change reads
-- first, and a change of a segment no flag uses, the usual one, looks at
-- flags no further.
SELECT sqlc.embed(s), sqlc.embed(e), p.key AS project_key, p.name AS project_name, p.organization_id,
    o.key AS organization_key, o.workspace_id,
    EXISTS (SELECT 1 FROM feature_flags f WHERE f.segment_refs @> ARRAY[s.id]) AS used
FROM segments s
JOIN environments e ON e.id = @env_id
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE s.organization_id = @organization_id AND s.id = @id AND p.organization_id = @organization_id
FOR UPDATE OF s;

-- name: UpdateSegment :one
-- UpdateSegment stores a changed segment.
UPDATE segments SET
    name = @name, type = @type, scopes = @scopes, description = @description, included = @included,
    excluded = @excluded, rules = @rules, tags = @tags, is_archived = @is_archived,
    -- SDKs keep a changed segment only when its updatedAt, in milliseconds, grew.
    updated_at = greatest(clock_timestamp(), date_trunc('milliseconds', updated_at) + interval '1 millisecond')
WHERE id = @id
RETURNING *;

-- name: DeleteSegment :execrows
-- DeleteSegment removes a segment for good.
DELETE FROM segments WHERE id = $1;

-- name: ListSegments :many
-- ListSegments pages the segments visible in an environment, most recently
-- changed first: its own environment-specific ones and the shared ones whose
-- scopes select it (segments_env_updated, segments_shared_scopes).
SELECT * FROM segments
WHERE organization_id = @organization_id
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]))
  AND is_archived = @is_archived
  AND lower(name) LIKE @pattern::text
ORDER BY updated_at DESC, id
LIMIT @page_size OFFSET @page_offset;

-- name: CountSegments :one
-- CountSegments counts what ListSegments pages through.
SELECT count(*) FROM segments
WHERE organization_id = @organization_id
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]))
  AND is_archived = @is_archived
  AND lower(name) LIKE @pattern::text;

-- name: SegmentsByIDs :many
-- SegmentsByIDs returns those of some segments that are visible in an environment.
SELECT * FROM segments
WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[])
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]))
ORDER BY created_at, id;

-- name: SegmentStatesByIDs :many
-- SegmentStatesByIDs is SegmentsByIDs without the segments' contents:
-- which of some segments are visible in an environment and whether each is
-- archived, all a flag change needs to check the segments its rules name.
SELECT id, is_archived FROM segments
WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[])
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]));

-- name: ListSegmentTags :many
-- ListSegmentTags returns every tag used by the segments visible in an environment.
SELECT DISTINCT unnest(tags)::text AS tag FROM segments
WHERE organization_id = @organization_id
  AND ((type = 'environment-specific' AND env_id = @env_id) OR (type = 'shared' AND scopes && @scopes::text[]))
ORDER BY tag;

-- name: SegmentIsReferenced :one
-- SegmentIsReferenced tells whether any flag's rules name a segment (feature_flags_segment_refs).
SELECT EXISTS (SELECT 1 FROM feature_flags WHERE segment_refs @> ARRAY[@segment_id::uuid]);

-- name: LockSegmentKey :exec
-- LockSegmentKey serializes, until the transaction ends, the changes that may
-- give a segment this key, so two of them cannot both find it free.
SELECT pg_advisory_xact_lock(hashtextextended('segment-key:' || lower(@key::text), 0));

-- name: SegmentsWithKey :many
-- SegmentsWithKey returns an organization's segments with a key,
-- case-insensitively, to find one visible where another is (segments_org_key).
SELECT * FROM segments WHERE organization_id = @organization_id AND lower(key) = lower(@key::text) ORDER BY id;
