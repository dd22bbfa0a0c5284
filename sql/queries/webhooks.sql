-- name: CreateWebhook :one
-- CreateWebhook inserts an organization's webhook.
INSERT INTO webhooks (organization_id, name, url, scopes, events, headers, payload_template_type,
    payload_template, sealed_secret, is_active, prevent_empty_payloads, creator_id, updator_id)
VALUES (@organization_id, @name, @url, @scopes, @events, @headers, @payload_template_type,
    @payload_template, @sealed_secret, @is_active, @prevent_empty_payloads, @creator_id, @creator_id)
RETURNING *;

-- name: UpdateWebhook :one
-- UpdateWebhook replaces a webhook's settings (FeatBit's PUT replaces them all).
UPDATE webhooks SET name = @name, url = @url, scopes = @scopes, events = @events, headers = @headers,
    payload_template_type = @payload_template_type, payload_template = @payload_template,
    sealed_secret = @sealed_secret, is_active = @is_active, prevent_empty_payloads = @prevent_empty_payloads,
    updator_id = @updator_id, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: GetWebhook :one
-- GetWebhook returns one of an organization's webhooks.
SELECT * FROM webhooks WHERE organization_id = $1 AND id = $2;

-- name: GetWebhookByID :one
-- GetWebhookByID returns a webhook by id alone, for the delivery worker.
SELECT * FROM webhooks WHERE id = $1;

-- name: DeleteWebhook :one
-- DeleteWebhook removes a webhook with its pending deliveries and its log.
DELETE FROM webhooks WHERE organization_id = $1 AND id = $2 RETURNING *;

-- name: ListWebhooks :many
-- ListWebhooks pages an organization's webhooks by name, filtered by part of
-- the name (an escaped ILIKE pattern) and by a scope's project or
-- environment ('' for any): a scope string starts with its project id and
-- lists its environment ids. An organization has few webhooks.
SELECT * FROM webhooks
WHERE organization_id = @organization_id
  AND name ILIKE '%' || @name::text || '%'
  AND (@project_id::text = '' OR EXISTS (SELECT 1 FROM unnest(scopes) s WHERE s LIKE @project_id::text || '/%'))
  AND (@env_id::text = '' OR EXISTS (SELECT 1 FROM unnest(scopes) s WHERE s LIKE '%' || @env_id::text || '%'))
ORDER BY name, id
LIMIT @page_size OFFSET @page_offset;

-- name: CountWebhooks :one
-- CountWebhooks counts what ListWebhooks pages through.
SELECT count(*) FROM webhooks
WHERE organization_id = @organization_id
  AND name ILIKE '%' || @name::text || '%'
  AND (@project_id::text = '' OR EXISTS (SELECT 1 FROM unnest(scopes) s WHERE s LIKE @project_id::text || '/%'))
  AND (@env_id::text = '' OR EXISTS (SELECT 1 FROM unnest(scopes) s WHERE s LIKE '%' || @env_id::text || '%'));

-- name: LockWebhooks :exec
-- LockWebhooks serializes the creation of an organization's webhooks until
-- the transaction ends, so their bound holds under concurrent requests.
SELECT pg_advisory_xact_lock(hashtextextended('webhooks/' || @organization_id::uuid, 0));

-- name: CountOrganizationWebhooks :one
-- CountOrganizationWebhooks counts an organization's webhooks, for their
-- bound (webhooks_organization_id_name_key).
SELECT count(*) FROM webhooks WHERE organization_id = $1;

-- name: WebhookLogEnvironments :many
-- WebhookLogEnvironments lists the environments a webhook's delivery log
-- is about (webhook_deliveries_webhook); the log keeps 30 days.
SELECT DISTINCT e::uuid AS env_id FROM webhook_deliveries d, unnest(d.env_ids) AS e WHERE d.webhook_id = $1;

-- name: WebhookNameUsed :one
-- WebhookNameUsed tells whether an organization has a webhook of a name.
SELECT EXISTS (SELECT 1 FROM webhooks WHERE organization_id = $1 AND lower(name) = lower(@name::text));

-- name: ActiveWebhooksForEvents :many
-- ActiveWebhooksForEvents returns an organization's active webhooks that
-- subscribe to any of the events; the caller matches their scopes.
SELECT id, scopes, events, payload_template_type, prevent_empty_payloads FROM webhooks
WHERE organization_id = @organization_id AND is_active AND events && @events::text[];

-- name: InsertWebhookOutbox :exec
-- InsertWebhookOutbox queues a delivery in the transaction of its change,
-- with the environments it is about and the trace context of the request
-- that made the change (NULL when it was not traced).
INSERT INTO webhook_outbox (webhook_id, events, payload, env_ids, trace)
VALUES (@webhook_id, @events, @payload, @env_ids, sqlc.narg(trace));

-- name: ClaimWebhookOutbox :many
-- ClaimWebhookOutbox takes up to @max due deliveries for this instance,
-- fairly: an organization has at most @per_organization in flight on this
-- instance (@busy_orgs have @busy_counts already), and due rows are taken
-- in turns, each organization's first before anyone's second, and within
-- an organization its webhooks in turn; so one organization's receivers
-- that hang hold only its own share of the worker. Rows another instance
-- is claiming are skipped (SKIP LOCKED), and a claimed row is not due again
-- until @lease_until, so it is sent once; should this instance die, it is
-- claimed again after the lease. The turns are counted over every due row
-- (webhook_outbox_due): the outbox holds only deliveries not yet made.
WITH due AS (
    SELECT o.id, o.due_at, w.organization_id,
        row_number() OVER (PARTITION BY o.webhook_id ORDER BY o.due_at, o.id) AS hook_turn
    FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
    WHERE o.due_at <= now()
), turns AS (
    SELECT d.id, d.due_at,
        coalesce((@busy_counts::integer[])[array_position(@busy_orgs::uuid[], d.organization_id)], 0)
        + row_number() OVER (PARTITION BY d.organization_id ORDER BY d.hook_turn, d.due_at, d.id) AS turn
    FROM due d
), chosen AS (
    SELECT t.id FROM turns t WHERE t.turn <= @per_organization::integer ORDER BY t.turn, t.due_at, t.id LIMIT @max
), claimed AS (
    SELECT c.id FROM webhook_outbox c WHERE c.id IN (SELECT id FROM chosen) AND c.due_at <= now() FOR UPDATE SKIP LOCKED
)
UPDATE webhook_outbox o SET due_at = @lease_until, attempts = o.attempts + 1
FROM webhooks w
WHERE o.id IN (SELECT id FROM claimed) AND w.id = o.webhook_id
RETURNING o.*, w.organization_id;

-- name: RescheduleWebhookOutbox :exec
-- RescheduleWebhookOutbox sets when a failed delivery is tried again.
UPDATE webhook_outbox SET due_at = $2 WHERE id = $1;

-- name: DeleteWebhookOutbox :exec
-- DeleteWebhookOutbox removes a delivery that succeeded or ran out of attempts.
DELETE FROM webhook_outbox WHERE id = $1;

-- name: InsertWebhookDelivery :one
-- InsertWebhookDelivery logs one attempt and records it as the webhook's last delivery.
WITH d AS (
    INSERT INTO webhook_deliveries (webhook_id, delivery_id, events, attempt, success, status_code,
        reason_phrase, latency_ms, request, response, error, started_at, ended_at, env_ids)
    VALUES (@webhook_id, @delivery_id, @events, @attempt, @success, sqlc.narg(status_code),
        @reason_phrase, @latency_ms, @request, @response, @error, @started_at, @ended_at, @env_ids)
    RETURNING *
), w AS (
    UPDATE webhooks SET last_delivery = jsonb_build_object('success', @success::boolean,
        'happenedAt', @started_at::timestamptz, 'response', sqlc.narg(status_code)::integer)
    WHERE id = @webhook_id
)
SELECT * FROM d;

-- name: ListWebhookDeliveries :many
-- ListWebhookDeliveries pages a webhook's delivery log, newest first,
-- filtered by an event ('' for any), success (NULL for any) and a start time
-- (NULL for any).
SELECT * FROM webhook_deliveries
WHERE webhook_id = @webhook_id
  AND (@event::text = '' OR @event::text = ANY(string_to_array(events, ',')))
  AND (sqlc.narg(success)::boolean IS NULL OR success = sqlc.narg(success)::boolean)
  AND (sqlc.narg(not_before)::timestamptz IS NULL OR started_at >= sqlc.narg(not_before)::timestamptz)
ORDER BY started_at DESC, id
LIMIT @page_size OFFSET @page_offset;

-- name: CountWebhookDeliveries :one
-- CountWebhookDeliveries counts what ListWebhookDeliveries pages through.
SELECT count(*) FROM webhook_deliveries
WHERE webhook_id = @webhook_id
  AND (@event::text = '' OR @event::text = ANY(string_to_array(events, ',')))
  AND (sqlc.narg(success)::boolean IS NULL OR success = sqlc.narg(success)::boolean)
  AND (sqlc.narg(not_before)::timestamptz IS NULL OR started_at >= sqlc.narg(not_before)::timestamptz);

-- name: OrganizationEnvironments :many
-- OrganizationEnvironments lists every environment of an organization with
-- its project, to check and name webhook scopes and to check who may read
-- them.
SELECT e.id AS env_id, e.name AS env_name, e.key AS env_key, p.id AS project_id, p.name AS project_name,
    p.key AS project_key
FROM environments e JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = $1
ORDER BY p.name, e.name;

-- name: WebhookResource :one
-- WebhookResource names the organization, project and environment of a
-- change for its webhook payload.
SELECT o.id AS organization_id, o.name AS organization_name, p.id AS project_id, p.name AS project_name,
    e.id AS env_id, e.name AS env_name
FROM environments e JOIN projects p ON p.id = e.project_id JOIN organizations o ON o.id = p.organization_id
WHERE e.id = $1;

-- name: PruneWebhookDeliveries :execrows
-- PruneWebhookDeliveries forgets log entries older than a time, so the log
-- stays bounded.
DELETE FROM webhook_deliveries WHERE started_at < $1;
