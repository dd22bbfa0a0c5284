-- name: ReserveLoginAttempts :many
-- ReserveLoginAttempts counts one attempt for each subject, starting a new
-- window where the old one is over, and returns the counts including it. One
-- statement, so concurrent attempts each see a distinct count. It also
-- deletes up to 100 counts of other subjects whose window is over, so the
-- table holds little more than the current window's.
WITH swept AS (
    DELETE FROM login_failures WHERE subject IN (
        SELECT stale.subject FROM login_failures AS stale
        WHERE stale.window_start <= @since::timestamptz AND stale.subject <> ALL(@subjects::text[])
        LIMIT 100 FOR UPDATE SKIP LOCKED
    )
)
INSERT INTO login_failures (subject, failures, window_start)
SELECT unnest(@subjects::text[]), 1, now()
ON CONFLICT (subject) DO UPDATE SET
    failures = CASE WHEN login_failures.window_start > @since THEN login_failures.failures + 1 ELSE 1 END,
    window_start = CASE WHEN login_failures.window_start > @since THEN login_failures.window_start ELSE now() END
RETURNING subject, failures;

-- name: SettleLoginSuccess :exec
-- SettleLoginSuccess forgets the counts of the cleared subjects after a
-- successful sign-in, and takes back the attempt it reserved for the
-- released one, which keeps counting the failures of others.
WITH cleared AS (
    DELETE FROM login_failures AS gone WHERE gone.subject = ANY(@cleared::text[])
)
UPDATE login_failures AS kept SET failures = kept.failures - 1
WHERE kept.subject = @released::text AND kept.failures > 0;
