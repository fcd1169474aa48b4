-- The partial index of resolution events, its condition written as comparisons. SQLite
-- evaluates `kind IN (four constants)` by building a temporary index of the four, and every
-- insert into decision_events evaluates the condition of each partial index: so every event,
-- the `created` event of each create among them, built and dropped that index (a B-tree
-- opened, four inserts, closed). The same set as comparisons costs four string compares.
-- A query uses the index only when its WHERE holds this same expression (events.rs).
DROP INDEX decision_events_resolutions;
CREATE INDEX decision_events_resolutions ON decision_events (id, decision_id)
    WHERE kind = 'answered' OR kind = 'declined' OR kind = 'cancelled' OR kind = 'expired';
