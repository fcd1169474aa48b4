-- Usage counters and the optional daily quota; an index for the event stream of resolutions.
-- Same conventions as 0001: ids TEXT, days TEXT 'YYYY-MM-DD' (UTC).

-- Actions an inbox may use per UTC day; NULL for no limit.
ALTER TABLE inboxes ADD COLUMN daily_quota INTEGER;

-- Actions and creates per inbox and UTC day. A day may have several rows (shards) so that
-- concurrent creates on PostgreSQL do not queue on one row; SQLite only writes shard 0.
CREATE TABLE usage_daily (
    inbox_id TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    day      TEXT NOT NULL,
    shard    INTEGER NOT NULL DEFAULT 0,
    actions  INTEGER NOT NULL DEFAULT 0,
    creates  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (inbox_id, day, shard)
);

-- The resolution events, in id order, for `GET /v1/events`.
CREATE INDEX decision_events_resolutions ON decision_events (id, decision_id)
    WHERE kind IN ('answered', 'declined', 'cancelled', 'expired');
