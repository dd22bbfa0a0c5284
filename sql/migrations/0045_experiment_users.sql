-- What each user did in an iteration: the variation first seen in an
-- exposure (NULL until exposed: a conversion may arrive first, and FeatBit
-- counts every conversion in the window whatever its order), and running
-- totals of the metric's events. One row per user and iteration, whatever
-- the number of events, so storage grows with users; results add these up
-- per variation.
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
-- Results group an iteration's exposed users by variation.
CREATE INDEX experiment_users_variation ON experiment_users (iteration_id, variation_id)
    INCLUDE (events, total) WHERE variation_id IS NOT NULL;
