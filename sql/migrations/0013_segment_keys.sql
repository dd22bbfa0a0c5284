-- A shared segment's key must be unique among the segments visible in every
-- environment of its scopes, not only in the environment it was created in.
-- The store finds an organization's segments with a key
-- through this index before it creates or rescopes one.
CREATE INDEX segments_org_key ON segments (organization_id, lower(key));
