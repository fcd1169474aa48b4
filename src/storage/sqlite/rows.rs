//! The rows the SQLite queries read: ids as hyphenated text, times as milliseconds, JSON as
//! text; each converted to the shared model through `crate::storage::rows`.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use crate::domain::inbox::Inbox;
use crate::domain::outbox::{Channel, MessageStatus, OutboxMessage, Purpose, Route};
use crate::domain::{Decision, EventKind, Kind, OutcomeSource, Status};
use crate::storage::StoreError;
use crate::storage::rows::{self, ChannelsRow, DecisionColumns, MessageColumns, from_millis};

pub(super) fn id(u: Uuid) -> Hyphenated {
    u.hyphenated()
}

#[derive(sqlx::FromRow)]
pub(super) struct InboxRow {
    pub(super) id: Hyphenated,
    pub(super) name: String,
    pub(super) created_at: i64,
    #[sqlx(flatten)]
    pub(super) channels: ChannelsRow,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id.into_uuid(),
            name: r.name,
            created_at: from_millis(r.created_at),
            channels: r.channels.into(),
            key: None,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct DecisionRow {
    pub(super) id: Hyphenated,
    pub(super) inbox_id: Hyphenated,
    pub(super) spec: Json<Value>,
    pub(super) status: Status,
    pub(super) outcome: Option<Json<Value>>,
    pub(super) outcome_source: Option<OutcomeSource>,
    pub(super) custom: bool,
    pub(super) remark: Option<String>,
    pub(super) created_at: i64,
    pub(super) expires_at: i64,
    pub(super) resolved_at: Option<i64>,
    pub(super) has_image: bool,
    pub(super) answered_via: Option<String>,
    pub(super) answered_device: Option<Hyphenated>,
    pub(super) answers: Json<Value>,
    pub(super) cancel_reason: Option<String>,
}

impl TryFrom<DecisionRow> for Decision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<Self, StoreError> {
        Decision::try_from(DecisionColumns {
            id: r.id.into_uuid(),
            inbox_id: r.inbox_id.into_uuid(),
            spec: r.spec.0,
            status: r.status,
            outcome: r.outcome.map(|j| j.0),
            outcome_source: r.outcome_source,
            custom: r.custom,
            remark: r.remark,
            created_at: from_millis(r.created_at),
            expires_at: from_millis(r.expires_at),
            resolved_at: r.resolved_at.map(from_millis),
            has_image: r.has_image,
            answered_via: r.answered_via,
            answered_device: r.answered_device.map(Hyphenated::into_uuid),
            answers: r.answers.0,
            cancel_reason: r.cancel_reason,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct NotifiedRow {
    #[sqlx(flatten)]
    pub(super) decision: DecisionRow,
    pub(super) notifications: Json<Vec<rows::NotificationJson>>,
}

#[derive(sqlx::FromRow)]
pub(super) struct ExistingRow {
    #[sqlx(flatten)]
    pub(super) decision: DecisionRow,
    pub(super) request_hash: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(super) struct ExpiredRow {
    pub(super) id: Hyphenated,
    pub(super) kind: Kind,
    pub(super) expires_at: i64,
    pub(super) outcome: Option<Json<Value>>,
}

#[derive(sqlx::FromRow)]
pub(super) struct EventRow {
    pub(super) at: i64,
    pub(super) kind: EventKind,
    pub(super) detail: Json<Value>,
}

#[derive(sqlx::FromRow)]
pub(super) struct NotificationRow {
    pub(super) channel: Channel,
    pub(super) status: MessageStatus,
    pub(super) detail: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(super) struct MessageRow {
    pub(super) id: Hyphenated,
    /// NULL for a notice about no decision.
    pub(super) decision_id: Option<Hyphenated>,
    #[sqlx(rename = "channel")]
    pub(super) route: Route,
    pub(super) purpose: Purpose,
    pub(super) payload: Json<Value>,
    pub(super) status: MessageStatus,
    pub(super) attempts: i64,
    pub(super) created_at: i64,
    pub(super) next_attempt_at: i64,
    pub(super) give_up_at: i64,
    pub(super) last_error: Option<String>,
    pub(super) person: String,
}

impl TryFrom<MessageRow> for OutboxMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        OutboxMessage::try_from(MessageColumns {
            id: r.id.into_uuid(),
            decision_id: r.decision_id.map_or(Uuid::nil(), Hyphenated::into_uuid),
            route: r.route,
            purpose: r.purpose,
            payload: r.payload.0,
            status: r.status,
            attempts: r.attempts,
            created_at: from_millis(r.created_at),
            give_up_at: from_millis(r.give_up_at),
            last_error: r.last_error,
            person: r.person,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct PushRow {
    pub(super) endpoint: String,
    pub(super) p256dh: String,
    pub(super) auth: String,
}
