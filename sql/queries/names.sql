-- Availability checks FeatBit's clients make while a name or key is typed
-- (the is-key-used and is-name-used routes). Each compares case-insensitively,
-- as the unique index it mirrors does.

-- name: IsWorkspaceKeyUsed :one
-- IsWorkspaceKeyUsed tells whether another workspace has the key (workspaces_key_unique).
SELECT EXISTS (SELECT 1 FROM workspaces WHERE id <> @id AND lower(key) = lower(@key::text));

-- name: IsProjectKeyUsed :one
-- IsProjectKeyUsed tells whether an organization has a project with the key (projects_key_unique).
SELECT EXISTS (SELECT 1 FROM projects WHERE organization_id = @organization_id AND lower(key) = lower(@key::text));

-- name: IsEnvironmentKeyUsed :one
-- IsEnvironmentKeyUsed tells whether a project has an environment with the key (environments_key_unique).
SELECT EXISTS (SELECT 1 FROM environments WHERE project_id = @project_id AND lower(key) = lower(@key::text));

-- name: IsGroupNameUsed :one
-- IsGroupNameUsed tells whether an organization has a group with the name (groups_name_unique).
SELECT EXISTS (SELECT 1 FROM groups WHERE organization_id = @organization_id AND lower(name) = lower(@name::text));

-- name: IsAccessTokenNameUsed :one
-- IsAccessTokenNameUsed tells whether an organization has an access token with
-- the name (access_tokens_name_unique).
SELECT EXISTS (SELECT 1 FROM access_tokens WHERE organization_id = @organization_id AND lower(name) = lower(@name::text));
