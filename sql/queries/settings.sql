-- name: GetSetting :one
-- GetSetting returns one instance-wide setting.
SELECT value FROM settings WHERE name = $1;

-- name: InsertSettingIfAbsent :exec
-- InsertSettingIfAbsent stores a setting unless another instance already did,
-- so concurrent first starts agree on one value.
INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING;

-- name: LockBootstrap :exec
-- LockBootstrap serializes instances bootstrapping one database, until the transaction ends.
SELECT pg_advisory_xact_lock(7303052102);
