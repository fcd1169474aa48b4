-- Where notifications go, and the durable outbox every outgoing message passes through.
-- Same conventions as 0001: ids uuid, times timestamptz to the millisecond, JSON jsonb.

ALTER TABLE inboxes
    ADD COLUMN ntfy_url text,
    ADD COLUMN ntfy_token text,
    ADD COLUMN webhook_secret text;

CREATE TABLE push_subscriptions (
    endpoint   text PRIMARY KEY,
    inbox_id   uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    p256dh     text NOT NULL,
    auth       text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX push_subscriptions_inbox ON push_subscriptions (inbox_id);

CREATE TABLE outbox (
    id              uuid PRIMARY KEY,
    decision_id     uuid NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    -- email, push, ntfy, webhook, or * for a fan-out the worker expands.
    channel         text NOT NULL,
    -- ask, reminder, resolved.
    purpose         text NOT NULL,
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
    attempts        integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    -- A worker holds the message until then.
    claimed_until   timestamptz,
    give_up_at      timestamptz NOT NULL,
    last_error      text,
    sent_at         timestamptz
);
-- Each message at most once per decision, so enqueueing is idempotent.
CREATE UNIQUE INDEX outbox_once ON outbox (decision_id, channel, purpose);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
