-- Experiments: a flag's variations compared on a metric, FeatBit's
-- Experiment, and their iterations (each a recording window with its own
-- snapshot of the metric and its last results). Status is FeatBit's string:
-- NotStarted, Recording or Paused.
CREATE TABLE experiments (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id                uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_id               uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    metric_id             uuid NOT NULL REFERENCES experiment_metrics (id) ON DELETE CASCADE,
    baseline_variation_id text NOT NULL,
    alpha                 double precision NOT NULL DEFAULT 0.05 CHECK (alpha > 0 AND alpha < 1),
    status                text NOT NULL DEFAULT 'NotStarted' CHECK (status IN ('NotStarted', 'Recording', 'Paused')),
    is_archived           boolean NOT NULL DEFAULT false,
    created_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- One live experiment per flag and metric: FeatBit returns the existing
-- one's twin instead of inserting, and the index keeps two racing creations
-- from both inserting.
CREATE UNIQUE INDEX experiments_flag_metric_live ON experiments (flag_id, metric_id) WHERE NOT is_archived;
-- The experiments list, newest first.
CREATE INDEX experiments_env ON experiments (env_id, is_archived, created_at DESC, id);
-- "Is this metric used?" before archiving it.
CREATE INDEX experiments_metric_live ON experiments (metric_id) WHERE NOT is_archived;

CREATE TABLE experiment_iterations (
    id                            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    experiment_id                 uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    env_id                        uuid NOT NULL,
    start_time                    timestamptz NOT NULL,
    end_time                      timestamptz,
    updated_at                    timestamptz,
    is_archived                   boolean NOT NULL DEFAULT false,
    is_finish                     boolean NOT NULL DEFAULT false,
    -- The metric as it was when the iteration started.
    event_name                    text NOT NULL,
    event_type                    smallint NOT NULL,
    custom_event_track_option     smallint NOT NULL,
    custom_event_unit             text NOT NULL,
    custom_event_success_criteria smallint NOT NULL,
    -- FeatBit's IterationResult rows, as last computed.
    results                       jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX experiment_iterations_experiment ON experiment_iterations (experiment_id, start_time);
-- Ingestion looks up an environment's open iterations on every batch.
CREATE INDEX experiment_iterations_open ON experiment_iterations (env_id) WHERE end_time IS NULL AND NOT is_archived;
