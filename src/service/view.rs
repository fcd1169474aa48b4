//! The JSON shapes an agent reads: the Decision and the AskHandle (DESIGN.md §2).

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::answer_text::answer_text;
use crate::domain::{Decision, Kind, NotificationState, OutcomeSource, Status};

/// A decision as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionView {
    pub decision_id: Uuid,
    pub kind: Kind,
    pub question: String,
    pub project: Option<String>,
    pub status: Status,
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    pub custom: bool,
    pub remark: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub answered_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    pub web_url: String,
    pub metadata: Map<String, Value>,
    pub answer_text: String,
    pub notifications: Vec<NotificationState>,
}

impl DecisionView {
    pub fn new(d: &Decision, web_url: String, notifications: Vec<NotificationState>) -> Self {
        DecisionView {
            decision_id: d.id,
            kind: d.kind(),
            question: d.spec.question.clone(),
            project: d.spec.project.clone(),
            status: d.status,
            outcome: d.outcome.clone(),
            outcome_source: d.outcome_source,
            custom: d.custom,
            remark: d.remark.clone(),
            answered_at: d.resolved_at,
            created_at: d.created_at,
            expires_at: d.expires_at,
            web_url,
            metadata: d.spec.metadata.clone(),
            answer_text: answer_text(d),
            notifications,
        }
    }
}

/// What a create returns: enough to wait for the answer and to show the person the link.
#[derive(Debug, Clone, Serialize)]
pub struct AskHandle {
    pub decision_id: Uuid,
    pub web_url: String,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    pub warnings: Vec<String>,
}
