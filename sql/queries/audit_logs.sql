-- name: InsertAuditLog :exec
-- InsertAuditLog records one change; callers run it in the change's transaction.
INSERT INTO audit_logs (workspace_id, organization_id, env_id, ref_type, ref_id, keyword,
                        operation, previous, current, comment, creator_id, creator_kind)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- name: ListOrganizationAuditLogs :many
-- ListOrganizationAuditLogs returns the newest entries of an organization (audit_logs_org_created).
SELECT * FROM audit_logs WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT $2;
