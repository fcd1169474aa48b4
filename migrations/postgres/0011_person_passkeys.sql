-- Passkeys belong to a person, not to the inbox: a step-up Allow counts only with a passkey
-- of the person answering, and a person with a passkey adds another only with it. Same
-- conventions as 0001: ids uuid, times timestamptz.

ALTER TABLE passkeys ADD COLUMN person_id uuid REFERENCES people (id) ON DELETE CASCADE;
-- The browser a passkey was added from (its User-Agent, cut short), for telling them apart.
ALTER TABLE passkeys ADD COLUMN user_agent text;

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
ALTER TABLE passkeys ALTER COLUMN person_id SET NOT NULL;
CREATE INDEX passkeys_person ON passkeys (person_id);

-- A notice to a person that is about no decision (a passkey was added to them) is an outbox
-- message without a decision.
ALTER TABLE outbox ALTER COLUMN decision_id DROP NOT NULL;
