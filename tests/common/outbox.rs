//! Outbox messages as the worker hands them to a courier, for tests that call a courier
//! themselves.

use sayso::courier::{Courier, Delivering, Delivery};
use sayso::domain::Decision;
use sayso::domain::inbox::{Inbox, InboxChannels};
use sayso::domain::outbox::{MessageStatus, OutboxMessage, Purpose, Route};
use sayso::service::DecisionView;
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::db::SqliteTestDb;
use super::server::{TestServer, fresh_server};

/// A server on a fresh SQLite database and its inbox `default`, whose messages the test
/// hands a courier itself.
pub struct Fixture {
    pub srv: TestServer,
    pub inbox: Inbox,
    _db: SqliteTestDb,
}

impl Fixture {
    pub async fn start() -> Fixture {
        let (db, srv) = fresh_server().await;
        let inbox = srv.default_inbox().await;
        Fixture {
            srv,
            inbox,
            _db: db,
        }
    }

    /// The inbox's decision `id`, as stored.
    pub async fn decision(&self, id: Uuid) -> Decision {
        self.srv.svc.get_decision(&self.inbox, id).await.unwrap()
    }

    /// Hands `message` about `d` (seen as `view`) to `courier` as the outbox worker does:
    /// to the inbox's `channels`, for no one person, in UTC.
    pub async fn deliver(
        &self,
        courier: &impl Courier,
        message: &OutboxMessage,
        d: &Decision,
        view: &DecisionView,
        channels: &InboxChannels,
    ) -> Delivery {
        let web_url = self.srv.svc.web_url(d);
        courier
            .deliver(&Delivering {
                message,
                decision: d,
                view,
                inbox: &self.inbox,
                person: None,
                channels,
                zone: &sayso::render::Zone::utc(),
                web_url: &web_url,
                public_url: &self.srv.base,
                outbox: &self.srv.svc.outbox(),
            })
            .await
    }
}

/// The first try on `route` of the message for `purpose` about the decision `decision_id`,
/// to the inbox's own person, made at `created_at` and given up at `give_up_at`.
pub fn first_try(
    decision_id: Uuid,
    route: Route,
    purpose: Purpose,
    created_at: OffsetDateTime,
    give_up_at: OffsetDateTime,
) -> OutboxMessage {
    OutboxMessage {
        id: Uuid::now_v7(),
        decision_id,
        route,
        purpose,
        payload: json!({}),
        status: MessageStatus::Pending,
        attempts: 1,
        created_at,
        give_up_at,
        last_error: None,
        person: None,
    }
}

/// Checks `result`, a delivery the receiver answered with `status`: to be tried again when
/// `retried`, failed for good otherwise.
pub fn assert_retried_or_failed(status: u16, retried: bool, result: &Delivery) {
    if retried {
        assert!(matches!(result, Delivery::Retry(_)), "{status}: {result:?}");
    } else {
        assert!(
            matches!(result, Delivery::Failed(_)),
            "{status}: {result:?}"
        );
    }
}
