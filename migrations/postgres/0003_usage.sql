-- Usage counters and the optional daily quota; an index for the event stream of resolutions.

-- Actions an inbox may use per UTC day; NULL for no limit.
ALTER TABLE inboxes ADD COLUMN daily_quota bigint;

-- Actions and creates per inbox and UTC day. A day may have several rows (shards) so that
-- concurrent creates of an inbox without a quota do not queue on one row lock; an inbox with
-- a quota only writes shard 0, under its lock.
CREATE TABLE usage_daily (
    inbox_id uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    day      date NOT NULL,
    shard    integer NOT NULL DEFAULT 0,
    actions  bigint NOT NULL DEFAULT 0,
    creates  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (inbox_id, day, shard)
);

-- The resolution events, in id order, for `GET /v1/events`.
CREATE INDEX decision_events_resolutions ON decision_events (id, decision_id)
    WHERE kind IN ('answered', 'declined', 'cancelled', 'expired');
