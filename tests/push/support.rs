//! The sayso side: a server, its feed link, and handing the push channel one message.

use reqwest::StatusCode;
use sayso::courier::{Courier, Delivering, Delivery};
use sayso::domain::Decision;
use sayso::domain::inbox::InboxChannels;
use sayso::domain::outbox::{OutboxMessage, Purpose, Route};
use sayso::notify::push::{PushNotice, WebPushChannel};
use sayso::storage::Store;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::common;
use crate::common::outbox::first_try;
use crate::common::server::TestServer;

pub const SUBJECT: &str = "mailto:ops@example.com";

pub async fn feed_token(srv: &TestServer) -> String {
    let inbox = srv.default_inbox().await;
    srv.svc.tokens().feed_token(inbox.id)
}

pub async fn decision(srv: &TestServer, id: &str) -> Decision {
    let id = Uuid::parse_str(id).unwrap();
    srv.svc
        .store()
        .decision(None, id)
        .await
        .unwrap()
        .expect("the decision exists")
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

/// Hands one message about `d` to the channel, as the outbox worker would.
pub async fn deliver(
    srv: &TestServer,
    channel: &WebPushChannel,
    d: &Decision,
    purpose: &str,
) -> Delivery {
    let store = srv.svc.store();
    let view = srv.svc.view(d).await.unwrap();
    let inbox = store.inbox_by_id(d.inbox_id).await.unwrap().unwrap();
    let person = store.person(d.inbox_id).await.unwrap().unwrap();
    let msg = message(d, purpose);
    let channels = InboxChannels::default();
    let web_url = srv.svc.web_url(d);
    channel
        .deliver(&Delivering {
            message: &msg,
            decision: d,
            view: &view,
            inbox: &inbox,
            person: Some(&person),
            channels: &channels,
            zone: &sayso::render::Zone::utc(),
            web_url: &web_url,
            public_url: &srv.base,
            outbox: &srv.svc.outbox(),
        })
        .await
}

/// The notice the channel builds for a message about `d`.
pub async fn notice(srv: &TestServer, d: &Decision, purpose: &str) -> PushNotice {
    let store = srv.svc.store();
    let view = srv.svc.view(d).await.unwrap();
    let inbox = store.inbox_by_id(d.inbox_id).await.unwrap().unwrap();
    let person = store.person(d.inbox_id).await.unwrap().unwrap();
    let msg = message(d, purpose);
    let channels = InboxChannels::default();
    let web_url = srv.svc.web_url(d);
    PushNotice::for_delivery(
        &Delivering {
            message: &msg,
            decision: d,
            view: &view,
            inbox: &inbox,
            person: Some(&person),
            channels: &channels,
            zone: &sayso::render::Zone::utc(),
            web_url: &web_url,
            public_url: &srv.base,
            outbox: &srv.svc.outbox(),
        },
        OffsetDateTime::now_utc(),
    )
    .expect("something to send")
}

/// Whether this build's store keeps push subscriptions; says SKIPPED when it does not.
pub async fn store_keeps_subscriptions(store: &dyn Store, test: &str) -> bool {
    match store.person(Uuid::nil()).await {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIPPED {test}: the store does not keep push subscriptions yet ({e})");
            false
        }
    }
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
