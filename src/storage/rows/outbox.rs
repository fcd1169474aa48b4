//! An outbox message's row as both stores read it (`message_columns!` in each store).

use serde_json::Value;
use uuid::Uuid;

use super::columns::{At, Id, Int};
use crate::domain::outbox::{MessageStatus, OutboxMessage, Purpose, Route};
use crate::storage::StoreError;

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct MessageRow {
    pub id: Id,
    /// NULL for a notice about no decision.
    pub decision_id: Option<Id>,
    #[sqlx(rename = "channel")]
    pub route: Route,
    pub purpose: Purpose,
    pub payload: Value,
    pub status: MessageStatus,
    pub attempts: Int,
    pub created_at: At,
    pub next_attempt_at: At,
    pub give_up_at: At,
    pub last_error: Option<String>,
    /// A hyphenated id, or '' for none.
    pub person: String,
}

impl TryFrom<MessageRow> for OutboxMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        let id = r.id.0;
        let attempts = u32::try_from(r.attempts.0)
            .map_err(|_| StoreError::Other(format!("message {id}: attempts {}", r.attempts.0)))?;
        Ok(OutboxMessage {
            id,
            decision_id: r.decision_id.map_or(Uuid::nil(), Into::into),
            route: r.route,
            purpose: r.purpose,
            payload: r.payload,
            status: r.status,
            attempts,
            created_at: r.created_at.0,
            give_up_at: r.give_up_at.0,
            last_error: r.last_error,
            person: person_of_column(&r.person)
                .map_err(|e| StoreError::Other(format!("message {id}: person: {e}")))?,
        })
    }
}

/// An outbox message's `person` column: the person's hyphenated id, or '' for none.
pub(in crate::storage) fn person_column(person: Option<Uuid>) -> String {
    person
        .map(|p| p.hyphenated().to_string())
        .unwrap_or_default()
}

fn person_of_column(text: &str) -> Result<Option<Uuid>, uuid::Error> {
    if text.is_empty() {
        Ok(None)
    } else {
        Uuid::parse_str(text).map(Some)
    }
}
