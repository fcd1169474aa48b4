//! oh-my-pi's `ask` (`/mcp/omp`): questions with an id, options the person picks from (or
//! types their own), `multi` and `recommended`. Its results read "User selected: …",
//! "User provided custom input: …" or, for several questions, "User answers:" with one line
//! per id, and nothing else: oh-my-pi's MCP client hands the model any structured content as
//! a second block (fenced JSON), which its native `ask` keeps in `details`, away from the
//! model, so the result carries none. `SAYSO_OMP_ASK_TIMEOUT_S` is its `ask.timeout`: when it
//! runs out, the recommended option (else the first) is chosen.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::answers::{Asked, QuestionAnswer};
use super::{PROFILE_TTL_MINUTES, Worded, title};
use crate::domain::Status;
use crate::domain::new_decision::MIN_TTL_SECONDS;

/// The tool's name.
pub const TOOL: &str = "ask";

/// What an empty `questions` returns (as text, not as an error, like the tool itself).
pub const EMPTY: &str = "Error: questions must not be empty";
/// A person's "Decline" on the page.
pub const CANCELLED_BY_USER: &str = "Ask tool was cancelled by the user";
/// Withdrawn, or expired with nothing chosen.
pub const INPUT_CANCELLED: &str = "Ask input was cancelled";

/// The tool's input schema.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "description": "The questions to ask, at least one.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "Names this question's line in a multi-question result."},
                        "question": {"type": "string", "description": "What the user is asked."},
                        "options": {
                            "type": "array",
                            "description": "The labels to pick from; \"Other (type your own)\" is always added, do not include it.",
                            "items": {
                                "type": "object",
                                "properties": {"label": {"type": "string"}},
                                "required": ["label"]
                            }
                        },
                        "multi": {"type": "boolean", "description": "Several options may be picked (default false)."},
                        "recommended": {"type": "number", "description": "Index (from 0) of the recommended option."}
                    },
                    "required": ["id", "question", "options"]
                }
            }
        },
        "required": ["questions"]
    })
}

/// The create body for the call's arguments, or the tool's own answer to an empty list.
/// `timeout` is `ask.timeout`: when set, the decision expires after it with the
/// recommended (else first) option of each question as its outcome.
pub fn create_body(args: &Map<String, Value>, timeout: Option<Duration>) -> Result<Value, Worded> {
    let questions = args.get("questions");
    if questions
        .and_then(Value::as_array)
        .is_some_and(|qs| qs.is_empty())
    {
        return Err(Worded::ok(EMPTY.to_string(), None));
    }
    let shaped: Option<Vec<Value>> = questions
        .and_then(Value::as_array)
        .map(|qs| qs.iter().map(question).collect());
    let mut body = json!({
        "kind": "form",
        "question": title(questions),
        "questions": shaped.map(Value::Array).or_else(|| questions.cloned()),
        "allow_remark": false,
    });
    let default = timeout
        .filter(|t| !t.is_zero())
        .and_then(|t| questions.and_then(timeout_outcome).map(|d| (t, d)));
    match default {
        Some((t, outcome)) => {
            body["ttl_seconds"] = json!(t.as_secs().max(MIN_TTL_SECONDS as u64));
            body["default_outcome"] = outcome;
        }
        None => body["ttl_minutes"] = json!(PROFILE_TTL_MINUTES),
    }
    Ok(body)
}

/// One question in the create shape: no options makes it a text question (only "Other").
fn question(q: &Value) -> Value {
    let mut q = q.clone();
    if let Some(obj) = q.as_object_mut()
        && obj
            .get("options")
            .and_then(Value::as_array)
            .is_some_and(|o| o.is_empty())
    {
        obj.remove("options");
        obj.remove("multi");
        obj.remove("recommended");
        obj.insert("type".into(), json!("text"));
    }
    q
}

/// What the timeout picks for every question: the recommended option when its index is
/// valid, else the first. `None` when a question has no option to pick.
fn timeout_outcome(questions: &Value) -> Option<Value> {
    let mut outcome = Map::new();
    for q in questions.as_array()? {
        let id = q.get("id")?.as_str()?.trim().to_string();
        let labels: Vec<&str> = q
            .get("options")?
            .as_array()?
            .iter()
            .map(|o| o.get("label").and_then(Value::as_str))
            .collect::<Option<_>>()?;
        let at = q
            .get("recommended")
            .and_then(Value::as_f64)
            .filter(|r| r.fract() == 0.0 && *r >= 0.0 && (*r as usize) < labels.len())
            .map_or(0, |r| r as usize);
        let label = json!(labels.get(at)?.trim());
        let multi = q.get("multi").and_then(Value::as_bool).unwrap_or(false);
        outcome.insert(id, if multi { json!([label]) } else { label });
    }
    Some(Value::Object(outcome))
}

/// A resolved decision as `ask` returns it.
pub fn word(asked: &Asked<'_>) -> Worded {
    if !asked.has_answer() {
        return match asked.decision.status {
            Status::Declined => Worded::error(CANCELLED_BY_USER),
            _ => Worded::error(INPUT_CANCELLED),
        };
    }
    let timed_out = asked.timed_out();
    let mut questions = asked.questions();
    for q in questions.iter_mut().filter(|q| !q.multi) {
        // A single pick reads without the "(Recommended)" the picker shows beside it.
        for label in &mut q.selected {
            if let Some(bare) = label.strip_suffix(RECOMMENDED) {
                *label = bare.to_string();
            }
        }
    }
    // The text alone: the decision keeps the details (options, picks, custom input, note),
    // for `get_decision` on `/mcp` and the API.
    if let [one] = questions.as_slice() {
        return Worded::ok(single_text(one, timed_out), None);
    }
    let lines: Vec<String> = questions.iter().map(|q| line(q, timed_out)).collect();
    Worded::ok(format!("User answers:\n{}", lines.join("\n")), None)
}

const TIMED_OUT: &str = " (auto-selected after timeout)";
/// What the tool's picker appends to the recommended option's label.
const RECOMMENDED: &str = " (Recommended)";

/// The text of a single question's answer.
fn single_text(q: &QuestionAnswer<'_>, timed_out: bool) -> String {
    let mut parts = Vec::new();
    if !q.selected.is_empty() {
        let picked = if q.multi {
            q.selected.join(", ")
        } else {
            q.selected[0].clone()
        };
        let suffix = if timed_out { TIMED_OUT } else { "" };
        parts.push(format!("User selected: {picked}{suffix}"));
    }
    if let Some(c) = &q.custom {
        parts.push(labelled("User provided custom input", c));
    }
    if let Some(n) = q.note {
        parts.push(labelled("User added note", n));
    }
    if parts.is_empty() {
        return if q.multi {
            "User did not select any options".into()
        } else {
            "User cancelled the selection".into()
        };
    }
    parts.join("\n")
}

/// `Label: text`, or for text of several lines, the label then each line indented.
fn labelled(label: &str, text: &str) -> String {
    if text.contains('\n') {
        let lines: Vec<String> = text.split('\n').map(|l| format!("  {l}")).collect();
        format!("{label}:\n{}", lines.join("\n"))
    } else {
        format!("{label}: {text}")
    }
}

/// One question's line of a multi-question result.
fn line(q: &QuestionAnswer<'_>, timed_out: bool) -> String {
    let id = &q.field.name;
    let note = q.note.map(|n| format!(" (note: {n})")).unwrap_or_default();
    if let Some(c) = &q.custom {
        return format!("{id}: \"{c}\"{note}");
    }
    if q.selected.is_empty() {
        return match q.multi {
            true => format!("{id}: []{note}"),
            false => format!("{id}: (cancelled){note}"),
        };
    }
    let suffix = if timed_out { TIMED_OUT } else { "" };
    match q.multi {
        true => format!("{id}: [{}]{suffix}{note}", q.selected.join(", ")),
        false => format!("{id}: {}{suffix}{note}", q.selected[0]),
    }
}

/// How long the call waits for the person: at least the usual wait, and past the timeout
/// when one is set, so a timed-out question answers in the same call.
pub fn wait(default: Duration, timeout: Option<Duration>) -> Duration {
    match timeout.filter(|t| !t.is_zero()) {
        Some(t) => {
            default.max(t.max(Duration::from_secs(MIN_TTL_SECONDS as u64)) + Duration::from_secs(2))
        }
        None => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_empty_list_is_the_tools_own_text() {
        let refused = create_body(&args(json!({"questions": []})), None).unwrap_err();
        assert_eq!(refused.text, EMPTY);
        assert!(!refused.is_error);
    }

    #[test]
    fn the_timeout_picks_the_recommended_option_else_the_first() {
        let body = create_body(
            &args(json!({"questions": [
                {"id": "a", "question": "A?", "options": [{"label": "x"}, {"label": "y"}], "recommended": 1},
                {"id": "b", "question": "B?", "options": [{"label": "p"}, {"label": "q"}], "recommended": 7, "multi": true}
            ]})),
            Some(Duration::from_secs(30)),
        )
        .unwrap();
        assert_eq!(body["default_outcome"], json!({"a": "y", "b": ["p"]}));
        assert_eq!(body["ttl_seconds"], 30);
        let none = create_body(
            &args(json!({"questions": [{"id": "a", "question": "A?", "options": []}]})),
            Some(Duration::from_secs(30)),
        )
        .unwrap();
        assert!(none.get("default_outcome").is_none());
        assert_eq!(none["questions"][0]["type"], "text");
    }
}
