-- Standing allowances: a person's "Allow for 15 min / 1 hour / until 09:00" on a tool
-- approval, which lets the same kind of call through without asking until `until`.
-- Same conventions as 0001: ids uuid, times timestamptz to the millisecond.
--
-- One per decision (the answer that made it), so answering again never extends or widens
-- one. What it covers is its scope: the inbox, harness, project, tool and policy rule of
-- the approval (rule NULL: a call no rule matched). The session it was given in is kept to
-- show, not matched. A revoked one is deleted; an ended one is deleted by the expiry sweep
-- (it stops counting at `until` whatever the sweep does).
CREATE TABLE allowances (
    id          uuid PRIMARY KEY,
    inbox_id    uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    decision_id uuid NOT NULL UNIQUE REFERENCES decisions (id) ON DELETE CASCADE,
    person_id   uuid,
    person      text,
    channel     text NOT NULL,
    harness     text NOT NULL,
    project     text,
    tool_name   text NOT NULL,
    rule        text,
    session_id  text,
    created_at  timestamptz NOT NULL,
    until       timestamptz NOT NULL
);
CREATE INDEX allowances_scope ON allowances (inbox_id, harness, tool_name, until);
CREATE INDEX allowances_until ON allowances (until);
