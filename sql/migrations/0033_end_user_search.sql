-- End-user searches match any part of the key or the name, case-insensitively
-- (FeatBit's Contains), so "002" finds "user-0020". Trigram indexes serve
-- such a LIKE '%…%' (pg_trgm is enabled by 0002); the prefix indexes they
-- replace served only a search from the start, and every batch of SDK
-- upserts paid for them.
CREATE INDEX end_users_key_trgm ON end_users USING gin (lower(key_id) gin_trgm_ops);
CREATE INDEX end_users_name_trgm ON end_users USING gin (lower(name) gin_trgm_ops);
DROP INDEX end_users_key_prefix;
DROP INDEX end_users_name_prefix;
