-- Code references: where a project's flag keys appear in the code of a
-- repository, as `bunting coderefs` found them at one commit of one branch.
-- Flags of one key are the same flag in every environment of a project, so
-- references belong to the project and every environment's flag page shows
-- them. An upload replaces everything its repository and branch said before.
CREATE TABLE code_reference_uploads (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    repository  text NOT NULL,
    branch      text NOT NULL,
    commit_sha  text NOT NULL,
    uploaded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (project_id, repository, branch)
);

CREATE TABLE code_references (
    upload_id  uuid NOT NULL REFERENCES code_reference_uploads (id) ON DELETE CASCADE,
    -- project_id repeats the upload's, so a flag's references are found by
    -- one index without the upload.
    project_id uuid NOT NULL,
    flag_key   text NOT NULL,
    path       text NOT NULL,
    line       integer NOT NULL CHECK (line >= 1),
    snippet    text NOT NULL
);
-- A flag's references, and the counts the flag list asks of archived flags.
CREATE INDEX code_references_flag ON code_references (project_id, flag_key);
-- Replacing an upload deletes its references.
CREATE INDEX code_references_upload ON code_references (upload_id);

-- The reviews waiting for a member, across every environment of the
-- organization (the Reviews page and the count in the top bar): only
-- undecided reviews are ever looked up by member.
CREATE INDEX flag_change_request_reviewers_undecided
    ON flag_change_request_reviewers (member_id) WHERE action = 'Empty';
