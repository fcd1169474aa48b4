//! The rows of what a decision leaves behind, as both stores read them: standing allowances
//! and their uses (migration 0018), chat posts, receipts.

use serde_json::Value;

use super::columns::{At, Id};
use crate::domain::AnswerChannel;
use crate::domain::allowance::uses::AllowanceUse;
use crate::domain::allowance::{Allowance, Scope};
use crate::domain::chat::ChatPost;
use crate::domain::outbox::Channel;
use crate::storage::{StoreError, StoredReceipt};

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct AllowanceRow {
    id: Id,
    inbox_id: Id,
    decision_id: Id,
    person_id: Option<Id>,
    person: Option<String>,
    channel: String,
    harness: String,
    project: Option<String>,
    tool_name: String,
    rule: Option<String>,
    session_id: Option<String>,
    created_at: At,
    until: At,
}

impl TryFrom<AllowanceRow> for Allowance {
    type Error = StoreError;

    fn try_from(r: AllowanceRow) -> Result<Self, StoreError> {
        Ok(Allowance {
            id: r.id.0,
            inbox_id: r.inbox_id.0,
            decision_id: r.decision_id.0,
            person_id: r.person_id.map(Into::into),
            person: r.person,
            channel: AnswerChannel::parse(&r.channel).ok_or_else(|| {
                StoreError::Other(format!("unknown answer channel {:?}", r.channel))
            })?,
            scope: Scope {
                harness: r.harness,
                project: r.project,
                tool_name: r.tool_name,
                rule: r.rule,
            },
            session_id: r.session_id,
            created_at: r.created_at.0,
            until: r.until.0,
        })
    }
}

/// An allowance's use: the `allowance_used` event that records it.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct UseRow {
    id: i64,
    allowance_id: Id,
    decision_id: Id,
    at: At,
    detail: Value,
}

impl TryFrom<UseRow> for AllowanceUse {
    type Error = StoreError;

    fn try_from(r: UseRow) -> Result<Self, StoreError> {
        Ok(AllowanceUse {
            id: r.id,
            allowance_id: r.allowance_id.0,
            decision_id: r.decision_id.0,
            at: r.at.0,
            call: serde_json::from_value(r.detail)
                .map_err(|e| StoreError::Other(format!("a stored allowance use: {e}")))?,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct PostRow {
    channel: String,
    conversation: String,
    message: String,
    decision_id: Id,
    person_id: Id,
}

impl TryFrom<PostRow> for ChatPost {
    type Error = StoreError;

    fn try_from(r: PostRow) -> Result<Self, StoreError> {
        Ok(ChatPost {
            decision: r.decision_id.0,
            person: r.person_id.0,
            channel: Channel::parse(&r.channel)
                .ok_or_else(|| StoreError::Other(format!("unknown chat {:?}", r.channel)))?,
            conversation: r.conversation,
            message: r.message,
        })
    }
}

/// The columns of a receipt (`receipt_columns!` in each store).
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct ReceiptRow {
    inbox_id: Id,
    seq: i64,
    decision_id: Id,
    event_id: i64,
    receipt: String,
    signature: String,
    sha256: String,
}

impl From<ReceiptRow> for StoredReceipt {
    fn from(r: ReceiptRow) -> Self {
        StoredReceipt {
            inbox_id: r.inbox_id.0,
            seq: r.seq,
            decision_id: r.decision_id.0,
            event_id: r.event_id,
            receipt: r.receipt,
            signature: r.signature,
            sha256: r.sha256,
        }
    }
}
