-- Ids are uuid (UUIDv7 for inboxes and decisions, so they sort by creation); times are
-- timestamptz kept to the millisecond; JSON is jsonb.

CREATE TABLE settings (
    name  text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE inboxes (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    email      text,
    created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    inbox_id   uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    key_hash   text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX api_keys_inbox ON api_keys (inbox_id);

CREATE TABLE decisions (
    id              uuid PRIMARY KEY,
    inbox_id        uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('bool', 'choose', 'text', 'form', 'todo')),
    question        text NOT NULL,
    project         text,
    -- The whole DecisionSpec; the columns above and default_outcome are copies for
    -- filtering and for expiry in SQL.
    spec            jsonb NOT NULL,
    default_outcome jsonb,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'answered', 'declined', 'expired', 'cancelled')),
    outcome         jsonb,
    outcome_source  text CHECK (outcome_source IN ('human', 'default')),
    custom          boolean NOT NULL DEFAULT false,
    remark          text,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    resolved_at     timestamptz,
    idempotency_key text,
    request_hash    text,
    has_image       boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX decisions_idempotency ON decisions (inbox_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX decisions_inbox ON decisions (inbox_id, id);
CREATE INDEX decisions_due ON decisions (expires_at) WHERE status = 'pending';

CREATE TABLE decision_images (
    decision_id  uuid PRIMARY KEY REFERENCES decisions (id) ON DELETE CASCADE,
    content_type text NOT NULL,
    bytes        bytea NOT NULL
);

CREATE TABLE decision_events (
    id          bigserial PRIMARY KEY,
    decision_id uuid NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    kind        text NOT NULL,
    detail      jsonb NOT NULL
);
CREATE INDEX decision_events_decision ON decision_events (decision_id, at, id);

CREATE TABLE notifications (
    decision_id uuid NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
    channel     text NOT NULL,
    status      text NOT NULL,
    detail      text,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (decision_id, channel)
);
