-- Scheduled changes. A draft is a proposed change to one flag: the
-- flag as it was when the change was proposed (base) and as the change would
-- leave it (target). A schedule applies a draft at a set time; change
-- requests (0023) apply drafts after approval, through the same store path.

CREATE TABLE flag_drafts (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id       uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_id      uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    -- base and target are whole flag snapshots (store.Flag as JSON); applying
    -- writes only the parts where they differ.
    base         jsonb NOT NULL,
    target       jsonb NOT NULL,
    comment      text NOT NULL DEFAULT '',
    -- creator_id is a user or, when creator_kind is 'token', an access token.
    creator_id   uuid NOT NULL,
    creator_kind text NOT NULL CHECK (creator_kind IN ('user', 'token')),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- applied_at is set once, in the transaction that applied the draft.
    applied_at   timestamptz
);
CREATE INDEX flag_drafts_flag ON flag_drafts (flag_id);

CREATE TABLE flag_schedules (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    draft_id          uuid NOT NULL UNIQUE REFERENCES flag_drafts (id) ON DELETE CASCADE,
    env_id            uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_id           uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    title             text NOT NULL,
    note              text NOT NULL DEFAULT '',
    scheduled_at      timestamptz NOT NULL,
    -- status: pending (waits for its time), applied, cancelled, failed
    -- (failure_reason says why). Migration 0023 widens the check with a status
    -- for schedules waiting for a change request's approval.
    status            text NOT NULL DEFAULT 'pending',
    failure_reason    text NOT NULL DEFAULT '',
    applied_at        timestamptz,
    -- change_request_id links a schedule to the change request that must be
    -- approved first; the foreign key is added with flag_change_requests.
    change_request_id uuid,
    creator_id        uuid NOT NULL,
    creator_kind      text NOT NULL CHECK (creator_kind IN ('user', 'token')),
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT flag_schedules_status_check CHECK (status IN ('pending', 'applied', 'cancelled', 'failed'))
);
-- The workers' claim: pending schedules by time.
CREATE INDEX flag_schedules_due ON flag_schedules (scheduled_at) WHERE status = 'pending';
-- A flag's pending changes.
CREATE INDEX flag_schedules_flag ON flag_schedules (flag_id, scheduled_at);

-- History names changes applied from a draft with FeatBit's operations.
ALTER TABLE audit_logs DROP CONSTRAINT audit_logs_operation_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_operation_check
    CHECK (operation IN ('Create', 'Update', 'Archive', 'Restore', 'Remove', 'ApplyFlagSchedule', 'ApplyFlagChangeRequest'));
