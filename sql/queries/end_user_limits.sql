-- name: KnownEndUserKeys :many
-- KnownEndUserKeys returns which of the given (environment, key) pairs, as
-- parallel arrays, an environment already keeps (through the end_users
-- (env_id, key_id) unique index): the others would be new end users, which
-- count against the secret that reported them.
SELECT e.env_id, e.key_id FROM end_users e
WHERE (e.env_id, e.key_id) IN (SELECT unnest(@env_ids::uuid[]), unnest(@key_ids::text[]));
