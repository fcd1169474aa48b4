//! `answer_text`: one plain sentence an agent can hand its model as is.
//!
//! Strings are quoted with JSON escaping, so a question or answer containing quotes stays
//! unambiguous. Only an `answered` decision is ever said to be the user's answer.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use super::decision::Decision;
use super::kind::Status;
use super::read::quote;
use super::spec::{FieldInput, FormSource, FormSpec, KindSpec};

/// Says what happened to the decision, including plainly when nobody answered.
pub fn answer_text(decision: &Decision) -> String {
    let q = quote(&decision.spec.question);
    let remark = decision
        .remark
        .as_deref()
        .map(|r| format!(" Remark: {}.", quote(r)))
        .unwrap_or_default();
    let expires_at = timestamp(decision.expires_at);
    match (decision.status, &decision.outcome) {
        (Status::Pending, _) => {
            format!("{q} is still waiting for an answer; it expires at {expires_at}.")
        }
        (Status::Answered, Some(outcome)) => {
            format!("{}{remark}", answered(decision, &q, outcome))
        }
        (Status::Answered, None) => format!("The user answered {q}.{remark}"),
        (Status::Declined, _) => format!("The user declined to answer {q}.{remark}"),
        (Status::Expired, Some(default)) => format!(
            "Nobody answered {q} before it expired at {expires_at}; the default outcome {} applies. This was not the user's choice.",
            describe_default(&decision.spec.body, default)
        ),
        (Status::Expired, None) => {
            format!("Nobody answered {q} before it expired at {expires_at}; there is no answer.")
        }
        (Status::Cancelled, _) => {
            format!("The question {q} was cancelled before anyone answered.")
        }
    }
}

/// RFC 3339 in UTC, to the second.
fn timestamp(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    let t = t.replace_nanosecond(0).unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_else(|_| t.to_string())
}

/// Compact JSON: strings quoted, arrays and objects as written.
fn json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn answered(decision: &Decision, q: &str, outcome: &Value) -> String {
    match &decision.spec.body {
        KindSpec::Todo => {
            let what = if outcome.as_str() == Some("skipped") {
                "skipped"
            } else {
                "done"
            };
            format!("The user marked the to-do {q} as {what}.")
        }
        KindSpec::Bool {
            yes_label,
            no_label,
        } => match outcome.as_bool() {
            Some(b) => {
                let (word, label, plain) = if b {
                    ("yes", yes_label, "Yes")
                } else {
                    ("no", no_label, "No")
                };
                let button = if label == plain {
                    String::new()
                } else {
                    format!(" (the button {})", quote(label))
                };
                format!("The user answered {q} with \"{word}\"{button}.")
            }
            None => format!("The user answered {q} with {}.", json(outcome)),
        },
        KindSpec::Choose { .. } => {
            let own =
                |text: &Value| format!("their own answer {} (not one of the options)", json(text));
            let with = match (outcome, decision.custom) {
                (Value::Array(items), custom) => {
                    let (picked, typed) = match items.split_last() {
                        Some((last, rest)) if custom => (rest, Some(last)),
                        _ => (items.as_slice(), None),
                    };
                    let picked: Vec<String> = picked.iter().map(json).collect();
                    match (picked.is_empty(), typed) {
                        (true, Some(t)) => own(t),
                        (false, Some(t)) => format!("{} and {}", picked.join(", "), own(t)),
                        _ => picked.join(", "),
                    }
                }
                (single, true) => own(single),
                (single, false) => json(single),
            };
            format!("The user answered {q} with {with}.")
        }
        KindSpec::Text { .. } => format!("The user answered {q} with {}.", json(outcome)),
        KindSpec::Form(form) => match outcome {
            Value::Object(_) => format!("The user answered {q} with{}", form_pairs(form, outcome)),
            other => format!("The user answered {q} with {}.", json(other)),
        },
    }
}

/// `: name="x", count=3.` in field order; typed "Other" answers are marked as such.
fn form_pairs(form: &FormSpec, outcome: &Value) -> String {
    let mut pairs = Vec::new();
    for field in &form.fields {
        let Some(v) = outcome.get(&field.name) else {
            continue;
        };
        let key = match (form.source, &field.title) {
            (FormSource::Questions, Some(title)) => quote(title),
            _ if is_plain_name(&field.name) => field.name.clone(),
            _ => quote(&field.name),
        };
        let typed = typed_values(&field.input, v);
        let note = if typed.is_empty() {
            String::new()
        } else {
            format!(
                " (their own answer, not one of the options: {})",
                typed.join(", ")
            )
        };
        pairs.push(format!("{key}={}{note}", json(v)));
    }
    if pairs.is_empty() {
        " an empty form.".to_string()
    } else {
        format!(": {}.", pairs.join(", "))
    }
}

/// A name readable without quotes.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The values of a choice answer that are not among its options, quoted.
fn typed_values(input: &FieldInput, v: &Value) -> Vec<String> {
    let options = match input {
        FieldInput::Choice { options, .. } | FieldInput::MultiChoice { options, .. } => options,
        _ => return Vec::new(),
    };
    let values: Vec<&Value> = match v {
        Value::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    values
        .into_iter()
        .filter_map(Value::as_str)
        .filter(|s| !options.iter().any(|o| o.value == *s))
        .map(quote)
        .collect()
}

/// The default outcome as the agent would read it: a bool as "yes"/"no".
fn describe_default(body: &KindSpec, default: &Value) -> String {
    match (body, default) {
        (KindSpec::Bool { .. }, Value::Bool(true)) => "\"yes\"".to_string(),
        (KindSpec::Bool { .. }, Value::Bool(false)) => "\"no\"".to_string(),
        (_, v) => json(v),
    }
}
