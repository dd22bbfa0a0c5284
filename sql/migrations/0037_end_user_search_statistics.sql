-- A search of end users by part of a name is planned from the statistics of
-- lower(name) (and lower(key_id)) that ANALYZE samples: with the default
-- hundred histogram entries, one that happens to match a rare pattern makes
-- the planner expect a hundredth of the environment to match, and walk
-- end_users_seen through every user instead of asking the trigram index for
-- the few (a selective search then reads the whole environment). A thousand
-- entries make one such match count a thousandth, which the trigram plan
-- still beats; ANALYZE samples more rows of end_users for it.
ALTER INDEX end_users_key_trgm ALTER COLUMN 1 SET STATISTICS 1000;
ALTER INDEX end_users_name_trgm ALTER COLUMN 1 SET STATISTICS 1000;
