-- Where notifications go, and the durable outbox every outgoing message passes through.
-- Same conventions as 0001: ids TEXT, times INTEGER milliseconds, JSON TEXT.

ALTER TABLE inboxes ADD COLUMN ntfy_url TEXT;
ALTER TABLE inboxes ADD COLUMN ntfy_token TEXT;
ALTER TABLE inboxes ADD COLUMN webhook_secret TEXT;

CREATE TABLE push_subscriptions (
    endpoint   TEXT PRIMARY KEY NOT NULL,
    inbox_id   TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    p256dh     TEXT NOT NULL,
    auth       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX push_subscriptions_inbox ON push_subscriptions (inbox_id);

CREATE TABLE outbox (
    id              TEXT PRIMARY KEY NOT NULL,
    decision_id     TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    -- email, push, ntfy, webhook, or * for a fan-out the worker expands.
    channel         TEXT NOT NULL,
    -- ask, reminder, resolved.
    purpose         TEXT NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    -- A worker holds the message until then.
    claimed_until   INTEGER,
    give_up_at      INTEGER NOT NULL,
    last_error      TEXT,
    sent_at         INTEGER
);
-- Each message at most once per decision, so enqueueing is idempotent.
CREATE UNIQUE INDEX outbox_once ON outbox (decision_id, channel, purpose);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
