-- name: CreateFlagDraft :one
-- CreateFlagDraft stores a proposed change to a flag.
INSERT INTO flag_drafts (env_id, flag_id, base, target, comment, creator_id, creator_kind)
VALUES (@env_id, @flag_id, @base, @target, @comment, @creator_id, @creator_kind)
RETURNING *;

-- name: LockFlagDraft :one
-- LockFlagDraft returns a draft and locks it until the transaction ends, so
-- one draft is applied once.
SELECT * FROM flag_drafts WHERE id = $1 FOR UPDATE;

-- name: MarkFlagDraftApplied :exec
-- MarkFlagDraftApplied records that a draft was applied.
UPDATE flag_drafts SET applied_at = clock_timestamp() WHERE id = $1;

-- name: GetEnvironmentByID :one
-- GetEnvironmentByID returns an environment with the keys of its project and
-- organization, for work done without a request (a schedule's worker).
SELECT sqlc.embed(e), p.key AS project_key, p.name AS project_name, p.organization_id,
    o.key AS organization_key, o.workspace_id
FROM environments e
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE e.id = $1;

-- name: CreateFlagSchedule :one
-- CreateFlagSchedule stores a schedule for a draft.
INSERT INTO flag_schedules (draft_id, env_id, flag_id, title, note, scheduled_at, status, change_request_id,
    creator_id, creator_kind)
VALUES (@draft_id, @env_id, @flag_id, @title, @note, @scheduled_at, @status, @change_request_id,
    @creator_id, @creator_kind)
RETURNING *;

-- name: ClaimDueFlagSchedule :one
-- ClaimDueFlagSchedule locks the pending schedule that has been due longest
-- (flag_schedules_due), skipping those another transaction holds: of several
-- workers on one database, exactly one gets each schedule, and keeps it until
-- its transaction ends.
SELECT * FROM flag_schedules
WHERE status = 'pending' AND scheduled_at <= now()
ORDER BY scheduled_at, id
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: LockFlagSchedule :one
-- LockFlagSchedule returns one of an environment's schedules, locked.
SELECT * FROM flag_schedules WHERE id = @id AND env_id = @env_id FOR UPDATE;

-- name: FinishFlagSchedule :exec
-- FinishFlagSchedule records how a schedule ended: applied, cancelled or failed.
UPDATE flag_schedules
SET status = @status, failure_reason = @failure_reason, updated_at = clock_timestamp(),
    applied_at = CASE WHEN @status::text = 'applied' THEN clock_timestamp() END
WHERE id = @id;

-- name: ListFlagSchedules :many
-- ListFlagSchedules returns the first 100 of a flag's schedules that are
-- pending or failed, with their drafts, soonest first (flag_schedules_flag).
SELECT sqlc.embed(s), d.base, d.target, d.comment AS draft_comment
FROM flag_schedules s JOIN flag_drafts d ON d.id = s.draft_id
WHERE s.flag_id = @flag_id AND s.status NOT IN ('applied', 'cancelled')
ORDER BY s.scheduled_at, s.id
LIMIT 100;

-- name: CountOpenFlagChanges :one
-- CountOpenFlagChanges counts a flag's proposed changes still to come:
-- schedules waiting for their time or an approval, and change requests under
-- review or approved but not applied (flag_schedules_flag,
-- flag_change_requests_flag).
SELECT (SELECT count(*) FROM flag_schedules s WHERE s.flag_id = @flag_id AND s.status IN ('pending', 'review'))
     + (SELECT count(*) FROM flag_change_requests r WHERE r.flag_id = @flag_id AND r.status IN ('PendingReview', 'Approved'))
     AS open;
