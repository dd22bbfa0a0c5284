-- Several organizations per workspace and the FeatBit
-- profile and organization fields their clients read.

-- origin is how the user first joined, as FeatBit reports it in the profile:
-- Local (email and password) or Sso. Users created without a password came
-- through single sign-on.
ALTER TABLE users ADD COLUMN origin text NOT NULL DEFAULT 'Local' CHECK (origin IN ('Local', 'Sso', 'OAuth'));
UPDATE users SET origin = 'Sso' WHERE password_hash IS NULL;

-- flag_sorted_by is the organization's default order of flag lists
-- (FeatBit's settings.flagSortedBy).
ALTER TABLE organizations ADD COLUMN flag_sorted_by text NOT NULL DEFAULT 'created_at'
    CHECK (flag_sorted_by IN ('created_at', 'key'));
