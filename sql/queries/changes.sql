-- name: RecordChange :exec
-- RecordChange writes a change event (feed.Event as JSON) into the outbox,
-- in the change's own transaction: readers see it once that commits.
INSERT INTO change_outbox (event) VALUES (CAST(@event::text AS json));

-- name: ChangesPosition :one
-- ChangesPosition is where a reader that has seen nothing starts: the
-- snapshot of now, as text.
SELECT pg_current_snapshot()::text AS position;

-- name: ChangesSince :one
-- ChangesSince returns, in seq order, the changes committed since position
-- (the snapshot of an earlier read): those written by the transactions that
-- snapshot did not see, running then (its xip) or begun after (its xmax on),
-- found through change_outbox_xid. With them comes the snapshot this read saw
-- them by, the next position, and whether changes the last one did not see
-- may have been pruned meanwhile.
SELECT pg_current_snapshot()::text AS next_position,
    (SELECT p.max_xid >= pg_snapshot_xmin(CAST(@position::text AS pg_snapshot)) FROM change_outbox_pruned p)::boolean AS missed,
    ARRAY(
        SELECT o.event::text FROM change_outbox o
        WHERE o.xid >= pg_snapshot_xmax(CAST(@position::text AS pg_snapshot))
           OR o.xid = ANY(ARRAY(SELECT pg_snapshot_xip(CAST(@position::text AS pg_snapshot))))
        ORDER BY o.seq
    )::text[] AS events;

-- name: AnnounceChanges :exec
-- AnnounceChanges wakes the outbox's reader on every instance. It is sent
-- after the changes commit, in a transaction of its own that writes nothing,
-- so the lock PostgreSQL takes to order notifications is held only briefly.
SELECT pg_notify('bunting_changes', '');

-- name: PruneChanges :exec
-- PruneChanges deletes the changes written before @before: those ahead of
-- the first one that is not, in seq order (change_outbox_pkey), so the
-- statement costs what it deletes. The newest transaction it deleted a
-- change of is remembered for readers (ChangesSince's missed).
WITH gone AS (
    DELETE FROM change_outbox
    WHERE seq < coalesce((SELECT f.seq FROM change_outbox f WHERE f.created_at >= @before ORDER BY f.seq LIMIT 1),
                         (SELECT max(l.seq) + 1 FROM change_outbox l))
    RETURNING xid
)
UPDATE change_outbox_pruned SET max_xid = greatest(max_xid, (SELECT max(g.xid) FROM gone g))
WHERE EXISTS (SELECT 1 FROM gone);

-- name: ListOrganizationEnvironments :many
-- ListOrganizationEnvironments returns every environment of an organization
-- with its project, to find those a shared segment's scopes select.
SELECT e.id, e.key, e.project_id, p.key AS project_key
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.organization_id = $1
ORDER BY e.id;
