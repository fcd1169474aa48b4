//! The sayso side: a server, its feed link, and handing the push channel one message.

use reqwest::StatusCode;
use sayso::courier::{Courier, Delivering, Delivery};
use sayso::domain::Decision;
use sayso::domain::inbox::{Inbox, InboxChannels, PushSubscription};
use sayso::domain::outbox::{OutboxMessage, Purpose, Route};
use sayso::domain::people::Person;
use sayso::notify::push::{PushNotice, WebPushChannel};
use sayso::render::Zone;
use sayso::service::{DecisionView, Outbox};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::common;
use crate::common::db::SqliteTestDb;
use crate::common::outbox::first_try;
use crate::common::people::stored;
use crate::common::server::{TestServer, fresh_server, s};

pub const SUBJECT: &str = "mailto:ops@example.com";

pub async fn feed_token(srv: &TestServer) -> String {
    let inbox = srv.default_inbox().await;
    srv.svc.tokens().feed_token(inbox.id)
}

pub fn message(d: &Decision, purpose: &str) -> OutboxMessage {
    let now = OffsetDateTime::now_utc();
    first_try(
        d.id,
        Route::Push,
        Purpose::parse(purpose).expect("a purpose"),
        now,
        d.expires_at,
    )
}

/// What a delivery of one message about a decision borrows, gathered as the outbox worker
/// does: to the inbox's own person, in UTC, at the decision's answer link.
pub struct Parts {
    view: DecisionView,
    inbox: Inbox,
    person: Person,
    msg: OutboxMessage,
    channels: InboxChannels,
    zone: Zone,
    web_url: String,
    public_url: String,
    outbox: Outbox,
}

impl Parts {
    /// The parts of the message for `purpose` about `d`.
    pub async fn gather(srv: &TestServer, d: &Decision, purpose: &str) -> Parts {
        let store = srv.svc.store();
        Parts {
            view: srv.svc.view(d).await.unwrap(),
            inbox: store.inbox_by_id(d.inbox_id).await.unwrap().unwrap(),
            person: store.person(d.inbox_id).await.unwrap().unwrap(),
            msg: message(d, purpose),
            channels: InboxChannels::default(),
            zone: Zone::utc(),
            web_url: srv.svc.web_url(d),
            public_url: srv.base.clone(),
            outbox: srv.svc.outbox(),
        }
    }

    pub fn delivering<'a>(&'a self, d: &'a Decision) -> Delivering<'a> {
        Delivering {
            message: &self.msg,
            decision: d,
            view: &self.view,
            inbox: &self.inbox,
            person: Some(&self.person),
            channels: &self.channels,
            zone: &self.zone,
            web_url: &self.web_url,
            public_url: &self.public_url,
            outbox: &self.outbox,
        }
    }
}

/// Hands one message about `d` to the channel, as the outbox worker would.
pub async fn deliver(
    srv: &TestServer,
    channel: &WebPushChannel,
    d: &Decision,
    purpose: &str,
) -> Delivery {
    let parts = Parts::gather(srv, d, purpose).await;
    channel.deliver(&parts.delivering(d)).await
}

/// The notice the channel builds for a message about `d`.
pub async fn notice(srv: &TestServer, d: &Decision, purpose: &str) -> PushNotice {
    let parts = Parts::gather(srv, d, purpose).await;
    PushNotice::for_delivery(&parts.delivering(d), OffsetDateTime::now_utc())
        .expect("something to send")
}

/// A server on a fresh database whose store keeps push subscriptions, or `None` (after
/// saying SKIPPED for `test`) when this build's store does not keep them yet.
pub async fn server_keeping_subscriptions(test: &str) -> Option<(SqliteTestDb, TestServer)> {
    let (db, srv) = fresh_server().await;
    match srv.svc.store().person(Uuid::nil()).await {
        Ok(_) => Some((db, srv)),
        Err(e) => {
            eprintln!("SKIPPED {test}: the store does not keep push subscriptions yet ({e})");
            None
        }
    }
}

/// The push subscriptions stored for the default inbox's own person.
pub async fn stored_subscriptions(srv: &TestServer) -> Vec<PushSubscription> {
    let store = srv.svc.store();
    let inbox = srv.default_inbox().await;
    let person = store.person(inbox.id).await.unwrap().unwrap();
    store.push_subscriptions(&person).await.unwrap()
}

/// A new yes/no question "Q", as stored.
pub async fn new_question(srv: &TestServer) -> Decision {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    stored(srv, s(&h, "decision_id")).await
}

pub async fn subscribe(srv: &TestServer, token: &str, body: &Value) -> (StatusCode, Value) {
    common::server::send(
        srv.client
            .post(srv.url(&format!("/inbox/{token}/push")))
            .header("sec-fetch-site", "same-origin")
            .json(body),
    )
    .await
}
