-- A create is one INSERT into decisions: these triggers do, in the same statement and so in
-- the same atomic step, what every new decision needs. SQLite lets one writer in at a time,
-- and each statement a process sends it is a round trip to its connection's thread, so a
-- create that is one statement (when it has no notifications, outbox rows or image) holds the
-- writer for the least time. PostgreSQL does the same work in the create's transaction
-- (src/storage/postgres.rs).

-- The daily quota: a create that would take the inbox past it is refused. 2 is
-- CREATE_ACTIONS (src/storage/mod.rs); a day is the UTC date of created_at, as `day_text`
-- writes it.
CREATE TRIGGER decisions_quota BEFORE INSERT ON decisions
WHEN (SELECT daily_quota FROM inboxes WHERE id = NEW.inbox_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'sayso: daily quota exceeded')
    WHERE (SELECT COALESCE(SUM(actions), 0) FROM usage_daily
           WHERE inbox_id = NEW.inbox_id
             AND day = strftime('%Y-%m-%d', NEW.created_at / 1000, 'unixepoch')) + 2
          > (SELECT daily_quota FROM inboxes WHERE id = NEW.inbox_id);
END;

-- Counts the create and keeps its `created` event. An INSERT that does nothing (a repeated
-- idempotency key) fires neither.
CREATE TRIGGER decisions_created AFTER INSERT ON decisions
BEGIN
    INSERT INTO usage_daily (inbox_id, day, shard, actions, creates)
    VALUES (NEW.inbox_id, strftime('%Y-%m-%d', NEW.created_at / 1000, 'unixepoch'), 0, 2, 1)
    ON CONFLICT (inbox_id, day, shard)
    DO UPDATE SET actions = actions + excluded.actions, creates = creates + 1;
    INSERT INTO decision_events (decision_id, at, kind, detail)
    VALUES (NEW.id, NEW.created_at, 'created', '{}');
END;
