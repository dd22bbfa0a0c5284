-- name: ReserveLoginAttempts :many
-- ReserveLoginAttempts counts one attempt for each subject, starting a new
-- window where the old one is over, and returns the counts including it. One
-- statement, so concurrent attempts each see a distinct count.
INSERT INTO login_failures (subject, failures, window_start)
SELECT unnest(@subjects::text[]), 1, now()
ON CONFLICT (subject) DO UPDATE SET
    failures = CASE WHEN login_failures.window_start > @since THEN login_failures.failures + 1 ELSE 1 END,
    window_start = CASE WHEN login_failures.window_start > @since THEN login_failures.window_start ELSE now() END
RETURNING subject, failures;

-- name: ClearLoginFailures :exec
-- ClearLoginFailures forgets the attempts of subjects after a successful sign-in.
DELETE FROM login_failures WHERE subject = ANY(@subjects::text[]);

-- name: ReleaseLoginAttempt :exec
-- ReleaseLoginAttempt takes back the attempt a successful sign-in reserved
-- for a subject, which keeps counting the failures of others.
UPDATE login_failures SET failures = failures - 1 WHERE subject = $1 AND failures > 0;

-- name: SweepLoginFailures :exec
-- SweepLoginFailures deletes up to 100 counts whose window is over.
DELETE FROM login_failures WHERE subject IN (
    SELECT stale.subject FROM login_failures AS stale WHERE stale.window_start <= @since::timestamptz
    LIMIT 100 FOR UPDATE SKIP LOCKED
);
