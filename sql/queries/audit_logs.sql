-- name: InsertAuditLog :one
-- InsertAuditLog records one change; callers run it in the change's
-- transaction. Given an event (feed.Event as JSON, as RecordChange writes
-- it), the same statement writes it into the change outbox, saving a
-- change that SDKs and caches depend on a round trip. It tells whether an
-- active webhook of the organization subscribes to any of the change's
-- webhook events, so a change no webhook hears of (most) looks for none.
WITH outbox AS (
    INSERT INTO change_outbox (event)
    SELECT CAST(sqlc.narg(event)::text AS json) WHERE sqlc.narg(event)::text IS NOT NULL
)
INSERT INTO audit_logs (workspace_id, organization_id, env_id, ref_type, ref_id, keyword,
                        operation, previous, current, comment, creator_id, creator_kind)
VALUES (@workspace_id, @organization_id, @env_id, @ref_type, @ref_id, @keyword,
        @operation, @previous, @current, @comment, @creator_id, @creator_kind)
RETURNING EXISTS (SELECT 1 FROM webhooks w WHERE w.organization_id = @organization_id AND w.is_active
    AND w.events && @webhook_events::text[]) AS webhooks_subscribed;

-- name: ListOrganizationAuditLogs :many
-- ListOrganizationAuditLogs returns the newest entries of an organization (audit_logs_org_created).
SELECT * FROM audit_logs WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT $2;

-- name: ListEnvAuditLogs :many
-- ListEnvAuditLogs pages the history of some environments (one, or those
-- of a cross-environment query), newest first, with the name of who made
-- each change (audit_logs_env_created, audit_logs_ref). The environments
-- come as comma-separated text: a search runs unprepared (store/plans.go),
-- where pgx cannot encode an array of uuids without knowing its type.
SELECT sqlc.embed(l),
    coalesce(u.name, t.name,
        CASE WHEN tr.description = '' THEN 'Trigger ' || tr.token_preview || '…' ELSE 'Trigger “' || tr.description || '”' END,
        'System')::text AS creator_name,
    coalesce(u.email, CASE WHEN t.id IS NOT NULL THEN 'Access token' END, CASE WHEN tr.id IS NOT NULL THEN 'Trigger' END,
        'System')::text AS creator_email,
    -- Whether the flag or segment changed still exists, so pages link only to those that do.
    (CASE l.ref_type
        WHEN 'FeatureFlag' THEN EXISTS (SELECT 1 FROM feature_flags f WHERE f.id = l.ref_id::uuid)
        WHEN 'Segment' THEN EXISTS (SELECT 1 FROM segments s WHERE s.id = l.ref_id::uuid)
        ELSE true END)::boolean AS subject_exists
FROM audit_logs l
LEFT JOIN users u ON l.creator_kind = 'user' AND u.id = l.creator_id
LEFT JOIN access_tokens t ON l.creator_kind = 'token' AND t.id = l.creator_id
-- A flag trigger's change is the system's, made by the trigger (store.RunTrigger).
LEFT JOIN flag_triggers tr ON l.creator_kind = 'system' AND tr.id = l.creator_id
WHERE l.env_id = ANY(string_to_array(@env_ids::text, ',')::uuid[])
  AND (@ref_type::text = '' OR l.ref_type = @ref_type::text)
  AND (@ref_id::text = '' OR l.ref_id = @ref_id::text)
  AND (@pattern::text = '%' OR lower(l.keyword) LIKE @pattern::text OR lower(l.comment) LIKE @pattern::text)
  AND (sqlc.narg(since)::timestamptz IS NULL OR l.created_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR l.created_at <= sqlc.narg(until))
  AND (sqlc.narg(creator_id)::uuid IS NULL OR l.creator_id = sqlc.narg(creator_id)::uuid)
ORDER BY l.created_at DESC, l.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountEnvAuditLogs :one
-- CountEnvAuditLogs counts what ListEnvAuditLogs pages through.
SELECT count(*) FROM audit_logs l
WHERE l.env_id = ANY(string_to_array(@env_ids::text, ',')::uuid[])
  AND (@ref_type::text = '' OR l.ref_type = @ref_type::text)
  AND (@ref_id::text = '' OR l.ref_id = @ref_id::text)
  AND (@pattern::text = '%' OR lower(l.keyword) LIKE @pattern::text OR lower(l.comment) LIKE @pattern::text)
  AND (sqlc.narg(since)::timestamptz IS NULL OR l.created_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR l.created_at <= sqlc.narg(until))
  AND (sqlc.narg(creator_id)::uuid IS NULL OR l.creator_id = sqlc.narg(creator_id)::uuid);
