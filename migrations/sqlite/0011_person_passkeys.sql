-- Passkeys belong to a person, not to the inbox: a step-up Allow counts only with a passkey
-- of the person answering, and a person with a passkey adds another only with it. Same
-- conventions as 0001: ids TEXT, times INTEGER milliseconds.

ALTER TABLE passkeys ADD COLUMN person_id TEXT REFERENCES people (id) ON DELETE CASCADE;
-- The browser a passkey was added from (its User-Agent, cut short), for telling them apart.
ALTER TABLE passkeys ADD COLUMN user_agent TEXT;

-- Whose the passkeys already here are was never recorded. In an inbox whose only person is
-- its own, theirs. In an inbox with other people, one added once another person existed may
-- be anyone's: those are removed (the person adds theirs again from their feed, and a step-up
-- Allow tells them to). Earlier ones go to the inbox's own person like the rest.
DELETE FROM passkeys WHERE EXISTS (
    SELECT 1 FROM people p
    WHERE p.inbox_id = passkeys.inbox_id AND p.id <> passkeys.inbox_id
      AND p.created_at <= passkeys.created_at
);
UPDATE passkeys SET person_id = inbox_id;
CREATE INDEX passkeys_person ON passkeys (person_id);

-- A notice to a person that is about no decision (a passkey was added to them) is an outbox
-- message without a decision: decision_id may be NULL. Removing a NOT NULL constraint leaves
-- the file's content as it is, so this is SQLite's documented in-place change, done as in
-- 0010 (https://sqlite.org/lang_altertable.html, "making other kinds of table schema
-- changes"); the count checked at the end fails the migration unless the text was found.
PRAGMA writable_schema = ON;

UPDATE sqlite_schema
SET sql = replace(sql,
    'decision_id     TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE',
    'decision_id     TEXT REFERENCES decisions (id) ON DELETE CASCADE')
WHERE type = 'table' AND name = 'outbox';

PRAGMA schema_version = 10011;
PRAGMA writable_schema = RESET;

CREATE TEMP TABLE outbox_decision_nullable (n INTEGER CHECK (n = 1));
INSERT INTO outbox_decision_nullable
SELECT (sql LIKE '%decision_id     TEXT REFERENCES decisions%')
       - (sql LIKE '%decision_id     TEXT NOT NULL%')
FROM sqlite_schema WHERE type = 'table' AND name = 'outbox';
DROP TABLE outbox_decision_nullable;
