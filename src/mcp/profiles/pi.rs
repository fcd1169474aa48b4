//! pi's `ask_user` (`/mcp/pi`): questions with an optional header, optional options (none
//! means free text; "Other" is always offered) and `multiSelect`. The result is
//! `{answered, answers: [{question, answer, selectedOption?, wasCustom}]}`; a cancel is
//! `{answered: false, answers: [], cancelled: true}`. Several questions are answered all
//! together or not at all. When the call's wait ends first, the result is the tool's
//! non-interactive "Questions pending" text, with the answer link and the decision id.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::answers::Asked;
use super::{PROFILE_TTL_MINUTES, Worded, title};
use crate::service::view::AskHandle;

/// The tool's name.
pub const TOOL: &str = "ask_user";

/// The tool's input schema.
pub fn schema() -> Value {
    let option = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "What the user picks."},
            "description": {"type": "string", "description": "Help text under the label."}
        },
        "required": ["label"]
    });
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "description": "The questions, asked together and answered all or none.",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The question."},
                        "header": {"type": "string", "description": "A short title shown above it."},
                        "options": {"type": "array", "items": option, "description": "Suggested answers; without them the user types the answer. \"Other\" is always added."},
                        "multiSelect": {"type": "boolean", "description": "Several options may be picked."}
                    },
                    "required": ["question"]
                }
            },
            "metadata": {"type": "object", "additionalProperties": true, "description": "Your own tracking data, e.g. {\"source\": \"setup-wizard\"}; kept with the question."}
        },
        "required": ["questions"]
    })
}

/// The create body, or the tool's refusal of an empty list.
pub fn create_body(args: &Map<String, Value>) -> Result<Value, Worded> {
    if args
        .get("questions")
        .and_then(Value::as_array)
        .is_some_and(|q| q.is_empty())
    {
        return Err(Worded::error(
            "questions must not be empty: ask at least one question",
        ));
    }
    let mut body = json!({
        "kind": "form",
        "question": title(args.get("questions")),
        "questions": args.get("questions").cloned().unwrap_or(Value::Null),
        "allow_remark": false,
        "ttl_minutes": PROFILE_TTL_MINUTES,
    });
    if let Some(m) = args.get("metadata") {
        body["metadata"] = m.clone();
    }
    Ok(body)
}

/// One answer of the result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    question: String,
    answer: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    selected_option: Option<String>,
    was_custom: bool,
}

#[derive(Serialize)]
struct Outcome {
    answered: bool,
    answers: Vec<Answer>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cancelled: bool,
}

/// A resolved decision as the tool returns it.
pub fn word(asked: &Asked<'_>) -> Worded {
    let result = if asked.has_answer() {
        let answers = asked
            .questions()
            .iter()
            .map(|q| {
                let mut parts = q.selected.clone();
                parts.extend(q.custom.clone());
                Answer {
                    question: q.question().to_string(),
                    answer: if q.multi {
                        json!(parts)
                    } else {
                        json!(parts.join(", "))
                    },
                    selected_option: (!q.multi && q.custom.is_none())
                        .then(|| q.selected.first().cloned())
                        .flatten(),
                    was_custom: q.custom.is_some(),
                }
            })
            .collect();
        Outcome {
            answered: true,
            answers,
            cancelled: false,
        }
    } else {
        Outcome {
            answered: false,
            answers: vec![],
            cancelled: true,
        }
    };
    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
    let text = serde_json::to_string_pretty(&result).unwrap_or_default();
    Worded::ok(text, Some(value))
}

/// The non-interactive answer: the questions wait for the person at `web_url`, and
/// `await_decision` returns the result once they answer.
pub fn pending(h: &AskHandle) -> String {
    format!(
        "Questions pending. User input required.\n\n\
         To answer, open:\n  {url}\n\n\
         Then call await_decision with decision_id \"{id}\" to get the answers \
         (it waits; call it again while they are pending).\n\n\
         Questions saved to: decision {id}",
        url = h.web_url,
        id = h.decision_id
    )
}
