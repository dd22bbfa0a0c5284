-- name: GetLoginFailures :many
-- GetLoginFailures returns the failure counts of subjects within the window.
SELECT subject, failures FROM login_failures
WHERE subject = ANY(@subjects::text[]) AND window_start > @since;

-- name: RecordLoginFailure :exec
-- RecordLoginFailure counts one failure, starting a new window when the old one is over.
INSERT INTO login_failures (subject, failures, window_start) VALUES (@subject, 1, now())
ON CONFLICT (subject) DO UPDATE SET
    failures = CASE WHEN login_failures.window_start > @since THEN login_failures.failures + 1 ELSE 1 END,
    window_start = CASE WHEN login_failures.window_start > @since THEN login_failures.window_start ELSE now() END;

-- name: ClearLoginFailures :exec
-- ClearLoginFailures forgets the failures of a subject after a successful sign-in.
DELETE FROM login_failures WHERE subject = $1;
