-- Statements of a search by part of a flag's name or key (FlagFilter.Name).

-- name: FlagSearchItems :many
-- FlagSearchItems is a whole search page in one statement: the matches
-- (at most count_limit, as FlagSearch), their page in the list's order, and
-- for each flag of the page what FlagListItems reads, with the number of
-- matches on every row. It keeps one cached plan, on the trigram index
-- (feature_flags_search) whatever the pattern, so the store takes it only
-- while the table is small and the pattern has a trigram (searchPage); a
-- search that finds no row of a page past the first, or count_limit
-- matches, takes FlagSearch and FlagListItems instead.
WITH found AS MATERIALIZED (
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
), page AS (
    SELECT m.id, m.sort_text, m.sort_time, m.sort_evaluated FROM found m
    ORDER BY CASE WHEN NOT @descending::boolean THEN m.sort_text END, CASE WHEN @descending::boolean THEN m.sort_text END DESC,
        CASE WHEN NOT @descending::boolean THEN m.sort_time END, CASE WHEN @descending::boolean THEN m.sort_time END DESC,
        CASE WHEN NOT @descending::boolean THEN m.sort_evaluated END NULLS FIRST, CASE WHEN @descending::boolean THEN m.sort_evaluated END DESC NULLS LAST, m.id
    LIMIT @page_size OFFSET @page_offset
)
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
    coalesce(evaluated.count, 0)::bigint AS evaluations,
    (SELECT count(*) FROM found)::bigint AS total
FROM page
JOIN feature_flags f ON f.id = page.id
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
ORDER BY CASE WHEN NOT @descending::boolean THEN page.sort_text END, CASE WHEN @descending::boolean THEN page.sort_text END DESC,
    CASE WHEN NOT @descending::boolean THEN page.sort_time END, CASE WHEN @descending::boolean THEN page.sort_time END DESC,
    CASE WHEN NOT @descending::boolean THEN page.sort_evaluated END NULLS FIRST, CASE WHEN @descending::boolean THEN page.sort_evaluated END DESC NULLS LAST, page.id;

-- name: FlagTableRows :one
-- FlagTableRows is the planner's estimate of the rows of feature_flags, in
-- every environment (-1 until the table is first analyzed).
SELECT c.reltuples::bigint AS rows FROM pg_catalog.pg_class c WHERE c.oid = 'feature_flags'::regclass;
