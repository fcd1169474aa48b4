-- Ids are lowercase hyphenated UUID text (lexical order = byte order, so UUIDv7 ids sort by
-- creation); times are INTEGER milliseconds since the Unix epoch; JSON is TEXT.

CREATE TABLE settings (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE inboxes (
    id         TEXT PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL UNIQUE,
    email      TEXT,
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY NOT NULL,
    inbox_id   TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    key_hash   TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_inbox ON api_keys (inbox_id);

CREATE TABLE decisions (
    id              TEXT PRIMARY KEY NOT NULL,
    inbox_id        TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('bool', 'choose', 'text', 'form', 'todo')),
    question        TEXT NOT NULL,
    project         TEXT,
    -- The whole DecisionSpec as JSON; the columns above and default_outcome are copies
    -- for filtering and for expiry in SQL.
    spec            TEXT NOT NULL,
    default_outcome TEXT,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'answered', 'declined', 'expired', 'cancelled')),
    outcome         TEXT,
    outcome_source  TEXT CHECK (outcome_source IN ('human', 'default')),
    custom          INTEGER NOT NULL DEFAULT 0,
    remark          TEXT,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    resolved_at     INTEGER,
    idempotency_key TEXT,
    request_hash    TEXT,
    has_image       INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX decisions_idempotency ON decisions (inbox_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX decisions_inbox ON decisions (inbox_id, id);
CREATE INDEX decisions_due ON decisions (expires_at) WHERE status = 'pending';

CREATE TABLE decision_images (
    decision_id  TEXT PRIMARY KEY NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    content_type TEXT NOT NULL,
    bytes        BLOB NOT NULL
);

CREATE TABLE decision_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    detail      TEXT NOT NULL
);
CREATE INDEX decision_events_decision ON decision_events (decision_id, at, id);

CREATE TABLE notifications (
    decision_id TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    channel     TEXT NOT NULL,
    status      TEXT NOT NULL,
    detail      TEXT,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (decision_id, channel)
);
