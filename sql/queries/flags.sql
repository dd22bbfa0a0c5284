-- name: CreateFlag :one
-- CreateFlag inserts a feature flag; archived where it waits for the change
-- request that brings it in (insertFlag).
INSERT INTO feature_flags (env_id, key, name, description, variation_type, variations, target_users, rules,
    is_enabled, disabled_variation_id, fallthrough, expt_include_all_targets, tags, segment_refs,
    revision, creator_id, updator_id, is_archived)
VALUES (@env_id, @key, @name, @description, @variation_type, @variations, @target_users, @rules,
    @is_enabled, @disabled_variation_id, @fallthrough, @expt_include_all_targets, @tags, @segment_refs,
    @revision, @creator_id, @creator_id, @is_archived)
RETURNING *;

-- name: GetFlag :one
-- GetFlag returns a flag by its exact key (feature_flags_key_unique narrows, the key test is exact).
SELECT * FROM feature_flags WHERE env_id = @env_id AND lower(key) = lower(@key::text) AND key = @key::text;

-- name: ListFlagsByKeys :many
-- ListFlagsByKeys returns the flags of an environment whose keys are among
-- keys, exactly (feature_flags_key_unique narrows, the key test is exact).
SELECT * FROM feature_flags
WHERE env_id = @env_id AND lower(key) = ANY (SELECT lower(k) FROM unnest(@keys::text[]) AS k)
  AND key = ANY (@keys::text[]);

-- name: LockFlag :one
-- LockFlag returns a flag by its exact key and locks it until the transaction
-- ends, so concurrent changes to one flag happen one after another.
SELECT * FROM feature_flags WHERE env_id = @env_id AND lower(key) = lower(@key::text) AND key = @key::text
FOR UPDATE;

-- name: LockFlagInOrganization :one
-- LockFlagInOrganization is LockFlag with the environment a change is
-- checked against (GetEnvironment's columns), scoped to an organization:
-- one round trip for what a change reads first.
SELECT sqlc.embed(f), sqlc.embed(e), p.key AS project_key, p.name AS project_name, p.organization_id,
    o.key AS organization_key, o.workspace_id
FROM feature_flags f
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE p.organization_id = @organization_id AND f.env_id = @env_id
  AND lower(f.key) = lower(@key::text) AND f.key = @key::text
FOR UPDATE OF f;

-- name: RecordFlagChange :one
-- RecordFlagChange records a change of a flag in one statement of the
-- change's transaction: the new version (when there is one, current) with
-- the change's comment, the audit entry, and the change event (store.Event
-- as JSON, as RecordChange writes it). Like InsertAuditLog, it tells whether
-- an active webhook subscribes to any of the change's webhook events.
WITH revision AS (
    INSERT INTO flag_revisions (flag_id, revision, snapshot, comment, creator_id, creator_kind)
    SELECT @flag_id, @revision, sqlc.narg(current)::jsonb, @comment, @creator_id, @creator_kind
    WHERE sqlc.narg(current)::jsonb IS NOT NULL
), audit AS (
    INSERT INTO audit_logs (workspace_id, organization_id, env_id, ref_type, ref_id, keyword,
                            operation, previous, current, comment, creator_id, creator_kind)
    VALUES (@workspace_id, sqlc.narg(organization_id), @env_id, 'FeatureFlag', @flag_id::text, @keyword,
            @operation, sqlc.narg(previous)::jsonb, sqlc.narg(current)::jsonb, @comment, @creator_id, @creator_kind)
)
INSERT INTO change_outbox (event) VALUES (CAST(@event::text AS json))
RETURNING EXISTS (SELECT 1 FROM webhooks w WHERE w.organization_id = sqlc.narg(organization_id) AND w.is_active
    AND w.events && @webhook_events::text[]) AS webhooks_subscribed;

-- name: UpdateFlag :one
-- UpdateFlag stores a changed flag under a new revision, only if the revision
-- is still the one the change was made from, and answers its new updated_at:
-- the rest of the row is what the caller wrote.
UPDATE feature_flags SET
    name = @name, description = @description, variation_type = @variation_type, variations = @variations,
    target_users = @target_users, rules = @rules, is_enabled = @is_enabled,
    disabled_variation_id = @disabled_variation_id, fallthrough = @fallthrough,
    expt_include_all_targets = @expt_include_all_targets, tags = @tags, is_archived = @is_archived,
    segment_refs = @segment_refs, revision = @new_revision, updator_id = @updator_id,
    -- SDKs keep a changed flag only when its updatedAt, in milliseconds, grew.
    updated_at = greatest(clock_timestamp(), date_trunc('milliseconds', updated_at) + interval '1 millisecond')
WHERE id = @id AND revision = @revision
RETURNING updated_at;

-- name: DeleteFlag :execrows
-- DeleteFlag removes an archived flag for good.
DELETE FROM feature_flags WHERE id = $1 AND is_archived;

-- name: FlagListByCreated :one
-- FlagListByCreated is the first of the two statements of a flag list: the
-- keys naming the environment (for the permission check, scoped to an
-- organization), the count of the flags the list pages through, stopped at
-- count_limit so a million flags cost no more than ten thousand, and the
-- ids of the page, newest first (feature_flags_env_created). FlagListItems
-- is the second.
SELECT p.key AS project_key, e.key AS env_key,
    (SELECT count(*) FROM (
        SELECT 1 FROM feature_flags f
        WHERE f.env_id = e.id AND f.is_archived = @is_archived
          AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
          AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        LIMIT @count_limit
    ) matched)::bigint AS total,
    ARRAY(
        SELECT f.id FROM feature_flags f
        WHERE f.env_id = e.id AND f.is_archived = @is_archived
          AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
          AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        ORDER BY f.created_at DESC, f.id
        LIMIT @page_size OFFSET @page_offset
    )::uuid[] AS ids
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND e.id = @env_id;

-- name: FlagListByKey :one
-- FlagListByKey is FlagListByCreated ordered by key (feature_flags_env_key).
SELECT p.key AS project_key, e.key AS env_key,
    (SELECT count(*) FROM (
        SELECT 1 FROM feature_flags f
        WHERE f.env_id = e.id AND f.is_archived = @is_archived
          AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
          AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        LIMIT @count_limit
    ) matched)::bigint AS total,
    ARRAY(
        SELECT f.id FROM feature_flags f
        WHERE f.env_id = e.id AND f.is_archived = @is_archived
          AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
          AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        ORDER BY f.key, f.id
        LIMIT @page_size OFFSET @page_offset
    )::uuid[] AS ids
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND e.id = @env_id;

-- name: FlagListSorted :one
-- FlagListSorted is FlagListByCreated in any of the list's orders (sort_by,
-- checked by the store against its list of sort keys, and descending): by
-- name, key, creation, last change or last evaluation. Only newest first
-- and by key have an index in their order (FlagListByCreated, FlagListByKey,
-- which the store takes for them); these read the environment's matches on
-- feature_flags_env_created's leading columns and keep the page's top rows
-- while sorting (a top-N sort), the last evaluation read per flag from
-- flag_evaluations' primary key only for that order. Flags never evaluated
-- come first oldest first and last newest first; ties go by id.
SELECT p.key AS project_key, e.key AS env_key,
    (SELECT count(*) FROM (
        SELECT 1 FROM feature_flags f
        WHERE f.env_id = e.id AND f.is_archived = @is_archived
          AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
          AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        LIMIT @count_limit
    ) matched)::bigint AS total,
    ARRAY(
        SELECT m.id FROM (
            SELECT f.id,
                CASE @sort_by::text WHEN 'name' THEN lower(f.name) WHEN 'key' THEN f.key END AS sort_text,
                CASE @sort_by::text WHEN 'createdAt' THEN f.created_at WHEN 'updatedAt' THEN f.updated_at END AS sort_time,
                CASE WHEN @sort_by::text = 'lastEvaluatedAt' THEN (SELECT max(v.last_evaluated_at) FROM flag_evaluations v WHERE v.flag_id = f.id) END AS sort_evaluated
            FROM feature_flags f
            WHERE f.env_id = e.id AND f.is_archived = @is_archived
              AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
              AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
        ) m
        ORDER BY CASE WHEN NOT @descending::boolean THEN m.sort_text END, CASE WHEN @descending::boolean THEN m.sort_text END DESC,
            CASE WHEN NOT @descending::boolean THEN m.sort_time END, CASE WHEN @descending::boolean THEN m.sort_time END DESC,
            CASE WHEN NOT @descending::boolean THEN m.sort_evaluated END NULLS FIRST, CASE WHEN @descending::boolean THEN m.sort_evaluated END DESC NULLS LAST, m.id
        LIMIT @page_size OFFSET @page_offset
    )::uuid[] AS ids
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = @organization_id AND e.id = @env_id;

-- name: FlagSearch :many
-- FlagSearch finds the flags of an environment whose name or key contains a
-- text, at most count_limit of them (so a million flags cost no more than
-- ten thousand), in the list's order (sort_by and descending, as
-- FlagListSorted).
-- pattern is an escaped, lower-cased LIKE pattern (feature_flags_search).
-- It is planned with its pattern each time (searchPlans), so it is one scan
-- and a sort, cheap to plan: a join to the environment, or gathering the ids
-- into an array, would cost PostgreSQL more to plan than a round trip, so
-- FlagListItems names the environment, and the caller pages what it finds
-- and, when it finds count_limit, asks FlagSearchPage for the page.
SELECT m.id FROM (
    SELECT f.id,
        CASE @sort_by::text WHEN 'name' THEN lower(f.name) WHEN 'key' THEN f.key END AS sort_text,
        CASE @sort_by::text WHEN 'createdAt' THEN f.created_at WHEN 'updatedAt' THEN f.updated_at END AS sort_time,
        CASE WHEN @sort_by::text = 'lastEvaluatedAt' THEN (SELECT max(v.last_evaluated_at) FROM flag_evaluations v WHERE v.flag_id = f.id) END AS sort_evaluated
    FROM feature_flags f
    WHERE f.env_id = @env_id AND f.is_archived = @is_archived
      AND (lower(f.name) || ' ' || lower(f.key)) LIKE @pattern::text
      AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
      AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
    LIMIT @count_limit
) m
ORDER BY CASE WHEN NOT @descending::boolean THEN m.sort_text END, CASE WHEN @descending::boolean THEN m.sort_text END DESC,
    CASE WHEN NOT @descending::boolean THEN m.sort_time END, CASE WHEN @descending::boolean THEN m.sort_time END DESC,
    CASE WHEN NOT @descending::boolean THEN m.sort_evaluated END NULLS FIRST, CASE WHEN @descending::boolean THEN m.sort_evaluated END DESC NULLS LAST, m.id;

-- name: FlagSearchPage :many
-- FlagSearchPage is the page of a search that matches more flags than a
-- list counts (FlagSearch found count_limit): the ids of the page among all
-- the matches, in the list's order (as FlagListSorted), on the trigram
-- index or the environment's (feature_flags_env_created), as the pattern
-- makes cheaper, sorted keeping the page's top rows.
SELECT m.id FROM (
    SELECT f.id,
        CASE @sort_by::text WHEN 'name' THEN lower(f.name) WHEN 'key' THEN f.key END AS sort_text,
        CASE @sort_by::text WHEN 'createdAt' THEN f.created_at WHEN 'updatedAt' THEN f.updated_at END AS sort_time,
        CASE WHEN @sort_by::text = 'lastEvaluatedAt' THEN (SELECT max(v.last_evaluated_at) FROM flag_evaluations v WHERE v.flag_id = f.id) END AS sort_evaluated
    FROM feature_flags f
    WHERE f.env_id = @env_id AND f.is_archived = @is_archived
      AND (lower(f.name) || ' ' || lower(f.key)) LIKE @pattern::text
      AND (cardinality(@tags::text[]) = 0 OR f.tags @> @tags::text[])
      AND (sqlc.narg(is_enabled)::boolean IS NULL OR f.is_enabled = sqlc.narg(is_enabled))
) m
ORDER BY CASE WHEN NOT @descending::boolean THEN m.sort_text END, CASE WHEN @descending::boolean THEN m.sort_text END DESC,
    CASE WHEN NOT @descending::boolean THEN m.sort_time END, CASE WHEN @descending::boolean THEN m.sort_time END DESC,
    CASE WHEN NOT @descending::boolean THEN m.sort_evaluated END NULLS FIRST, CASE WHEN @descending::boolean THEN m.sort_evaluated END DESC NULLS LAST, m.id
LIMIT @page_size OFFSET @page_offset;

-- name: FlagListItems :many
-- FlagListItems is the second statement of a flag list: the flags of a page
-- that are in an environment of an organization, in the order of their ids,
-- with the keys naming the environment (which a search reads only here) and
-- what a list shows of each (of the individual targets, only the
-- variations served to a group with keys, and of the rules, only their
-- names and variations, as Serves and the list's serving read them: jsonpath
-- arrays, which cost PostgreSQL less than rebuilding each rule as an object,
-- and the server less than decoding every targeted key): the latest
-- revision (flag_revisions_flag_created), the names of the creator and of
-- the last changer (from people, which names users, access tokens and flag
-- triggers alike, by primary key) and the evaluation summary
-- (flag_evaluations' primary key). Each is a join by index on the page's
-- rows only, and the statement keeps one cached plan.
SELECT f.id, f.name, f.key, f.description, f.variation_type, f.variations, f.is_enabled, f.is_archived, f.tags,
    f.revision, f.created_at, f.updated_at, f.creator_id, f.disabled_variation_id,
    jsonb_path_query_array(f.target_users, '$[*] ? (@.keyIds.size() > 0).variationId') AS targeted_variations, f.fallthrough,
    jsonb_path_query_array(f.rules, '$[*].name') AS rule_names,
    jsonb_path_query_array(f.rules, '$[*].variations') AS rule_variations,
    p.key AS project_key, e.key AS env_key,
    (last.created_at IS NOT NULL)::boolean AS changed, coalesce(last.created_at, f.created_at)::timestamptz AS changed_at,
    coalesce(last.comment, '')::text AS change_comment, coalesce(last.creator_id, f.creator_id)::uuid AS changed_by,
    (creator.name IS NOT NULL)::boolean AS creator_found, coalesce(creator.name, '')::text AS creator_name,
    coalesce(creator.email, '')::text AS creator_email,
    (changer.name IS NOT NULL)::boolean AS changer_found, coalesce(changer.name, '')::text AS changer_name,
    coalesce(changer.email, '')::text AS changer_email,
    (evaluated.count IS NOT NULL)::boolean AS evaluated, coalesce(evaluated.last_evaluated_at, f.created_at)::timestamptz AS last_evaluated_at,
    coalesce(evaluated.count, 0)::bigint AS evaluations
FROM unnest(@ids::uuid[]) WITH ORDINALITY AS page(id, n)
JOIN feature_flags f ON f.id = page.id AND f.env_id = @env_id
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id AND p.organization_id = @organization_id
LEFT JOIN LATERAL (
    SELECT r.created_at, r.comment, r.creator_id FROM flag_revisions r
    WHERE r.flag_id = f.id ORDER BY r.created_at DESC LIMIT 1
) last ON true
LEFT JOIN people creator ON creator.id = f.creator_id
LEFT JOIN people changer ON changer.id = last.creator_id
LEFT JOIN LATERAL (
    SELECT max(e.last_evaluated_at)::timestamptz AS last_evaluated_at, sum(e.count)::bigint AS count
    FROM flag_evaluations e WHERE e.flag_id = f.id
) evaluated ON true
ORDER BY page.n;

-- name: CountFlags :one
-- CountFlags counts an environment's flags as FlagListEnvironment does, without a limit.
SELECT count(*) FROM feature_flags
WHERE env_id = @env_id AND is_archived = @is_archived
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
-- ActorsByIDs names the people (users, access tokens and flag triggers) among some ids
-- (who scheduled changes, for example), by primary key.
SELECT id, name, email FROM people WHERE id = ANY(@ids::uuid[]);

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
