-- Every refresh token descended from one sign-in shares its family_id, so a
-- token presented after it was spent (a copy taken before the rightful holder
-- refreshed, or after) revokes the whole chain and ends its sessions: the one
-- who presents it and the one who holds the live token must both sign in
-- again. Tokens issued before the column existed join the family of the
-- first token of their replaced_by chain.
ALTER TABLE refresh_tokens ADD COLUMN family_id uuid;

WITH RECURSIVE chain AS (
    SELECT r.token_hash, gen_random_uuid() AS family_id
    FROM refresh_tokens r
    WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens p WHERE p.replaced_by = r.token_hash)
    UNION ALL
    SELECT p.replaced_by, chain.family_id
    FROM chain JOIN refresh_tokens p ON p.token_hash = chain.token_hash
    WHERE p.replaced_by IS NOT NULL
)
UPDATE refresh_tokens r SET family_id = chain.family_id FROM chain WHERE chain.token_hash = r.token_hash;
UPDATE refresh_tokens SET family_id = gen_random_uuid() WHERE family_id IS NULL;

ALTER TABLE refresh_tokens ALTER COLUMN family_id SET NOT NULL;
-- A reused token revokes its family; a sign-out revokes its session's token.
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
