-- Change requests. An environment may require that changes to
-- what its flags serve be approved first; such a change is stored as a draft
-- (0022) with a change request that reviewers approve or decline, and is
-- applied through the same store path as a draft of a schedule.

-- The environment's setting "changes need approval": how many approvals a
-- request needs, and who may approve (members, and members of groups). The
-- ids are checked against the organization when the setting is saved, and
-- again whenever someone reviews, so a member who left approves nothing.
ALTER TABLE environments
    ADD COLUMN change_request_enabled boolean NOT NULL DEFAULT false,
    ADD COLUMN approvals_required     integer NOT NULL DEFAULT 1
        CONSTRAINT environments_approvals_required_check CHECK (approvals_required BETWEEN 1 AND 10),
    ADD COLUMN approver_member_ids    uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN approver_group_ids     uuid[] NOT NULL DEFAULT '{}';

CREATE TABLE flag_change_requests (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Deleting the draft (withdrawing the request) deletes the request.
    draft_id           uuid NOT NULL UNIQUE REFERENCES flag_drafts (id) ON DELETE CASCADE,
    env_id             uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_id            uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    -- FeatBit's FlagChangeRequestStatus.
    status             text NOT NULL DEFAULT 'PendingReview'
        CHECK (status IN ('PendingReview', 'Approved', 'Declined', 'Applied')),
    reason             text NOT NULL,
    -- approvals_required is the environment's number when the request was
    -- made: changing the setting does not change requests under review.
    approvals_required integer NOT NULL CHECK (approvals_required >= 1),
    -- Only people make requests (a service token has nobody to stand for it).
    creator_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    applied_by         uuid,
    applied_at         timestamptz,
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- A flag's pending changes.
CREATE INDEX flag_change_requests_flag ON flag_change_requests (flag_id, created_at);

-- The reviewers the author named, each with a decision (FeatBit's Reviewer).
CREATE TABLE flag_change_request_reviewers (
    change_request_id uuid NOT NULL REFERENCES flag_change_requests (id) ON DELETE CASCADE,
    member_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    action            text NOT NULL DEFAULT 'Empty' CHECK (action IN ('Empty', 'Approve', 'Decline')),
    comment           text NOT NULL DEFAULT '',
    decided_at        timestamptz,
    PRIMARY KEY (change_request_id, member_id)
);
-- "Waiting for your review": a member's open reviews.
CREATE INDEX flag_change_request_reviewers_member ON flag_change_request_reviewers (member_id);

-- A schedule made with a change request waits for its approval ('review'),
-- becomes 'pending' once approved, and 'declined' when declined.
ALTER TABLE flag_schedules
    ADD CONSTRAINT flag_schedules_change_request_fk
        FOREIGN KEY (change_request_id) REFERENCES flag_change_requests (id) ON DELETE CASCADE,
    DROP CONSTRAINT flag_schedules_status_check,
    ADD CONSTRAINT flag_schedules_status_check
        CHECK (status IN ('pending', 'applied', 'cancelled', 'failed', 'review', 'declined'));
-- One schedule per request, found from the request.
CREATE UNIQUE INDEX flag_schedules_change_request ON flag_schedules (change_request_id) WHERE change_request_id IS NOT NULL;
