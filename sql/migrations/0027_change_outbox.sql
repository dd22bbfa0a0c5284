-- change_outbox holds every change SDKs and caches depend on (store.Event as
-- JSON), written in the transaction that makes the change. Nothing is
-- notified inside that transaction: PostgreSQL serializes the commits of
-- transactions that NOTIFY, so writes that notified stopped scaling. Each
-- instance reads the outbox after commit (sql/feed): seq orders the changes,
-- xid (the writing transaction) tells which of them a reader has seen, by
-- the snapshot it read with.
CREATE TABLE change_outbox (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
    event      json NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- A reader asks for the transactions its last snapshot did not see.
CREATE INDEX change_outbox_xid ON change_outbox (xid);

-- change_outbox_pruned remembers the newest transaction whose changes were
-- pruned, so a reader whose last snapshot had not seen it knows it may have
-- missed changes, and starts over instead.
CREATE TABLE change_outbox_pruned (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    max_xid   xid8 NOT NULL
);
INSERT INTO change_outbox_pruned (max_xid) VALUES ('0');
