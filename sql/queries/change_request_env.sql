-- name: ChangeRequestEnv :one
-- ChangeRequestEnv returns the environment a change request was made in
-- (primary key), so that a link naming only the request opens it wherever
-- its reviewer works; the caller checks the environment is readable.
SELECT env_id FROM flag_change_requests WHERE id = @id;
