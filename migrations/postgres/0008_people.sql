-- People: the answerers of an inbox, each with their own feed link, devices, channels and
-- quiet hours. Same conventions as 0001: ids uuid, times timestamptz, JSON jsonb.

CREATE TABLE people (
    id          uuid PRIMARY KEY,
    inbox_id    uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    name        text NOT NULL,
    email       text,
    ntfy_url    text,
    ntfy_token  text,
    -- "22:00-07:00" in the zone quiet_tz; both NULL without quiet hours.
    quiet_hours text,
    quiet_tz    text,
    created_at  timestamptz NOT NULL,
    UNIQUE (inbox_id, name)
);

-- Every inbox had one person: its own, with the inbox's id (so the inbox's feed link is that
-- person's), name and channels.
INSERT INTO people (id, inbox_id, name, email, ntfy_url, ntfy_token, created_at)
SELECT id, id, name, email, ntfy_url, ntfy_token, created_at FROM inboxes;

-- Whose device and whose push subscription; NULL on rows older than people, which are the
-- inbox's own person's.
ALTER TABLE devices ADD COLUMN person_id uuid REFERENCES people (id) ON DELETE CASCADE;
UPDATE devices SET person_id = inbox_id;
ALTER TABLE push_subscriptions ADD COLUMN person_id uuid REFERENCES people (id) ON DELETE CASCADE;
UPDATE push_subscriptions SET person_id = inbox_id;

-- Every answer given to a decision, in order, as a JSON array of
-- {person_id, person, action, value, remark, at, channel}: one per person at most.
ALTER TABLE decisions ADD COLUMN answers jsonb NOT NULL DEFAULT '[]';

-- An outbox message to one person ('' for the agent's webhook, fan-outs, and messages
-- written before people, which go to the inbox's own person).
ALTER TABLE outbox ADD COLUMN person text NOT NULL DEFAULT '';
DROP INDEX outbox_once;
CREATE UNIQUE INDEX outbox_once ON outbox (decision_id, channel, purpose, person);

-- An inbox is made with its own person, and that person's channels are the inbox's:
-- `sayso inbox set --email` and `sayso person set` change the same thing.
CREATE FUNCTION sayso_inbox_own_person() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO people (id, inbox_id, name, email, ntfy_url, ntfy_token, created_at)
        VALUES (NEW.id, NEW.id, NEW.name, NEW.email, NEW.ntfy_url, NEW.ntfy_token, NEW.created_at);
    ELSE
        UPDATE people SET email = NEW.email, ntfy_url = NEW.ntfy_url, ntfy_token = NEW.ntfy_token
        WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER inboxes_own_person AFTER INSERT ON inboxes
    FOR EACH ROW EXECUTE FUNCTION sayso_inbox_own_person();
CREATE TRIGGER inboxes_own_person_channels AFTER UPDATE OF email, ntfy_url, ntfy_token ON inboxes
    FOR EACH ROW EXECUTE FUNCTION sayso_inbox_own_person();
