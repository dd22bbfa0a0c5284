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

-- A delivery attempt records its answer's reason phrase beside its status:
-- the delivery worker, which knows HTTP, writes it, so the store that reads
-- the log back need not. Attempts logged before get the phrase of their
-- status, as it was shown.
ALTER TABLE webhook_deliveries ADD COLUMN reason_phrase text NOT NULL DEFAULT '';
UPDATE webhook_deliveries d SET reason_phrase = r.phrase FROM (VALUES
    (100, 'Continue'), (101, 'Switching Protocols'), (102, 'Processing'), (103, 'Early Hints'), (200, 'OK'), (201, 'Created'),
    (202, 'Accepted'), (203, 'Non-Authoritative Information'), (204, 'No Content'), (205, 'Reset Content'), (206, 'Partial Content'), (207, 'Multi-Status'),
    (208, 'Already Reported'), (226, 'IM Used'), (300, 'Multiple Choices'), (301, 'Moved Permanently'), (302, 'Found'), (303, 'See Other'),
    (304, 'Not Modified'), (305, 'Use Proxy'), (307, 'Temporary Redirect'), (308, 'Permanent Redirect'), (400, 'Bad Request'), (401, 'Unauthorized'),
    (402, 'Payment Required'), (403, 'Forbidden'), (404, 'Not Found'), (405, 'Method Not Allowed'), (406, 'Not Acceptable'), (407, 'Proxy Authentication Required'),
    (408, 'Request Timeout'), (409, 'Conflict'), (410, 'Gone'), (411, 'Length Required'), (412, 'Precondition Failed'), (413, 'Request Entity Too Large'),
    (414, 'Request URI Too Long'), (415, 'Unsupported Media Type'), (416, 'Requested Range Not Satisfiable'), (417, 'Expectation Failed'), (418, 'I''m a teapot'), (421, 'Misdirected Request'),
    (422, 'Unprocessable Entity'), (423, 'Locked'), (424, 'Failed Dependency'), (425, 'Too Early'), (426, 'Upgrade Required'), (428, 'Precondition Required'),
    (429, 'Too Many Requests'), (431, 'Request Header Fields Too Large'), (451, 'Unavailable For Legal Reasons'), (500, 'Internal Server Error'), (501, 'Not Implemented'), (502, 'Bad Gateway'),
    (503, 'Service Unavailable'), (504, 'Gateway Timeout'), (505, 'HTTP Version Not Supported'), (506, 'Variant Also Negotiates'), (507, 'Insufficient Storage'), (508, 'Loop Detected'),
    (510, 'Not Extended'), (511, 'Network Authentication Required')
) AS r (code, phrase) WHERE d.status_code = r.code;
