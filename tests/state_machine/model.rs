//! The reference model: what is known of each decision, and how a decision the API shows
//! is checked against it.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::bodies::default_outcome;
use crate::ops::{Ask, Create};

/// What the model knows of one decision.
#[derive(Debug, Clone)]
pub struct Known {
    pub create: Create,
    pub id: String,
    pub web_url: String,
    pub key: String,
    pub expires_at: OffsetDateTime,
    pub state: State,
}

impl Known {
    pub fn is_todo(&self) -> bool {
        matches!(self.create.ask, Ask::Todo { .. })
    }

    /// Follows real time up to `t0`, the moment before a request: a pending decision due by
    /// then is expired (the service expires it on any read).
    pub fn settle(&mut self, t0: OffsetDateTime) {
        if self.state == State::Pending && self.expires_at <= t0 {
            self.state = State::Expired;
        }
    }

    /// Whether real time may have expired it during a request that ended at `t1`.
    pub fn may_expire_by(&self, t1: OffsetDateTime) -> bool {
        self.state == State::Pending && self.expires_at <= t1
    }

    /// Checks a decision as the API shows it (`DecisionView`, or an answer's result) against
    /// the model.
    pub fn check(&self, seen: &Value) -> Result<(), TestCaseError> {
        let field = |k: &str| seen.get(k).cloned().unwrap_or(Value::Null);
        let status = field("status");
        let answered_at = field("answered_at");
        match &self.state {
            State::Pending => {
                prop_assert_eq!(&status, &json!("pending"), "{}", seen);
                prop_assert_eq!(&field("outcome"), &Value::Null);
                prop_assert_eq!(&field("outcome_source"), &Value::Null);
                prop_assert_eq!(&answered_at, &Value::Null);
            }
            State::Expired => {
                prop_assert_eq!(&status, &json!("expired"), "{}", seen);
                let default = default_outcome(&self.create.ask);
                let source = if default.is_some() {
                    json!("default")
                } else {
                    Value::Null
                };
                prop_assert_eq!(
                    &field("outcome"),
                    &default.unwrap_or(Value::Null),
                    "{}",
                    seen
                );
                prop_assert_eq!(&field("outcome_source"), &source);
                prop_assert_eq!(&field("custom"), &json!(false));
                // On expiry, answered_at is expires_at.
                prop_assert_eq!(time_of(&answered_at), Some(self.expires_at), "{}", seen);
            }
            State::Resolved {
                status: want,
                outcome,
                source,
                custom,
                remark,
                after,
                before,
            } => {
                prop_assert_eq!(&status, &json!(want), "{}", seen);
                prop_assert_eq!(&field("outcome"), outcome, "{}", seen);
                prop_assert_eq!(&field("outcome_source"), source);
                prop_assert_eq!(&field("custom"), &json!(custom));
                prop_assert_eq!(&field("remark"), remark);
                let at = time_of(&answered_at);
                prop_assert!(
                    at.is_some_and(|at| *after <= at && at <= *before),
                    "answered_at {} outside the request that resolved it ({} – {})",
                    answered_at,
                    after,
                    before
                );
            }
        }
        if let Some(expires_at) = seen.get("expires_at") {
            prop_assert_eq!(time_of(expires_at), Some(self.expires_at));
        }
        Ok(())
    }
}

// A few of these per case: their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Pending,
    /// Answered, declined or cancelled, at a moment between `after` and `before`.
    Resolved {
        status: &'static str,
        outcome: Value,
        source: Value,
        custom: bool,
        remark: Value,
        after: OffsetDateTime,
        before: OffsetDateTime,
    },
    Expired,
}

pub fn time_of(v: &Value) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(v.as_str()?, &Rfc3339).ok()
}
