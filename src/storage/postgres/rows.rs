//! The rows the PostgreSQL queries read (uuid, timestamptz, jsonb), each converted to the
//! shared model through `crate::storage::rows`.

use serde_json::Value;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::inbox::Inbox;
use crate::domain::outbox::{Channel, MessageStatus, OutboxMessage, Purpose, Route};
use crate::domain::{Decision, EventKind, OutcomeSource, Status};
use crate::storage::StoreError;
use crate::storage::rows::{self, DecisionColumns, MessageColumns};

#[derive(sqlx::FromRow)]
pub(super) struct InboxRow {
    pub(super) id: Uuid,
    pub(super) name: String,
    pub(super) created_at: OffsetDateTime,
    #[sqlx(flatten)]
    pub(super) channels: rows::ChannelsRow,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id,
            name: r.name,
            created_at: r.created_at,
            channels: r.channels.into(),
            key: None,
        }
    }
}

#[derive(sqlx::FromRow, Clone)]
pub(super) struct DecisionRow {
    pub(super) id: Uuid,
    pub(super) inbox_id: Uuid,
    pub(super) spec: Json<Value>,
    pub(super) status: Status,
    pub(super) outcome: Option<Json<Value>>,
    pub(super) outcome_source: Option<OutcomeSource>,
    pub(super) custom: bool,
    pub(super) remark: Option<String>,
    pub(super) created_at: OffsetDateTime,
    pub(super) expires_at: OffsetDateTime,
    pub(super) resolved_at: Option<OffsetDateTime>,
    pub(super) has_image: bool,
    pub(super) answered_via: Option<String>,
    pub(super) answered_device: Option<Uuid>,
    pub(super) answers: Json<Value>,
    pub(super) cancel_reason: Option<String>,
}

impl TryFrom<DecisionRow> for Decision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<Self, StoreError> {
        Decision::try_from(DecisionColumns {
            id: r.id,
            inbox_id: r.inbox_id,
            spec: r.spec.0,
            status: r.status,
            outcome: r.outcome.map(|j| j.0),
            outcome_source: r.outcome_source,
            custom: r.custom,
            remark: r.remark,
            created_at: r.created_at,
            expires_at: r.expires_at,
            resolved_at: r.resolved_at,
            has_image: r.has_image,
            answered_via: r.answered_via,
            answered_device: r.answered_device,
            answers: r.answers.0,
            cancel_reason: r.cancel_reason,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct ExistingRow {
    #[sqlx(flatten)]
    pub(super) decision: DecisionRow,
    pub(super) request_hash: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(super) struct EventRow {
    pub(super) at: OffsetDateTime,
    pub(super) kind: EventKind,
    pub(super) detail: Json<Value>,
}

#[derive(sqlx::FromRow)]
pub(super) struct NotifiedRow {
    #[sqlx(flatten)]
    pub(super) decision: DecisionRow,
    pub(super) notifications: Json<Vec<rows::NotificationJson>>,
}

#[derive(sqlx::FromRow)]
pub(super) struct NotificationRow {
    pub(super) channel: Channel,
    pub(super) status: MessageStatus,
    pub(super) detail: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(super) struct MessageRow {
    pub(super) id: Uuid,
    /// NULL for a notice about no decision.
    pub(super) decision_id: Option<Uuid>,
    #[sqlx(rename = "channel")]
    pub(super) route: Route,
    pub(super) purpose: Purpose,
    pub(super) payload: Json<Value>,
    pub(super) status: MessageStatus,
    pub(super) attempts: i32,
    pub(super) created_at: OffsetDateTime,
    pub(super) give_up_at: OffsetDateTime,
    pub(super) last_error: Option<String>,
    pub(super) person: String,
}

impl TryFrom<MessageRow> for OutboxMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        OutboxMessage::try_from(MessageColumns {
            id: r.id,
            decision_id: r.decision_id.unwrap_or(Uuid::nil()),
            route: r.route,
            purpose: r.purpose,
            payload: r.payload.0,
            status: r.status,
            attempts: i64::from(r.attempts),
            created_at: r.created_at,
            give_up_at: r.give_up_at,
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
