-- Experiment metrics: what an experiment measures, FeatBit's
-- ExperimentMetric. An environment's resource, like its flags. The enums
-- are FeatBit's integers (event type 1 custom, 2 page view, 3 click; track
-- option 0 undefined, 1 conversion, 2 numeric; success criteria 0
-- undefined, 1 higher, 2 lower), so they go on the wire as they are stored.
CREATE TABLE experiment_metrics (
    id                            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    env_id                        uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name                          text NOT NULL,
    description                   text NOT NULL DEFAULT '',
    maintainer_user_id            uuid NOT NULL,
    event_name                    text NOT NULL,
    event_type                    smallint NOT NULL CHECK (event_type BETWEEN 1 AND 3),
    custom_event_track_option     smallint NOT NULL DEFAULT 0 CHECK (custom_event_track_option BETWEEN 0 AND 2),
    custom_event_unit             text NOT NULL DEFAULT '',
    custom_event_success_criteria smallint NOT NULL DEFAULT 0 CHECK (custom_event_success_criteria BETWEEN 0 AND 2),
    element_targets               text NOT NULL DEFAULT '',
    target_urls                   jsonb NOT NULL DEFAULT '[]',
    is_archived                   boolean NOT NULL DEFAULT false,
    created_at                    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at                    timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The metrics list: an environment's live metrics, newest change first.
CREATE INDEX experiment_metrics_env ON experiment_metrics (env_id, is_archived, updated_at DESC, id);
