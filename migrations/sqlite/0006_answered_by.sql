-- Which way a decision was resolved (the audit trail, and the hook's "Allow for this
-- session", which counts only the person's own channels), and on which bound device.
ALTER TABLE decisions ADD COLUMN answered_via TEXT
    CHECK (answered_via IN ('link', 'feed', 'push', 'ntfy', 'email', 'api'));
ALTER TABLE decisions ADD COLUMN answered_device TEXT;

-- Browsers that opened an inbox's feed link: their cookie names a row here, and lets them
-- open the feed at /inbox without the link. Deleting a row unbinds the device.
CREATE TABLE devices (
    id         TEXT PRIMARY KEY NOT NULL,
    inbox_id   TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
);
CREATE INDEX devices_inbox ON devices (inbox_id);
