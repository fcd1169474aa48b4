//! `answer_text`: one plain sentence an agent can hand its model as is.
//!
//! Strings are quoted with JSON escaping, so a question or answer containing quotes stays
//! unambiguous. Only an `answered` decision is ever said to be the user's answer.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use super::decision::{CancelReason, Decision};
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
        (Status::Cancelled, _) if decision.cancel_reason == Some(CancelReason::Abandoned) => {
            format!("The agent stopped waiting for {q} and withdrew it before anyone answered.")
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
        KindSpec::Choose { .. } if decision.spec.approval.is_some() && decision.custom => {
            match decision.ran_instead() {
                Some(command) => format!(
                    "The user answered {q} with {}, with the command edited before allowing; what runs is their command {}.",
                    json(outcome),
                    quote(command)
                ),
                None => format!(
                    "The user answered {q} with {}, with the command edited before allowing.",
                    json(outcome)
                ),
            }
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;

    use super::*;
    use crate::domain::kind::OutcomeSource;

    fn decision(body: Value, status: Status, outcome: Option<Value>) -> Decision {
        Decision {
            status,
            outcome_source: match status {
                Status::Answered => Some(OutcomeSource::Human),
                Status::Expired if outcome.is_some() => Some(OutcomeSource::Default),
                _ => None,
            },
            outcome,
            ..Decision::asked(
                &body,
                datetime!(2025-03-01 10:00 UTC),
                datetime!(2025-03-01 11:00:00.5 +01:00),
            )
        }
    }

    fn bool_q() -> Value {
        json!({"question": "Deploy to production?", "kind": "bool"})
    }

    fn answered(body: Value, outcome: Value) -> Decision {
        decision(body, Status::Answered, Some(outcome))
    }

    #[test]
    fn a_bool_answer_says_yes_or_no_with_the_remark() {
        let mut d = answered(bool_q(), json!(true));
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Deploy to production?" with "yes"."#
        );
        d.outcome = Some(json!(false));
        d.remark = Some("after 6pm".into());
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Deploy to production?" with "no". Remark: "after 6pm"."#
        );
    }

    #[test]
    fn a_bool_answer_names_a_custom_button() {
        let d = answered(
            json!({"question": "Deploy?", "kind": "bool", "yes_label": "Ship it"}),
            json!(true),
        );
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Deploy?" with "yes" (the button "Ship it")."#
        );
    }

    fn choose_q(multi: bool) -> Value {
        json!({"question": "Which plan?", "kind": "choose", "options": ["A", "Plan B", "C"], "multi": multi})
    }

    #[test]
    fn choose_answers_quote_the_labels() {
        let d = answered(choose_q(false), json!("Plan B"));
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Which plan?" with "Plan B"."#
        );
        let d = answered(choose_q(true), json!(["A", "C"]));
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Which plan?" with "A", "C"."#
        );
    }

    #[test]
    fn a_custom_answer_is_marked_as_not_an_option() {
        let mut d = answered(choose_q(false), json!("use Redis"));
        d.custom = true;
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Which plan?" with their own answer "use Redis" (not one of the options)."#
        );
        let mut d = answered(choose_q(true), json!(["A", "use Redis"]));
        d.custom = true;
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Which plan?" with "A" and their own answer "use Redis" (not one of the options)."#
        );
    }

    #[test]
    fn a_text_answer_is_quoted() {
        let d = answered(
            json!({"question": "Service name?", "kind": "text"}),
            json!("payments-gateway"),
        );
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Service name?" with "payments-gateway"."#
        );
    }

    #[test]
    fn quotes_inside_the_question_and_answer_are_escaped() {
        let d = answered(
            json!({"question": "Say \"hi\"?", "kind": "text"}),
            json!("he said \"no\"\nthen left"),
        );
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Say \"hi\"?" with "he said \"no\"\nthen left"."#
        );
    }

    #[test]
    fn a_schema_form_answer_lists_fields_in_form_order() {
        let body = json!({"question": "Q", "kind": "form", "schema": {"properties": {
            "name": {"type": "string"}, "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
            "first name": {"type": "string"}
        }}});
        let d = answered(
            body.clone(),
            json!({"tags": ["a", "b"], "count": 3, "name": "x"}),
        );
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Q" with: name="x", count=3, tags=["a","b"]."#
        );
        let d = answered(body.clone(), json!({"first name": "Ada"}));
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Q" with: "first name"="Ada"."#
        );
        let d = answered(body, json!({}));
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Q" with an empty form."#
        );
    }

    #[test]
    fn a_questions_answer_pairs_question_texts_with_answers() {
        let body = json!({"question": "Setup", "kind": "form", "questions": [
            {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
            {"question": "Anything else?"}
        ]});
        let d = answered(
            body.clone(),
            json!({"db": "SQLite", "Anything else?": "no"}),
        );
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Setup" with: "Which database?"="SQLite", "Anything else?"="no"."#
        );
        let mut d = answered(body, json!({"db": "MySQL", "Anything else?": "no"}));
        d.custom = true;
        assert_eq!(
            answer_text(&d),
            r#"The user answered "Setup" with: "Which database?"="MySQL" (their own answer, not one of the options: "MySQL"), "Anything else?"="no"."#
        );
    }

    #[test]
    fn a_todo_is_marked_done_or_skipped() {
        let q = json!({"question": "Rotate the keys", "kind": "todo"});
        assert_eq!(
            answer_text(&answered(q.clone(), json!("done"))),
            r#"The user marked the to-do "Rotate the keys" as done."#
        );
        assert_eq!(
            answer_text(&answered(q, json!("skipped"))),
            r#"The user marked the to-do "Rotate the keys" as skipped."#
        );
    }

    #[test]
    fn a_decline_says_so_with_the_remark() {
        let mut d = decision(bool_q(), Status::Declined, None);
        assert_eq!(
            answer_text(&d),
            r#"The user declined to answer "Deploy to production?"."#
        );
        d.remark = Some("ask Bob".into());
        assert_eq!(
            answer_text(&d),
            r#"The user declined to answer "Deploy to production?". Remark: "ask Bob"."#
        );
    }

    #[test]
    fn an_expiry_without_default_has_no_answer() {
        let d = decision(bool_q(), Status::Expired, None);
        assert_eq!(
            answer_text(&d),
            r#"Nobody answered "Deploy to production?" before it expired at 2025-03-01T10:00:00Z; there is no answer."#
        );
    }

    #[test]
    fn an_expiry_with_default_says_it_was_not_the_users_choice() {
        let d = decision(bool_q(), Status::Expired, Some(json!(false)));
        let text = answer_text(&d);
        assert_eq!(
            text,
            r#"Nobody answered "Deploy to production?" before it expired at 2025-03-01T10:00:00Z; the default outcome "no" applies. This was not the user's choice."#
        );
        assert!(!text.contains("The user answered"));
        let d = decision(
            json!({"question": "Q", "kind": "choose", "options": ["A", "B"]}),
            Status::Expired,
            Some(json!("B")),
        );
        assert!(answer_text(&d).contains(r#"the default outcome "B" applies"#));
    }

    #[test]
    fn a_cancelled_question_was_not_answered() {
        let d = decision(bool_q(), Status::Cancelled, None);
        assert_eq!(
            answer_text(&d),
            r#"The question "Deploy to production?" was cancelled before anyone answered."#
        );
        let d = Decision {
            cancel_reason: Some(CancelReason::Abandoned),
            ..d
        };
        assert_eq!(
            answer_text(&d),
            r#"The agent stopped waiting for "Deploy to production?" and withdrew it before anyone answered."#
        );
    }

    #[test]
    fn a_pending_question_gives_its_expiry() {
        let d = decision(bool_q(), Status::Pending, None);
        assert_eq!(
            answer_text(&d),
            r#""Deploy to production?" is still waiting for an answer; it expires at 2025-03-01T10:00:00Z."#
        );
    }
}
