//! An inbox's people and the links they answer from, for tests that answer as one of them.

use sayso::domain::people::Person;
use sayso::domain::{Decision, PersonChannel};
use uuid::Uuid;

use super::server::TestServer;

/// Adds people named `names` to the server's default inbox.
pub async fn add_people(srv: &TestServer, names: &[&str]) -> Vec<Person> {
    let mut added = Vec::new();
    for name in names {
        added.push(srv.add_person(name).await);
    }
    added
}

/// The decision `id` as stored.
pub async fn stored(srv: &TestServer, id: &str) -> Decision {
    let id = Uuid::parse_str(id).unwrap();
    srv.svc
        .store()
        .decision(None, id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no decision {id}"))
}

/// The link that answers the decision `id` as the person `person` from their feed.
pub async fn feed_link(srv: &TestServer, id: &str, person: Uuid) -> String {
    let d = stored(srv, id).await;
    srv.svc.approve_url(&d, PersonChannel::Feed, person)
}

/// [`feed_link`] of the inbox's own person (the one every inbox starts with, whose id is
/// the inbox's).
pub async fn own_feed_link(srv: &TestServer, id: &str) -> String {
    let d = stored(srv, id).await;
    srv.svc.approve_url(&d, PersonChannel::Feed, d.inbox_id)
}
