-- Relay proxies: a key that lets a relay (FeatBit's agent, or `bunting
-- relay`) read the flags, segments and secrets of some environments of an
-- organization, to serve SDKs next to the applications.
--
-- The key is shown once. What is kept is its SHA-256 (key_hash: a relay's
-- key is looked up by it), its first 15 characters (key_prefix: the list
-- shows them, FeatBit's mask) and a copy sealed with the server secret
-- (sealed_key), which only the manual sync reads: FeatBit's agent in manual
-- mode takes data only from a caller that presents the key itself.
CREATE TABLE relay_proxies (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    key_hash        bytea NOT NULL,
    key_prefix      text NOT NULL,
    sealed_key      text NOT NULL,
    is_all_envs     boolean NOT NULL DEFAULT false,
    -- scopes are environment ids; environments deleted later simply serve
    -- nothing (the relay is told the scope changed).
    scopes          uuid[] NOT NULL DEFAULT '{}',
    -- agents are the manual agents: {id, name, host, syncAt, serves,
    -- dataVersion, createdAt}, FeatBit's Agent.
    agents          jsonb NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX relay_proxies_key_hash ON relay_proxies (key_hash);
CREATE UNIQUE INDEX relay_proxies_name_unique ON relay_proxies (organization_id, lower(name));
CREATE INDEX relay_proxies_org ON relay_proxies (organization_id, created_at DESC);

-- Auto agents registered themselves with the key; each reports its status
-- (a JSON string, FeatBit's) every minute over its WebSocket. A table of
-- their own so a report and an edit of the proxy never overwrite each other.
CREATE TABLE relay_proxy_auto_agents (
    relay_proxy_id uuid NOT NULL REFERENCES relay_proxies (id) ON DELETE CASCADE,
    id             text NOT NULL,
    status         text NOT NULL DEFAULT '{}',
    registered_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (relay_proxy_id, id)
);
