-- name: SetEnvChangeRequestSettings :one
-- SetEnvChangeRequestSettings sets an environment's setting "changes need
-- approval".
UPDATE environments
SET change_request_enabled = @enabled, approvals_required = @approvals_required,
    approver_member_ids = @approver_member_ids::uuid[], approver_group_ids = @approver_group_ids::uuid[],
    updated_at = now()
WHERE id = @id
RETURNING *;

-- name: CountOrganizationUsersIn :one
-- CountOrganizationUsersIn counts how many of some users belong to an organization.
SELECT count(*) FROM organization_users
WHERE organization_id = @organization_id AND user_id = ANY(@user_ids::uuid[]);

-- name: CountOrganizationGroupsIn :one
-- CountOrganizationGroupsIn counts how many of some groups belong to an organization.
SELECT count(*) FROM groups
WHERE organization_id = @organization_id AND id = ANY(@group_ids::uuid[]);

-- name: ListApprovers :many
-- ListApprovers lists the organization's members who may approve: those
-- named, and the members of the groups named, by name.
SELECT u.id, u.name, u.email
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = @organization_id
  AND (ou.user_id = ANY(@member_ids::uuid[])
       OR EXISTS (SELECT 1 FROM group_members gm
                  WHERE gm.organization_id = ou.organization_id AND gm.user_id = ou.user_id
                    AND gm.group_id = ANY(@group_ids::uuid[])))
ORDER BY lower(u.name), u.email, u.id;

-- name: CreateFlagChangeRequest :one
-- CreateFlagChangeRequest stores a change request for a draft.
INSERT INTO flag_change_requests (draft_id, env_id, flag_id, reason, approvals_required, creator_id)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: AddChangeRequestReviewers :exec
-- AddChangeRequestReviewers names a request's reviewers.
INSERT INTO flag_change_request_reviewers (change_request_id, member_id)
SELECT @change_request_id, unnest(@member_ids::uuid[]);

-- name: GetFlagChangeRequest :one
-- GetFlagChangeRequest returns a change request of an environment, with its
-- flag's key and the schedule that waits for it, if any.
SELECT sqlc.embed(cr), f.key AS flag_key, u.name AS creator_name, u.email AS creator_email,
       s.id AS schedule_id, d.base, d.target
FROM flag_change_requests cr
JOIN feature_flags f ON f.id = cr.flag_id
JOIN users u ON u.id = cr.creator_id
JOIN flag_drafts d ON d.id = cr.draft_id
LEFT JOIN flag_schedules s ON s.change_request_id = cr.id
WHERE cr.env_id = @env_id AND cr.id = @id;

-- name: LockFlagChangeRequest :one
-- LockFlagChangeRequest locks a change request of an environment for a
-- decision, an apply or a withdrawal, so two of them are taken one at a time.
SELECT * FROM flag_change_requests WHERE env_id = @env_id AND id = @id FOR UPDATE;

-- name: ListChangeRequestReviewers :many
-- ListChangeRequestReviewers lists the reviewers of some requests with
-- their decisions, by name (primary key).
SELECT r.change_request_id, r.member_id, r.action, r.comment, r.decided_at, u.name, u.email
FROM flag_change_request_reviewers r
JOIN users u ON u.id = r.member_id
WHERE r.change_request_id = ANY(@ids::uuid[])
ORDER BY r.change_request_id, lower(u.name), u.email;

-- name: SetReviewerDecision :execrows
-- SetReviewerDecision records a reviewer's decision.
UPDATE flag_change_request_reviewers
SET action = @action, comment = @comment, decided_at = now()
WHERE change_request_id = @change_request_id AND member_id = @member_id;

-- name: SetChangeRequestStatus :one
-- SetChangeRequestStatus sets a request's status after a decision or an apply.
UPDATE flag_change_requests
SET status = @status, updated_at = now(),
    applied_by = CASE WHEN @status = 'Applied' THEN sqlc.narg(applied_by)::uuid ELSE applied_by END,
    applied_at = CASE WHEN @status = 'Applied' THEN now() ELSE applied_at END
WHERE id = @id
RETURNING *;

-- name: ListFlagChangeRequests :many
-- ListFlagChangeRequests lists a flag's change requests not yet applied,
-- newest first (flag_change_requests_flag).
SELECT sqlc.embed(cr), f.key AS flag_key, u.name AS creator_name, u.email AS creator_email,
       s.id AS schedule_id, d.base, d.target
FROM flag_change_requests cr
JOIN feature_flags f ON f.id = cr.flag_id
JOIN users u ON u.id = cr.creator_id
JOIN flag_drafts d ON d.id = cr.draft_id
LEFT JOIN flag_schedules s ON s.change_request_id = cr.id
WHERE cr.flag_id = @flag_id AND cr.status <> 'Applied'
ORDER BY cr.created_at DESC, cr.id
LIMIT 100;

-- name: ListAwaitingReview :many
-- ListAwaitingReview lists the requests of an environment that wait for a
-- member's decision, oldest first (flag_change_request_reviewers_member).
SELECT sqlc.embed(cr), f.key AS flag_key, u.name AS creator_name, u.email AS creator_email,
       s.id AS schedule_id, d.base, d.target
FROM flag_change_request_reviewers r
JOIN flag_change_requests cr ON cr.id = r.change_request_id
JOIN feature_flags f ON f.id = cr.flag_id
JOIN users u ON u.id = cr.creator_id
JOIN flag_drafts d ON d.id = cr.draft_id
LEFT JOIN flag_schedules s ON s.change_request_id = cr.id
WHERE r.member_id = @member_id AND r.action = 'Empty' AND cr.env_id = @env_id
  AND cr.status = 'PendingReview'
ORDER BY cr.created_at, cr.id
LIMIT 100;

-- name: CountAwaitingReview :one
-- CountAwaitingReview counts the requests of an environment that wait for
-- a member's decision (flag_change_request_reviewers_member).
SELECT count(*)
FROM flag_change_request_reviewers r
JOIN flag_change_requests cr ON cr.id = r.change_request_id
WHERE r.member_id = @member_id AND r.action = 'Empty' AND cr.env_id = @env_id
  AND cr.status = 'PendingReview';

-- name: DeleteChangeRequestDraft :execrows
-- DeleteChangeRequestDraft withdraws a request: its draft goes, and with it
-- the request, its reviews and a schedule that waited for it.
DELETE FROM flag_drafts WHERE id = @draft_id;

-- name: SetChangeRequestScheduleStatus :exec
-- SetChangeRequestScheduleStatus moves the schedule that waits for a request
-- on: to 'pending' once approved, 'review' when an approval is taken back,
-- 'declined' when declined. Applied, cancelled and failed schedules stay.
UPDATE flag_schedules SET status = @status, updated_at = clock_timestamp()
WHERE change_request_id = @change_request_id AND status IN ('review', 'pending', 'declined');

-- name: ListOrganizationPeople :many
-- ListOrganizationPeople lists an organization's members by name, for
-- choosing approvers; the first 500.
SELECT u.id, u.name, u.email
FROM organization_users ou
JOIN users u ON u.id = ou.user_id
WHERE ou.organization_id = $1
ORDER BY lower(u.name), u.email, u.id
LIMIT 500;

-- name: ListOrganizationGroupNames :many
-- ListOrganizationGroupNames lists an organization's groups by name, for
-- choosing approvers; the first 500.
SELECT id, name FROM groups WHERE organization_id = $1 ORDER BY lower(name), id LIMIT 500;

-- name: GetDraftChangeRequestID :one
-- GetDraftChangeRequestID returns the change request that holds a draft;
-- no row when none does (flag_change_requests_draft_id_key).
SELECT id FROM flag_change_requests WHERE draft_id = $1;

-- name: EnvsNeedingApprovalUsingSegment :many
-- EnvsNeedingApprovalUsingSegment names the first environment whose changes
-- need approval where a flag that is not archived names a segment in its
-- rules; none when there is no such flag (feature_flags_segment_refs).
SELECT p.name AS project_name, e.name AS env_name
FROM feature_flags f
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
WHERE f.segment_refs @> ARRAY[@segment_id::uuid] AND NOT f.is_archived AND e.change_request_enabled
ORDER BY p.name, e.name
LIMIT 1;

-- name: ListOrganizationAwaitingReview :many
-- ListOrganizationAwaitingReview lists the requests waiting for a member's
-- decision in every environment of an organization, oldest first
-- (flag_change_request_reviewers_undecided); the caller keeps those of
-- environments the member may read.
SELECT cr.id, cr.env_id, cr.reason, cr.created_at, f.key AS flag_key, f.name AS flag_name,
       e.key AS env_key, e.name AS env_name, p.key AS project_key, p.name AS project_name,
       u.name AS creator_name, u.email AS creator_email
FROM flag_change_request_reviewers r
JOIN flag_change_requests cr ON cr.id = r.change_request_id
JOIN feature_flags f ON f.id = cr.flag_id
JOIN environments e ON e.id = cr.env_id
JOIN projects p ON p.id = e.project_id
JOIN users u ON u.id = cr.creator_id
WHERE r.member_id = @member_id AND r.action = 'Empty' AND cr.status = 'PendingReview'
  AND p.organization_id = @organization_id
ORDER BY cr.created_at, cr.id
LIMIT 200;

-- name: GetOrganizationChangeRequestPlace :one
-- GetOrganizationChangeRequestPlace finds where a change request of an
-- organization is: a link to it names only its id.
SELECT cr.env_id, e.key AS env_key, e.name AS env_name, p.key AS project_key, p.name AS project_name
FROM flag_change_requests cr
JOIN environments e ON e.id = cr.env_id
JOIN projects p ON p.id = e.project_id
WHERE cr.id = @id AND p.organization_id = @organization_id;
