-- name: CreateRelayProxy :one
-- CreateRelayProxy inserts a relay proxy; its key is given hashed, masked and sealed.
INSERT INTO relay_proxies (organization_id, name, description, key_hash, key_prefix, sealed_key, is_all_envs, scopes, agents)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING *;

-- name: GetRelayProxy :one
-- GetRelayProxy returns one relay proxy of an organization.
SELECT * FROM relay_proxies WHERE organization_id = $1 AND id = $2;

-- name: LockRelayProxy :one
-- LockRelayProxy reads a relay proxy of an organization for a change of it.
SELECT * FROM relay_proxies WHERE organization_id = $1 AND id = $2 FOR UPDATE;

-- name: ListRelayProxies :many
-- ListRelayProxies returns one page of an organization's relay proxies whose
-- name contains a text, newest first (relay_proxies_org), each row with the
-- count of all that match.
SELECT sqlc.embed(r), count(*) OVER () AS total
FROM relay_proxies r
WHERE r.organization_id = $1 AND (@name::text = '' OR r.name ILIKE '%' || @name::text || '%')
ORDER BY r.created_at DESC, r.id
LIMIT $2 OFFSET $3;

-- name: CountRelayProxies :one
-- CountRelayProxies counts an organization's relay proxies whose name contains a text.
SELECT count(*) FROM relay_proxies
WHERE organization_id = $1 AND (@name::text = '' OR name ILIKE '%' || @name::text || '%');

-- name: UpdateRelayProxy :one
-- UpdateRelayProxy replaces a relay proxy's editable fields.
UPDATE relay_proxies
SET name = $3, description = $4, is_all_envs = $5, scopes = $6, agents = $7, updated_at = now()
WHERE organization_id = $1 AND id = $2
RETURNING *;

-- name: SetRelayProxyAgents :exec
-- SetRelayProxyAgents records a manual agent's sync in the agents list.
UPDATE relay_proxies SET agents = $2 WHERE id = $1;

-- name: DeleteRelayProxy :execrows
-- DeleteRelayProxy removes a relay proxy and its auto agents.
DELETE FROM relay_proxies WHERE organization_id = $1 AND id = $2;

-- name: RelayProxyNameUsed :one
-- RelayProxyNameUsed reports whether an organization has a relay proxy of a
-- name, ignoring case, other than one (relay_proxies_name_unique).
SELECT EXISTS (SELECT 1 FROM relay_proxies
    WHERE organization_id = $1 AND lower(name) = lower(@name::text) AND id <> @other_than::uuid);

-- name: RelayProxyByKeyHash :one
-- RelayProxyByKeyHash finds the relay proxy of a key, with its workspace
-- (relay_proxies_key_hash).
SELECT sqlc.embed(r), o.workspace_id
FROM relay_proxies r JOIN organizations o ON o.id = r.organization_id
WHERE r.key_hash = $1;

-- name: ListRelayProxyAutoAgents :many
-- ListRelayProxyAutoAgents returns the auto agents of some relay proxies,
-- newest first.
SELECT * FROM relay_proxy_auto_agents
WHERE relay_proxy_id = ANY(@ids::uuid[])
ORDER BY registered_at DESC, id;

-- name: InsertRelayProxyAutoAgent :execrows
-- InsertRelayProxyAutoAgent registers an auto agent unless it is already.
INSERT INTO relay_proxy_auto_agents (relay_proxy_id, id) VALUES ($1, $2)
ON CONFLICT DO NOTHING;

-- name: KeepRelayProxyAutoAgents :execrows
-- KeepRelayProxyAutoAgents removes a relay proxy's auto agents but those named.
DELETE FROM relay_proxy_auto_agents WHERE relay_proxy_id = $1 AND NOT (id = ANY(@keep::text[]));

-- name: SetRelayProxyAutoAgentStatus :execrows
-- SetRelayProxyAutoAgentStatus keeps the status an auto agent reported.
UPDATE relay_proxy_auto_agents SET status = $3 WHERE relay_proxy_id = $1 AND id = $2;

-- name: CountWorkspaceAutoAgents :one
-- CountWorkspaceAutoAgents counts the auto agents of every relay proxy of a
-- workspace's organizations: what the licence quota counts.
SELECT count(*) FROM relay_proxy_auto_agents a
JOIN relay_proxies r ON r.id = a.relay_proxy_id
JOIN organizations o ON o.id = r.organization_id
WHERE o.workspace_id = $1;

-- name: RelayProxyEnvironments :many
-- RelayProxyEnvironments lists the environments a relay proxy serves (every
-- environment of its organization, or those of its scopes) with their
-- project, in the order the pages list them.
SELECT e.id AS env_id, e.name AS env_name, e.key AS env_key, p.id AS project_id, p.name AS project_name,
    p.key AS project_key
FROM environments e JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = $1 AND (@all_envs::boolean OR e.id = ANY(@scopes::uuid[]))
ORDER BY p.created_at, p.id, e.created_at, e.id;

-- name: RelayProxySecrets :many
-- RelayProxySecrets returns the secrets of some environments with their
-- project's key, in creation order (env_secrets_env).
SELECT s.id, s.env_id, s.type, s.value, e.key AS env_key, p.key AS project_key
FROM env_secrets s JOIN environments e ON e.id = s.env_id JOIN projects p ON p.id = e.project_id
WHERE s.env_id = ANY(@env_ids::uuid[])
ORDER BY s.env_id, s.created_at, s.id;
