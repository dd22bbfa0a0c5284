-- name: WorkspaceEndUserUsage :many
-- WorkspaceEndUserUsage counts, per environment of a workspace, the end users
-- whose known activity (first seen at created_at, last seen at updated_at)
-- overlaps [@since, @until), and those first seen in it. Bunting keeps when an
-- end user was first and last seen, not every day between.
SELECT e.id AS env_id, o.name AS org_name, p.name AS project_name, e.name AS env_name,
       count(u.id) FILTER (WHERE u.created_at < @until::timestamptz AND u.updated_at >= @since::timestamptz) AS unique_users,
       count(u.id) FILTER (WHERE u.created_at >= @since::timestamptz AND u.created_at < @until::timestamptz) AS new_users
FROM organizations o
JOIN projects p ON p.organization_id = o.id
JOIN environments e ON e.project_id = p.id
LEFT JOIN end_users u ON u.env_id = e.id
WHERE o.workspace_id = @workspace_id
GROUP BY e.id, o.name, p.name, e.name, o.created_at, p.created_at, e.created_at
ORDER BY o.created_at, p.created_at, e.created_at, e.id;

-- name: WorkspaceNewUsersByDay :many
-- WorkspaceNewUsersByDay counts the end users of a workspace first seen on
-- each UTC day of [@since, @until).
SELECT (u.created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS new_users
FROM end_users u
JOIN environments e ON e.id = u.env_id
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE o.workspace_id = @workspace_id AND u.created_at >= @since::timestamptz AND u.created_at < @until::timestamptz
GROUP BY day ORDER BY day;

-- name: WorkspaceEvaluationUsage :many
-- WorkspaceEvaluationUsage sums, per environment of a workspace and UTC day,
-- the evaluations SDKs reported whose whole recorded span (first to last
-- evaluation of a flag's variation) lies on that day within [@since, @until):
-- Bunting keeps each flag variation's running total, not a count per day, so
-- only those evaluations are surely of that day.
SELECT f.env_id, (ev.first_evaluated_at AT TIME ZONE 'UTC')::date AS day, sum(ev.count)::bigint AS evaluations
FROM flag_evaluations ev
JOIN feature_flags f ON f.id = ev.flag_id
JOIN environments e ON e.id = f.env_id
JOIN projects p ON p.id = e.project_id
JOIN organizations o ON o.id = p.organization_id
WHERE o.workspace_id = @workspace_id
  AND ev.first_evaluated_at >= @since::timestamptz AND ev.last_evaluated_at < @until::timestamptz
  AND (ev.first_evaluated_at AT TIME ZONE 'UTC')::date = (ev.last_evaluated_at AT TIME ZONE 'UTC')::date
GROUP BY f.env_id, day;
