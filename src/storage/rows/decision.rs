//! A decision's rows as both stores read them: the decision, its events and its
//! notification states.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::columns::{At, Id};
use crate::domain::outbox::{Channel, MessageStatus};
use crate::domain::{
    AnswerChannel, AnsweredBy, CancelReason, Decision, DecisionEvent, DecisionSpec, EventKind,
    Kind, NotificationState, OutcomeSource, Status,
};
use crate::storage::StoreError;

/// The columns of a decision (`decision_columns!` in each store). Its JSON columns come as
/// sqlx decodes them (`Value`) or as the text SQLite stores (`&str`, read without sqlx by
/// `sqlite/readers.rs`), parsed once into the domain's types either way.
#[derive(sqlx::FromRow, Clone)]
pub(in crate::storage) struct DecisionRow<J = Value> {
    pub id: Id,
    pub inbox_id: Id,
    pub spec: J,
    pub status: Status,
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    pub custom: bool,
    pub remark: Option<String>,
    pub created_at: At,
    pub expires_at: At,
    pub resolved_at: Option<At>,
    pub has_image: bool,
    pub answered_via: Option<String>,
    pub answered_device: Option<Id>,
    /// The JSON array of `AnswerRecord`s.
    pub answers: J,
    pub cancel_reason: Option<String>,
}

/// A stored JSON column, parsed into what it holds.
pub(in crate::storage) trait StoredJson {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T>;
}

impl StoredJson for Value {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T> {
        serde_json::from_value(self)
    }
}

impl StoredJson for &str {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T> {
        serde_json::from_str(self)
    }
}

impl<J: StoredJson> TryFrom<DecisionRow<J>> for Decision {
    type Error = StoreError;

    fn try_from(r: DecisionRow<J>) -> Result<Self, StoreError> {
        let id = r.id.0;
        let stored = |what: &str, e: &dyn std::fmt::Display| {
            StoreError::Other(format!("decision {id}: stored {what}: {e}"))
        };
        let spec: DecisionSpec = r.spec.parse().map_err(|e| stored("spec", &e))?;
        let answered_by = match r.answered_via.as_deref() {
            None => None,
            Some(via) => Some(AnsweredBy::new(
                AnswerChannel::parse(via)
                    .ok_or_else(|| stored("answered_via", &format_args!("{via:?}")))?,
                r.answered_device.map(Into::into),
            )),
        };
        let answers = r.answers.parse().map_err(|e| stored("answers", &e))?;
        let cancel_reason = match r.cancel_reason.as_deref() {
            None => None,
            Some(c) => Some(
                CancelReason::parse(c)
                    .ok_or_else(|| stored("cancel_reason", &format_args!("{c:?}")))?,
            ),
        };
        Ok(Decision {
            answers,
            id,
            inbox_id: r.inbox_id.0,
            spec,
            status: r.status,
            outcome: r.outcome,
            outcome_source: r.outcome_source,
            custom: r.custom,
            remark: r.remark,
            created_at: r.created_at.0,
            expires_at: r.expires_at.0,
            resolved_at: r.resolved_at.map(Into::into),
            has_image: r.has_image,
            answered_by,
            cancel_reason,
        })
    }
}

/// A decision followed by its notification states, aggregated into a JSON array.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct NotifiedRow {
    #[sqlx(flatten)]
    pub decision: DecisionRow,
    pub notifications: Json<Vec<NotificationRow>>,
}

/// A decision a create found already made with the same idempotency key, and the hash of
/// the request that made it.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct ExistingRow {
    #[sqlx(flatten)]
    pub decision: DecisionRow,
    pub request_hash: Option<String>,
}

/// A decision the expiry sweep expired.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct ExpiredRow {
    pub id: Id,
    pub kind: Kind,
    pub expires_at: At,
    pub outcome: Option<Value>,
}

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct EventRow {
    pub at: At,
    pub kind: EventKind,
    pub detail: Value,
}

impl From<EventRow> for DecisionEvent {
    fn from(r: EventRow) -> Self {
        DecisionEvent {
            at: r.at.0,
            kind: r.kind,
            detail: r.detail,
        }
    }
}

/// A notification state: a row of `notifications`, or an element of the JSON array the
/// stores aggregate next to its decision.
#[derive(Debug, sqlx::FromRow, serde::Deserialize)]
pub(in crate::storage) struct NotificationRow {
    channel: Channel,
    status: MessageStatus,
    detail: Option<String>,
}

impl From<NotificationRow> for NotificationState {
    fn from(n: NotificationRow) -> Self {
        NotificationState {
            channel: n.channel,
            status: n.status,
            detail: n.detail,
        }
    }
}

/// A row of a read over several decisions at once, with the decision it belongs to.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct OfDecision<Row> {
    decision_id: Id,
    #[sqlx(flatten)]
    row: Row,
}

impl<Row> OfDecision<Row> {
    /// The decision's id, and the row as the domain's type.
    pub fn into_pair<T: From<Row>>(self) -> (Uuid, T) {
        (self.decision_id.0, self.row.into())
    }
}
