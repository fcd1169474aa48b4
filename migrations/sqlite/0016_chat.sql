-- Chat channels (docs/CHANNELS.md): a person's Slack user, Matrix user and Telegram chat, the
-- messages each ask was posted as (so they are edited in place once the decision settles,
-- and a reply or reaction finds its decision), and the inbound requests already taken (so a
-- replayed press changes nothing). Same conventions as 0001: ids TEXT, times INTEGER milliseconds.

ALTER TABLE people ADD COLUMN slack_user TEXT;
ALTER TABLE people ADD COLUMN matrix_user TEXT;
ALTER TABLE people ADD COLUMN telegram_chat TEXT;
-- One platform user is one person of an inbox: an answer from them counts as that person.
CREATE UNIQUE INDEX people_slack ON people (inbox_id, slack_user) WHERE slack_user IS NOT NULL;
CREATE UNIQUE INDEX people_matrix ON people (inbox_id, matrix_user) WHERE matrix_user IS NOT NULL;
CREATE UNIQUE INDEX people_telegram ON people (inbox_id, telegram_chat) WHERE telegram_chat IS NOT NULL;

CREATE TABLE chat_posts (
    channel      TEXT NOT NULL CHECK (channel IN ('slack', 'matrix', 'telegram')),
    -- Where it was posted (a Slack channel, a Matrix room, a Telegram chat) and the message
    -- there (a Slack ts, a Matrix event id, a Telegram message id).
    conversation TEXT NOT NULL,
    message      TEXT NOT NULL,
    decision_id  TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    person_id    TEXT NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (channel, conversation, message)
);
CREATE INDEX chat_posts_decision ON chat_posts (decision_id);

CREATE TABLE chat_seen (
    key  TEXT PRIMARY KEY NOT NULL,
    at   INTEGER NOT NULL
);
CREATE INDEX chat_seen_at ON chat_seen (at);

-- An answer may come from a chat: answered_via takes the three channels. The constraint is
-- edited in place the way 0010 explains; the count checked at the end fails the migration
-- unless the text was found.
PRAGMA writable_schema = ON;

UPDATE sqlite_schema
SET sql = replace(sql,
    'OR answered_via = ''ntfy'' OR answered_via = ''email'' OR answered_via = ''api'')',
    'OR answered_via = ''ntfy'' OR answered_via = ''email'' OR answered_via = ''api''
        OR answered_via = ''slack'' OR answered_via = ''matrix'' OR answered_via = ''telegram'')')
WHERE type = 'table' AND name = 'decisions';

PRAGMA schema_version = 10016;
PRAGMA writable_schema = RESET;

CREATE TEMP TABLE answered_via_rewritten (n INTEGER CHECK (n = 1));
INSERT INTO answered_via_rewritten
SELECT (sql LIKE '%answered_via = ''telegram''%')
FROM sqlite_schema WHERE type = 'table' AND name = 'decisions';
DROP TABLE answered_via_rewritten;
