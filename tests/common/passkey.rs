//! A passkey put straight into the store, for tests that need only that a person has one
//! (what the pages offer then), not one that signs.

use sayso::domain::people::Person;
use sayso::domain::webauthn::StoredPasskey;
use time::OffsetDateTime;

use super::server::TestServer;

/// Gives `person` a made-up passkey, added now and never used.
pub async fn give_passkey(srv: &TestServer, person: &Person) {
    let passkey = StoredPasskey {
        credential_id: "AAAA".into(),
        public_key: "BBBB".into(),
        sign_count: 0,
        added_at: OffsetDateTime::now_utc(),
        last_used_at: None,
        user_agent: None,
    };
    srv.svc.store().add_passkey(person, &passkey).await.unwrap();
}
