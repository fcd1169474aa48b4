-- Standing allowances: a person's "Allow for 15 min / 1 hour / until 09:00" on a tool
-- approval, which lets the same kind of call through without asking until `until`.
-- Same conventions as 0001: ids TEXT, times INTEGER milliseconds.
--
-- One per decision (the answer that made it), so answering again never extends or widens
-- one. What it covers is its scope: the inbox, harness, project, tool and policy rule of
-- the approval (rule NULL: a call no rule matched). The session it was given in is kept to
-- show, not matched. A revoked one is deleted; an ended one is deleted by the expiry sweep
-- (it stops counting at `until` whatever the sweep does).
CREATE TABLE allowances (
    id          TEXT PRIMARY KEY NOT NULL,
    inbox_id    TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    decision_id TEXT NOT NULL UNIQUE REFERENCES decisions (id) ON DELETE CASCADE,
    person_id   TEXT,
    person      TEXT,
    channel     TEXT NOT NULL,
    harness     TEXT NOT NULL,
    project     TEXT,
    tool_name   TEXT NOT NULL,
    rule        TEXT,
    session_id  TEXT,
    created_at  INTEGER NOT NULL,
    until       INTEGER NOT NULL
);
CREATE INDEX allowances_scope ON allowances (inbox_id, harness, tool_name, until);
CREATE INDEX allowances_until ON allowances (until);
