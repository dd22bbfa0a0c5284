-- Indexes for the IAM pages: an organization may hold 50,000 members and
-- 2,000 groups, and its members, groups and the policy pages that list them
-- are searched by part of an email or a name. Searches compare
-- lower(column) LIKE '%' || lower(text) || '%', which the trigram GIN indexes
-- below answer; pages walk the btree indexes in display order.
-- (0002 is reserved for flags and segments.)

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX users_email_trgm ON users USING gin (lower(email) gin_trgm_ops);
CREATE INDEX users_name_trgm ON users USING gin (lower(name) gin_trgm_ops);
CREATE INDEX groups_name_trgm ON groups USING gin (lower(name) gin_trgm_ops);

-- Member pages list the newest members of an organization first.
CREATE INDEX organization_users_org_created ON organization_users (organization_id, created_at DESC, user_id);

-- Who holds a policy directly in an organization: the policy members page,
-- its count and the last-owner check.
CREATE INDEX member_policies_org_policy ON member_policies (organization_id, policy_id, user_id);

-- An organization's policies (built-ins have organization_id NULL) by name.
CREATE INDEX policies_org_name ON policies (organization_id, lower(name));
