-- feature_flags_segment_refs answers, on every change of who is in a
-- segment, which flags name it. With GIN's fast update, each flag written
-- since the last vacuum waits in the index's pending list, which every
-- lookup reads whole: after a few thousand flag writes a segment change
-- spent most of its database time there. Written straight into the index,
-- a flag's few references cost its write little, and a lookup stays a few
-- pages. The entries already pending move into the index now.
ALTER INDEX feature_flags_segment_refs SET (fastupdate = off);
SELECT gin_clean_pending_list('feature_flags_segment_refs');
