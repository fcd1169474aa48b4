//! What a tool call answers: the result (a text for the model and the JSON the HTTP API would
//! return), a failure worded for the model, and the arguments read on the way.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::tools::Arguments;
use crate::domain::new_decision::ROUTING_FIELDS;
use crate::domain::{Issue, Issues, Kind, Status};
use crate::render::resolved_message;
use crate::service::{DecisionView, ServiceError};
use crate::web::waiting::Refused;

/// Why a tool did not do what was asked, before it is worded for the model.
pub(super) enum Failure {
    Invalid(Vec<Issue>),
    Service(ServiceError),
    /// It would wait, and may not (web/waiting.rs).
    Waiting(Refused),
}

impl Failure {
    pub(super) fn invalid(path: &str, message: &str) -> Self {
        Failure::Invalid(vec![Issue {
            path: path.into(),
            message: message.into(),
        }])
    }
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Validation(issues) => Failure::Invalid(issues),
            e => Failure::Service(e),
        }
    }
}

/// A failure as a tool error: the text says what went wrong and what to do; structured
/// content carries the API's error shape (or, for a resolved decision, the decision).
pub(super) fn tool_error(f: Failure) -> CallToolResult {
    let (text, structured) = match f {
        Failure::Invalid(issues) => {
            let lines: Vec<String> = issues
                .iter()
                .map(|i| match i.path.as_str() {
                    "" => format!("- {}", i.message),
                    path => format!("- {path}: {}", i.message),
                })
                .collect();
            let text = format!(
                "The arguments are not valid; nothing was created. Fix each problem and call \
                 again:\n{}",
                lines.join("\n")
            );
            let shape = json!({"error": {"code": "validation_failed", "message": "the arguments are not valid", "details": issues}});
            (text, shape)
        }
        Failure::Service(ServiceError::NotFound) => (
            "There is no decision with this decision_id for this API key.".to_string(),
            error_shape("not_found", "no such decision"),
        ),
        Failure::Service(ServiceError::AlreadyResolved(d) | ServiceError::Expired(d)) => {
            let message = resolved_message(d.status, d.resolved_at);
            let text = format!(
                "Not done: {message}. {}",
                crate::domain::answer_text::answer_text(&d)
            );
            (text, error_shape("already_resolved", &message))
        }
        Failure::Service(ServiceError::IdempotencyMismatch) => (
            "This idempotency_key was already used with different arguments; use a new key."
                .to_string(),
            error_shape(
                "idempotency_mismatch",
                "this idempotency_key was already used with different arguments",
            ),
        ),
        Failure::Waiting(refused) => (
            format!(
                "Not waiting: {}. The decision is still pending; call await_decision again \
                 in {} s.",
                refused.message(),
                refused.retry_after()
            ),
            error_shape("too_many_waiting", &refused.message()),
        ),
        Failure::Service(ServiceError::Unavailable) => (
            "sayso's database is unavailable right now; try again in a few seconds.".to_string(),
            error_shape("unavailable", "the database is unavailable; retry shortly"),
        ),
        Failure::Service(e) => {
            tracing::error!(error = %e, "MCP tool call failed");
            (
                "Something went wrong on the sayso server; it has been logged. Try again later."
                    .to_string(),
                error_shape("internal", "something went wrong on the server"),
            )
        }
    };
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

fn error_shape(code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "details": []}})
}

/// A successful result: the text for the model and the JSON for programs.
pub(super) fn result(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// A decision: its `answer_text`, and while pending, how to keep waiting.
pub(super) fn decision_result(view: &DecisionView) -> CallToolResult {
    let mut text = view.answer_text.clone();
    if view.status == Status::Pending && view.kind != Kind::Todo {
        text.push_str(&format!(
            " Call await_decision again with decision_id \"{}\" to keep waiting.",
            view.decision_id
        ));
    }
    result(text, to_json(view))
}

pub(super) fn push_warnings(text: &mut String, warnings: &[String]) {
    if !warnings.is_empty() {
        text.push_str("\nWarnings (accepted anyway):\n- ");
        text.push_str(&warnings.join("\n- "));
    }
}

/// Whom a create with `approvers`, `required`, `escalate_after_s`, `escalate_to` or `urgent`
/// asks, in words ("ana and ben", "the inbox's people"), and how many must agree when more
/// than one ("; 2 of them must agree"); `None` for a plain ask.
pub(super) fn routed_to(body: &Value) -> Option<(String, String)> {
    if ROUTING_FIELDS
        .iter()
        .all(|f| body.get(f).is_none_or(Value::is_null))
    {
        return None;
    }
    let names: Vec<&str> = body
        .get("approvers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::trim).collect())
        .unwrap_or_default();
    let people = match names.as_slice() {
        [] => "the inbox's people".to_string(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    let rule = match body.get("required").and_then(Value::as_u64) {
        Some(n) if n > 1 => format!("; {n} of them must agree"),
        _ => String::new(),
    };
    Some((people, rule))
}

/// The arguments as a create body, refusing what the HTTP API refuses before it parses
/// (text holding a NUL character).
pub(super) fn checked_body(body: Value) -> Result<Value, Failure> {
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    crate::web::extract::parse_json(&bytes).map_err(|e| match e.details.is_empty() {
        true => Failure::invalid("", &e.message),
        false => Failure::Invalid(e.details),
    })
}

pub(super) fn only_decision_id(args: &Arguments) -> Result<Uuid, Failure> {
    let mut issues = Issues::new();
    let id = decision_id(args, &mut issues);
    checked_id(issues, id)
}

/// The decision id read, once nothing else in the arguments had an issue.
pub(super) fn checked_id(issues: Issues, id: Option<Uuid>) -> Result<Uuid, Failure> {
    let id = issues.finish(id).map_err(Failure::Invalid)?;
    id.ok_or_else(|| Failure::invalid("decision_id", "is required"))
}

pub(super) fn decision_id(args: &Arguments, issues: &mut Issues) -> Option<Uuid> {
    match args.get("decision_id") {
        None | Some(Value::Null) => {
            issues.push("decision_id", "is required");
            None
        }
        Some(Value::String(s)) => match Uuid::parse_str(s.trim()) {
            Ok(id) => Some(id),
            Err(_) => {
                issues.push(
                    "decision_id",
                    "is not a decision_id: use the one the ask returned",
                );
                None
            }
        },
        Some(_) => {
            issues.push("decision_id", "must be a string");
            None
        }
    }
}

/// A whole number of seconds (a numeric string is accepted: some clients send those).
pub(super) fn seconds(args: &Map<String, Value>, name: &str, issues: &mut Issues) -> Option<u64> {
    let v = args.get(name)?;
    let n = match v {
        Value::Null => return None,
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    if n.is_none() {
        issues.push(name, "must be a whole number of seconds, 0 or more");
    }
    n
}

pub(super) fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.to_string())
}

pub(super) fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routed_ask_names_who_answers_it() {
        assert_eq!(routed_to(&json!({"question": "Q", "kind": "bool"})), None);
        assert_eq!(
            routed_to(&json!({"approvers": ["ana", "ben", "cy"], "required": 2})),
            Some(("ana, ben and cy".into(), "; 2 of them must agree".into()))
        );
        assert_eq!(
            routed_to(&json!({"approvers": ["ana"]})),
            Some(("ana".into(), String::new()))
        );
        assert_eq!(
            routed_to(&json!({"urgent": true})),
            Some(("the inbox's people".into(), String::new()))
        );
    }
}
