//! A decision as stored, a validated create request, and the resolution an answer,
//! decline or cancel produces.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::answered_by::{AnswerChannel, AnsweredBy};
use super::approval;
use super::issues::Issues;
use super::kind::{EventKind, Kind, OutcomeSource, Status};
use super::outbox::{Channel, MessageStatus};
use super::people::{AnswerAction, AnswerRecord};
use super::spec::{DecisionSpec, Image};
use super::words::words;

/// A validated create request. One that exists can be stored as is.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDecision {
    pub spec: DecisionSpec,
    /// Between 10 seconds and 30 days.
    pub ttl: Duration,
    pub image: Option<Image>,
    /// Harmless problems, reported back to the agent.
    pub warnings: Vec<String>,
}

/// A decision as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub id: Uuid,
    pub inbox_id: Uuid,
    pub spec: DecisionSpec,
    pub status: Status,
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    /// True when the person typed their own answer ("Other") instead of picking an option;
    /// for a tool approval, when they allowed it with the command edited (the command is in
    /// the `answered` event), which the API shows as the Allow it is.
    pub custom: bool,
    pub remark: Option<String>,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    /// When it left `pending`; `answered_at` in the API.
    pub resolved_at: Option<OffsetDateTime>,
    pub has_image: bool,
    /// Which way it was answered, declined or cancelled (and on which bound device); `None`
    /// while pending, once expired, and for answers recorded before sayso kept this.
    pub answered_by: Option<AnsweredBy>,
    /// Every answer given so far, in order, at most one per person (`tally::tally`).
    pub answers: Vec<AnswerRecord>,
    /// Why a cancelled decision was withdrawn, when the agent said it in the one way the
    /// server reads (`CancelReason`); `None` otherwise.
    pub cancel_reason: Option<CancelReason>,
}

/// The one cancel reason the server itself reads: the agent stopped waiting for the answer
/// (its hook was killed, its client went away, its wait ran out), so nothing will act on it.
/// Any other reason is the agent's free text, kept in the audit trail and shown to no one
/// deciding: an agent cannot word its way into what a page or notification says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    Abandoned,
}

words!(CancelReason {
    Abandoned => "abandoned",
});

/// A cancel's `reason` as the agent gave it, trimmed; absent, null or blank is none. One
/// that is not a string of at most 2000 characters (it is kept in the audit trail) is an
/// issue.
pub fn cancel_reason(v: Option<&Value>, issues: &mut Issues) -> Option<String> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) if r.chars().count() <= 2000 => {
            Some(r.trim().to_string()).filter(|r| !r.is_empty())
        }
        Some(Value::String(_)) => {
            issues.push("reason", "must be at most 2000 characters");
            None
        }
        Some(_) => {
            issues.push("reason", "must be a string");
            None
        }
    }
}

impl Decision {
    pub fn kind(&self) -> Kind {
        self.spec.kind()
    }

    /// Pending, and its time is not yet up.
    pub fn is_open_at(&self, now: OffsetDateTime) -> bool {
        self.status == Status::Pending && now < self.expires_at
    }

    /// The command that runs in place of the one an approval asked: the one the person
    /// edited before allowing, kept with their answer; `None` when they allowed it as asked
    /// (or did not allow it).
    pub fn ran_instead(&self) -> Option<&str> {
        let allowed = self.spec.approval.is_some()
            && self.status == Status::Answered
            && approval::allows(self.outcome.as_ref());
        if !allowed {
            return None;
        }
        self.answers
            .last()
            .and_then(|a| a.edited_command.as_deref())
    }
}

/// What a person (or the agent, for a cancel) does to a pending decision. Built by
/// `answer::validate_answer` or `Resolution::cancel`; storage applies it only if the decision
/// is still pending and unexpired.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// `Answered`, `Declined` or `Cancelled`; expiry has its own path.
    pub status: Status,
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    pub custom: bool,
    pub remark: Option<String>,
    /// Extra facts for the event log (a cancel's reason, the action taken).
    pub detail: Value,
    /// Which way it came; the service sets it (validation does not know).
    pub by: Option<AnsweredBy>,
    /// The person's answer that resolves it, appended to the decision's `answers`; the
    /// service sets it (`None` for a cancel).
    pub answer: Option<AnswerRecord>,
    /// Applied only while the decision has exactly this many answers: a rule of several
    /// people was tallied against them (`tally::tally`).
    pub expect_answers: Option<usize>,
    /// A cancel's reason, when it is the one the server reads.
    pub cancel_reason: Option<CancelReason>,
}

impl Resolution {
    /// The agent withdraws the question; `reason` exactly `abandoned` says it stopped waiting.
    pub fn cancel(reason: Option<String>) -> Self {
        let cancel_reason = reason.as_deref().and_then(CancelReason::parse);
        Resolution {
            status: Status::Cancelled,
            outcome: None,
            outcome_source: None,
            custom: false,
            remark: None,
            detail: serde_json::json!({ "reason": reason }),
            by: Some(AnsweredBy::new(AnswerChannel::Api, None)),
            answer: None,
            expect_answers: None,
            cancel_reason,
        }
    }

    /// The event name this resolution is logged under.
    pub fn event_kind(&self) -> EventKind {
        EventKind::from(self.status)
    }
}

/// What the person sent to `POST /d/{token}`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct AnswerInput {
    #[serde(default)]
    pub action: AnswerAction,
    /// Outcome-shaped: `true`/`"yes"`, a label, an array of labels, a string, an object.
    #[serde(default)]
    pub value: Option<Value>,
    /// Text typed into "Other".
    #[serde(default)]
    pub other: Option<String>,
    #[serde(default)]
    pub remark: Option<String>,
    /// A note per question of a question form, keyed like `value`: `{"<question>": "…"}`.
    #[serde(default)]
    pub notes: Option<Value>,
    /// A tool approval whose command may be edited: the command as the person changed it
    /// before allowing (ignored with Deny, and when unchanged).
    #[serde(default)]
    pub command: Option<String>,
    /// A tool approval whose rule wants a passkey: the assertion its Allow needs
    /// (`navigator.credentials.get` with the page's challenge), each part base64url.
    #[serde(default)]
    pub passkey: Option<super::webauthn::AssertionInput>,
}

/// One step in a decision's life, kept for the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DecisionEvent {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub kind: EventKind,
    pub detail: Value,
}

/// The state of one notification channel of a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct NotificationState {
    pub channel: Channel,
    pub status: MessageStatus,
    pub detail: Option<String>,
}
