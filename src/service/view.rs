//! The JSON shapes an agent reads: the Decision and the AskHandle (docs/API.md).

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::answer_text::answer_text;
use crate::domain::{AnsweredBy, Decision, Kind, NotificationState, OutcomeSource, Status};

/// A decision as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Decision, example = json!({
    "decision_id": "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c", "kind": "bool",
    "question": "Deploy v2.3 to production?", "project": "billing", "status": "answered",
    "outcome": true, "outcome_source": "human", "custom": false, "remark": "after 6pm",
    "answered_at": "2026-05-04T17:02:11Z", "created_at": "2026-05-04T16:58:40Z",
    "expires_at": "2026-05-04T17:58:40Z",
    "web_url": "https://ask.example.com/d/AZaKLnwaez6fQl0MboobLHJ1bh0mT2Q7uH1pK9dRm3c0xNqA",
    "metadata": {"run": 4711},
    "answer_text": "The user answered \"Deploy v2.3 to production?\" with \"yes\". Remark: \"after 6pm\".",
    "notifications": [{"channel": "push", "status": "sent", "detail": null}],
    "answered_by": {"channel": "link", "device_id": null}
}))]
pub struct DecisionView {
    pub decision_id: Uuid,
    pub kind: Kind,
    pub question: String,
    pub project: Option<String>,
    pub status: Status,
    /// By kind: `bool` true/false; `choose` the label (with `multi`, an array of labels);
    /// `text` the string; `form` an object; `todo` `"done"` or `"skipped"`; null while
    /// pending, when declined or cancelled, and when expired without a `default_outcome`.
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    /// True when the person typed their own answer ("Other") instead of picking an option.
    pub custom: bool,
    pub remark: Option<String>,
    /// The moment of resolution (for an expired decision, its `expires_at`).
    #[serde(with = "time::serde::rfc3339::option")]
    pub answered_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// The answer page, a capability URL: a plain question's to share with the person; a
    /// tool approval's only shows it (the person answers approvals from their feed or a
    /// notification, and a POST to this link is refused with `403 answer_elsewhere`).
    pub web_url: String,
    /// The create request's `metadata`, unchanged.
    pub metadata: Map<String, Value>,
    /// One plain sentence describing the outcome, to hand to a model as is.
    pub answer_text: String,
    pub notifications: Vec<NotificationState>,
    /// Which way it was answered, declined or cancelled: `channel` is `link` (the
    /// `web_url`; plain questions only), `feed`, `push`, `ntfy` or `email` (the person's
    /// own side, the only ways a tool approval is answered), or `api` (a cancel);
    /// `device_id` is the bound device that answered, when known. Null while pending and
    /// once expired.
    pub answered_by: Option<AnsweredBy>,
    /// A tool approval whose policy rule wants more than a tap for its Allow: `"passkey"`
    /// (the person's passkey). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_up: Option<crate::domain::approval::StepUp>,
    /// For a tool approval, which agent, tool and session it gates, as the person was shown
    /// (unlike `metadata`, which the asker writes as it likes). Absent for a plain question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalView>,
    /// Every answer given, in order, one per person: who (`person`, null for an answer
    /// through `web_url` from a browser bound to nobody), what (`action`, `value`,
    /// `remark`), when and which way. A decision several people must agree on gathers
    /// them until its rule is met or someone says no.
    pub answers: Vec<crate::domain::people::AnswerRecord>,
    /// Who is asked and how many must agree, when the request said: `approvers`,
    /// `required`, `escalate_after_s`, `escalate_to`, `urgent`. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub routing: Option<crate::domain::people::Routing>,
    /// How far a decision several people must agree on has come: "1 of 2 allowed: ana".
    /// Absent when one answer resolves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
}

/// What a tool approval gates.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApprovalView {
    pub harness: String,
    pub tool_name: String,
    pub session_id: Option<String>,
    /// The policy rule that put the question (`rule 2 of …/policy.json (…)`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
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
            // An approval allowed with an edited command is the person's Allow, not an
            // answer of their own: the edit is in the `answered` event (answer_text says it).
            custom: d.custom && d.spec.approval.is_none(),
            remark: d.remark.clone(),
            answered_at: d.resolved_at,
            created_at: d.created_at,
            expires_at: d.expires_at,
            web_url,
            metadata: d.spec.metadata.clone(),
            answer_text: answer_text(d),
            notifications,
            answered_by: d.answered_by,
            step_up: d.spec.approval.as_ref().and_then(|a| a.step_up),
            approval: d.spec.approval.as_ref().map(|a| ApprovalView {
                harness: a.harness.clone(),
                tool_name: a.tool_name.clone(),
                session_id: a.session_id.clone(),
                rule: a.rule.clone(),
            }),
            answers: d.answers.clone(),
            routing: d.spec.routing.clone(),
            progress: crate::domain::tally::progress(d),
        }
    }
}

/// What a create returns: enough to wait for the answer and to show the person the link.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "decision_id": "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c",
    "web_url": "https://ask.example.com/d/AZaKLnwaez6fQl0MboobLHJ1bh0mT2Q7uH1pK9dRm3c0xNqA",
    "expires_at": "2026-05-04T17:58:40Z",
    "warnings": []
}))]
pub struct AskHandle {
    pub decision_id: Uuid,
    /// The answer page, a capability URL to share with the person.
    pub web_url: String,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// Harmless problems with the request that were accepted (unknown fields, …).
    pub warnings: Vec<String>,
}
