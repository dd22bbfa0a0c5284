-- Who owns the workspace, and who created each organization.
--
-- A workspace's settings (name, key, single sign-on, licence) act on every
-- organization in it, so others need the permission in each of them; the
-- owner needs it only in the organization they act in, so organizations
-- made without them cannot lock them out. The owner is the account bootstrap
-- creates; an existing workspace's is the member who has held the built-in
-- Owner policy longest in its oldest organization.
ALTER TABLE workspaces ADD COLUMN owner_id uuid REFERENCES users (id) ON DELETE SET NULL;

UPDATE workspaces w SET owner_id = (
    SELECT mp.user_id
    FROM organizations o
    JOIN member_policies mp ON mp.organization_id = o.id
    WHERE o.workspace_id = w.id
      AND mp.policy_id = '98881f6a-5c6c-4277-bcf7-fda94c538785' -- the built-in Owner
    ORDER BY o.created_at, o.id, mp.created_at, mp.user_id
    LIMIT 1);

-- creator_id bounds how many organizations one person may make. Those made
-- before it was recorded have none and count for nobody. The index serves
-- the foreign key when a user is deleted.
ALTER TABLE organizations ADD COLUMN creator_id uuid REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX organizations_creator ON organizations (creator_id) WHERE creator_id IS NOT NULL;
