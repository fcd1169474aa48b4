-- Passkeys (WebAuthn) that the person added from their feed, per inbox: an approval whose
-- policy rule asks for a step-up counts an Allow only with an assertion of one of them.
-- Same conventions as 0001: ids uuid, times timestamptz; binary values base64url text.

CREATE TABLE passkeys (
    credential_id text PRIMARY KEY,
    inbox_id      uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    -- The P-256 public key, SEC1 uncompressed point.
    public_key    text NOT NULL,
    -- The authenticator's signature counter as last seen (0 for authenticators without one).
    sign_count    bigint NOT NULL,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz
);
CREATE INDEX passkeys_inbox ON passkeys (inbox_id);

-- Challenges are stateless (an HMAC with a time); each is recorded here once answered so it
-- counts only once. Rows past their expiry are of no use and are swept as new ones come.
CREATE TABLE spent_challenges (
    challenge_hash text PRIMARY KEY,
    expires_at     timestamptz NOT NULL
);
CREATE INDEX spent_challenges_expiry ON spent_challenges (expires_at);
