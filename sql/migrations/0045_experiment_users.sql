-- What each user did in an iteration: the variation first seen in an
-- exposure (NULL until exposed: a conversion may arrive first, and FeatBit
-- counts every conversion in the window whatever its order), and running
-- totals of the metric's events. One row per user and iteration, whatever
-- the number of events, so storage grows with users.
CREATE TABLE experiment_users (
    iteration_id  uuid NOT NULL REFERENCES experiment_iterations (id) ON DELETE CASCADE,
    user_key      text NOT NULL,
    variation_id  text,
    exposed_at    timestamptz,
    -- events is how many metric events the user sent; total their summed
    -- numeric value (FeatBit's per-user value x); total_squares the sum of
    -- each event's value squared, kept for the per-event spread.
    events        bigint NOT NULL DEFAULT 0,
    total         double precision NOT NULL DEFAULT 0,
    total_squares double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (iteration_id, user_key)
);

-- The sums results are computed from, per iteration and variation, kept by
-- the same statements that write experiment_users: reading results costs
-- one row per variation, whatever the number of users or events. users are
-- the exposed users, converted those of them with at least one event; total
-- and total_squares the sums over them of each user's total and its square.
CREATE TABLE experiment_variation_totals (
    iteration_id  uuid NOT NULL REFERENCES experiment_iterations (id) ON DELETE CASCADE,
    variation_id  text NOT NULL,
    users         bigint NOT NULL DEFAULT 0,
    converted     bigint NOT NULL DEFAULT 0,
    total         double precision NOT NULL DEFAULT 0,
    total_squares double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (iteration_id, variation_id)
);

-- Each variation's sums as they stood in each minute an iteration received
-- events (the first report of the minute writes them), so a page can draw
-- every variation's interval over time. totals is
-- [{"v": variation id, "n": users, "c": converted, "s": total, "q": total_squares}].
CREATE TABLE experiment_snapshots (
    iteration_id uuid NOT NULL REFERENCES experiment_iterations (id) ON DELETE CASCADE,
    at           timestamptz NOT NULL,
    totals       jsonb NOT NULL,
    PRIMARY KEY (iteration_id, at)
);
