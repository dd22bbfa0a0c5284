-- name: CreateAccessToken :one
-- CreateAccessToken inserts a token by its hash; the token itself is never stored.
INSERT INTO access_tokens (organization_id, creator_id, name, type, token_hash, preview, permissions)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: GetAccessTokenByHash :one
-- GetAccessTokenByHash finds the token an API client presents (access_tokens_token_hash_key).
SELECT * FROM access_tokens WHERE token_hash = $1;

-- name: GetAccessToken :one
-- GetAccessToken returns one of an organization's tokens with its creator.
SELECT sqlc.embed(t), u.name AS creator_name, u.email AS creator_email
FROM access_tokens t JOIN users u ON u.id = t.creator_id
WHERE t.organization_id = $1 AND t.id = $2;

-- name: ListAccessTokens :many
-- ListAccessTokens pages an organization's tokens, newest first, filtered by
-- part of the name (an escaped ILIKE pattern), the type ('' for any) and
-- the creator (NULL for any). An organization has few tokens: the scan of
-- its rows is small.
SELECT sqlc.embed(t), u.name AS creator_name, u.email AS creator_email
FROM access_tokens t JOIN users u ON u.id = t.creator_id
WHERE t.organization_id = @organization_id
  AND t.name ILIKE '%' || @name::text || '%'
  AND (@type::text = '' OR t.type = @type::text)
  AND (sqlc.narg(creator_id)::uuid IS NULL OR t.creator_id = sqlc.narg(creator_id)::uuid)
ORDER BY t.created_at DESC, t.id
LIMIT @page_size OFFSET @page_offset;

-- name: CountAccessTokens :one
-- CountAccessTokens counts what ListAccessTokens pages through.
SELECT count(*) FROM access_tokens
WHERE organization_id = @organization_id AND name ILIKE '%' || @name::text || '%'
  AND (@type::text = '' OR type = @type::text)
  AND (sqlc.narg(creator_id)::uuid IS NULL OR creator_id = sqlc.narg(creator_id)::uuid);

-- name: UpdateAccessToken :one
-- UpdateAccessToken sets the name and, for Service tokens, the statements.
UPDATE access_tokens SET name = $3, permissions = $4, updated_at = now()
WHERE organization_id = $1 AND id = $2
RETURNING *;

-- name: SetAccessTokenStatus :one
-- SetAccessTokenStatus activates or deactivates a token.
UPDATE access_tokens SET status = $3, updated_at = now()
WHERE organization_id = $1 AND id = $2
RETURNING *;

-- name: DeleteAccessToken :execrows
-- DeleteAccessToken removes a token for good.
DELETE FROM access_tokens WHERE organization_id = $1 AND id = $2;

-- name: TouchAccessToken :exec
-- TouchAccessToken records use, at most once a minute so reads stay cheap.
UPDATE access_tokens SET last_used_at = now()
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
