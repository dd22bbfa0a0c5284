-- webhooks are an organization's subscriptions to flag and segment changes
-- (FeatBit's Webhook). scopes are FeatBit's "{projectId}/{envId},{envId}"
-- strings; the secret is sealed with the server key (it must be read back to
-- sign each delivery, so it cannot be hashed).
CREATE TABLE webhooks (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id        uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                   text NOT NULL,
    url                    text NOT NULL,
    scopes                 text[] NOT NULL,
    events                 text[] NOT NULL,
    headers                jsonb NOT NULL DEFAULT '[]',
    payload_template_type  text NOT NULL DEFAULT 'default',
    payload_template       text NOT NULL DEFAULT '',
    sealed_secret          text NOT NULL DEFAULT '',
    is_active              boolean NOT NULL DEFAULT true,
    prevent_empty_payloads boolean NOT NULL DEFAULT false,
    last_delivery          jsonb,
    creator_id             uuid REFERENCES users (id) ON DELETE SET NULL,
    updator_id             uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, name)
);

-- webhook_outbox holds deliveries not yet made: a row is written in the
-- transaction of the change that caused it, so it exists exactly when the
-- change does, and a worker on any instance claims it after commit
-- (FOR UPDATE SKIP LOCKED), sends it and deletes it, or schedules its next
-- attempt. claimed_until is the lease of the instance sending it: a row
-- whose sender died is claimed again once the lease has passed.
CREATE TABLE webhook_outbox (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id    uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    events        text NOT NULL,
    payload       text NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    due_at        timestamptz NOT NULL DEFAULT now(),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (due_at);

-- webhook_deliveries is the delivery log: one row per attempt (FeatBit's
-- WebhookDelivery), with the answer's status, the time it took and the
-- first bytes of its body.
CREATE TABLE webhook_deliveries (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id    uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    delivery_id   uuid NOT NULL,
    events        text NOT NULL,
    attempt       integer NOT NULL,
    success       boolean NOT NULL,
    status_code   integer,
    latency_ms    integer NOT NULL,
    request       jsonb NOT NULL,
    response      text NOT NULL DEFAULT '',
    error         text NOT NULL DEFAULT '',
    started_at    timestamptz NOT NULL,
    ended_at      timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, started_at DESC);
