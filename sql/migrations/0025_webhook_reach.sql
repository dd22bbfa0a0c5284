-- Webhooks stay within their readers' rights.

-- env_ids are the environments a queued delivery and a logged attempt are
-- about (those of the change that the webhook's scopes covered), so reading
-- a webhook's log can require reading each of them, also after its scopes
-- were narrowed. Rows from before say none; the webhook's scopes still apply.
ALTER TABLE webhook_outbox ADD COLUMN env_ids uuid[] NOT NULL DEFAULT '{}';
ALTER TABLE webhook_deliveries ADD COLUMN env_ids uuid[] NOT NULL DEFAULT '{}';

-- A webhook's own header values are not shown again once saved: the log
-- kept them with each request, so the logged ones are masked. Bunting's own
-- headers (as Go writes their names) stay as they were.
UPDATE webhook_deliveries d SET request = jsonb_set(d.request, '{headers}', (
    SELECT coalesce(jsonb_object_agg(h.key, CASE WHEN lower(h.key) IN ('content-type', 'user-agent',
        'x-featbit-delivery', 'x-featbit-event', 'x-featbit-hook-id', 'x-featbit-signature-256')
        THEN h.value ELSE '"********"'::jsonb END), '{}'::jsonb)
    FROM jsonb_each(d.request -> 'headers') AS h))
WHERE jsonb_typeof(d.request -> 'headers') = 'object';

-- So were the secret's first and last two characters and the header values
-- in the webhooks' history: each snapshot keeps only whether they were set.
CREATE FUNCTION pg_temp.masked_webhook(w jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(w) = 'object' THEN w || jsonb_build_object(
        'secret', CASE WHEN coalesce(w ->> 'secret', '') = '' THEN '' ELSE '********' END,
        'headers', coalesce((SELECT jsonb_agg(jsonb_build_object('key', h -> 'key',
            'value', CASE WHEN coalesce(h ->> 'value', '') = '' THEN '' ELSE '********' END))
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(w -> 'headers') = 'array'
                THEN w -> 'headers' ELSE '[]'::jsonb END) AS h), '[]'::jsonb))
    ELSE w END
$$;
UPDATE audit_logs SET previous = pg_temp.masked_webhook(previous), current = pg_temp.masked_webhook(current)
WHERE ref_type = 'Webhook';
DROP FUNCTION pg_temp.masked_webhook(jsonb);
