-- Limits on what one API key, and a flood of asks, can make of a person's phone.
-- Same conventions as 0001: ids TEXT, times INTEGER milliseconds, JSON TEXT.

-- Whether the operator lets the key mark a question urgent (through quiet hours):
-- `sayso key create --urgent`, `sayso key set KEY --urgent yes|no`. Keys made before this
-- may not: an operator who wants it for one says so.
ALTER TABLE api_keys ADD COLUMN urgent INTEGER NOT NULL DEFAULT 0;

-- The urgent questions each key asked in the last hour, for its hourly cap
-- (SAYSO_URGENT_PER_HOUR). Rows older than an hour are deleted as the key asks again.
CREATE TABLE urgent_uses (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    at     INTEGER NOT NULL
);
CREATE INDEX urgent_uses_key ON urgent_uses (key_id, at);

-- A person's notification budget (SAYSO_NOTIFY_PER_MINUTE), per channel: when an ask or
-- reminder took a place in it, and when one was first held because the budget was spent.
ALTER TABLE outbox ADD COLUMN counted_at INTEGER;
ALTER TABLE outbox ADD COLUMN held_at INTEGER;
CREATE INDEX outbox_counted ON outbox (person, channel, counted_at) WHERE counted_at IS NOT NULL;
CREATE INDEX outbox_held ON outbox (person, channel) WHERE held_at IS NOT NULL AND status = 'pending';
