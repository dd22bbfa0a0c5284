-- name: UpsertCodeReferenceUpload :one
-- UpsertCodeReferenceUpload records an upload of a repository's branch,
-- replacing the one before (its references are deleted apart).
INSERT INTO code_reference_uploads (project_id, repository, branch, commit_sha)
VALUES (@project_id, @repository, @branch, @commit_sha)
ON CONFLICT (project_id, repository, branch)
DO UPDATE SET commit_sha = EXCLUDED.commit_sha, uploaded_at = clock_timestamp()
RETURNING *;

-- name: DeleteCodeReferences :execrows
-- DeleteCodeReferences forgets what an upload said before (code_references_upload).
DELETE FROM code_references WHERE upload_id = $1;

-- name: InsertCodeReferences :execrows
-- InsertCodeReferences writes an upload's references in one statement, the
-- arrays read in step.
INSERT INTO code_references (upload_id, project_id, flag_key, path, line, snippet)
SELECT @upload_id::uuid, @project_id::uuid, unnest(@flag_keys::text[]), unnest(@paths::text[]),
       unnest(@lines::integer[]), unnest(@snippets::text[]);

-- name: ListFlagCodeReferences :many
-- ListFlagCodeReferences lists where a flag's key is used, by repository,
-- branch, file and line (code_references_flag), at most a page of them.
SELECT r.path, r.line, r.snippet, u.repository, u.branch, u.commit_sha, u.uploaded_at
FROM code_references r
JOIN code_reference_uploads u ON u.id = r.upload_id
WHERE r.project_id = @project_id AND r.flag_key = @flag_key
ORDER BY u.repository, u.branch, r.path, r.line
LIMIT @max;

-- name: CountCodeReferencesByKey :many
-- CountCodeReferencesByKey counts the references of each of the keys given
-- (code_references_flag): the flag list marks archived flags still in code.
SELECT flag_key, count(*) AS refs
FROM code_references
WHERE project_id = @project_id AND flag_key = ANY (@flag_keys::text[])
GROUP BY flag_key;
