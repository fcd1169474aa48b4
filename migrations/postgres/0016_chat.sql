-- Chat channels (docs/CHANNELS.md): a person's Slack user, Matrix user and Telegram chat, the
-- messages each ask was posted as (so they are edited in place once the decision settles,
-- and a reply or reaction finds its decision), and the inbound requests already taken (so a
-- replayed press changes nothing). Same conventions as 0001: ids uuid, times timestamptz.

ALTER TABLE people ADD COLUMN slack_user text;
ALTER TABLE people ADD COLUMN matrix_user text;
ALTER TABLE people ADD COLUMN telegram_chat text;
-- One platform user is one person of an inbox: an answer from them counts as that person.
CREATE UNIQUE INDEX people_slack ON people (inbox_id, slack_user) WHERE slack_user IS NOT NULL;
CREATE UNIQUE INDEX people_matrix ON people (inbox_id, matrix_user) WHERE matrix_user IS NOT NULL;
CREATE UNIQUE INDEX people_telegram ON people (inbox_id, telegram_chat) WHERE telegram_chat IS NOT NULL;

CREATE TABLE chat_posts (
    channel      text NOT NULL CHECK (channel IN ('slack', 'matrix', 'telegram')),
    -- Where it was posted (a Slack channel, a Matrix room, a Telegram chat) and the message
    -- there (a Slack ts, a Matrix event id, a Telegram message id).
    conversation text NOT NULL,
    message      text NOT NULL,
    decision_id  uuid NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    person_id    uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (channel, conversation, message)
);
CREATE INDEX chat_posts_decision ON chat_posts (decision_id);

CREATE TABLE chat_seen (
    key  text PRIMARY KEY NOT NULL,
    at   timestamptz NOT NULL
);
CREATE INDEX chat_seen_at ON chat_seen (at);

-- An answer may come from a chat: answered_via takes the three channels.
ALTER TABLE decisions DROP CONSTRAINT decisions_answered_via_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_answered_via_check
    CHECK (answered_via IN ('link', 'feed', 'push', 'ntfy', 'email', 'api', 'slack', 'matrix',
                            'telegram'));
