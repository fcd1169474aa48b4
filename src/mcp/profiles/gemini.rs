//! gemini-cli's `ask_user` (`/mcp/gemini`): 1–4 questions of type `choice` (2–4 options,
//! "Other" added), `text` or `yesno`, each with a header of at most 16 characters and an
//! optional placeholder. The model reads `{"answers":{"0":"…"}}`, keyed by question index.
//!
//! The endpoint lists it as `ask_the_user`, not `ask_user`: gemini-cli's headless (`-p`) and
//! ACP modes exclude every tool whose name is `ask_user`, its MCP tools included (it matches
//! an MCP tool by its name on the server as well as by `mcp_<server>_<name>`), so an
//! unattended agent would have no way to ask. One name for every mode: listing both would
//! give an interactive session two sayso ask tools.

use serde_json::{Map, Value, json};

use super::answers::Asked;
use super::{PROFILE_TTL_MINUTES, Worded, title};

/// The tool's name: one that gemini-cli keeps in headless mode (see above).
pub const TOOL: &str = "ask_the_user";
/// The widest header.
pub const HEADER_MAX: usize = 16;
/// What the model reads when the person dismisses the questions.
pub const DISMISSED: &str = "User dismissed ask_user dialog without answering.";

/// The tool's input schema.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["questions"],
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "required": ["question", "header", "type"],
                    "properties": {
                        "question": {"type": "string", "description": "The whole question, ending with a question mark."},
                        "header": {"type": "string", "maxLength": HEADER_MAX, "description": "A chip label of at most 16 characters, or the call fails."},
                        "type": {"type": "string", "enum": ["choice", "text", "yesno"], "default": "choice", "description": "choice (options to pick from), text (free input) or yesno."},
                        "options": {
                            "type": "array",
                            "description": "choice: 2-4 options; \"Other\" is added by itself.",
                            "items": {
                                "type": "object",
                                "required": ["label", "description"],
                                "properties": {
                                    "label": {"type": "string", "description": "The option, in a few words."},
                                    "description": {"type": "string", "description": "A short explanation."}
                                }
                            }
                        },
                        "multiSelect": {"type": "boolean", "description": "choice: several options may be picked."},
                        "placeholder": {"type": "string", "description": "Hint text in the input: the text field, or the Other box of a choice."}
                    }
                }
            }
        }
    })
}

/// The tool's checks with its messages: the schema's first (as its validator words them,
/// `params/…`), then its own.
pub fn check(args: &Map<String, Value>) -> Result<(), Worded> {
    schema_problem(args).map_or(Ok(()), |p| Err(Worded::error(p)))?;
    let questions = args["questions"].as_array().expect("checked by the schema");
    if questions.is_empty() {
        return Err(Worded::error("At least one question is required."));
    }
    for (i, q) in questions.iter().enumerate() {
        let n = i + 1;
        let options = q.get("options").and_then(Value::as_array);
        if q.get("type").and_then(Value::as_str) == Some("choice") {
            match options.map_or(0, Vec::len) {
                0 | 1 => {
                    return Err(Worded::error(format!(
                        "Question {n}: type='choice' requires 'options' array with 2-4 items."
                    )));
                }
                5.. => {
                    return Err(Worded::error(format!(
                        "Question {n}: 'options' array must have at most 4 items."
                    )));
                }
                _ => {}
            }
        }
        for (j, o) in options.into_iter().flatten().enumerate() {
            let m = j + 1;
            let label = o.get("label").and_then(Value::as_str);
            if label.is_none_or(|l| l.trim().is_empty()) {
                return Err(Worded::error(format!(
                    "Question {n}, option {m}: 'label' is required and must be a non-empty string."
                )));
            }
            if !o.get("description").is_some_and(Value::is_string) {
                return Err(Worded::error(format!(
                    "Question {n}, option {m}: 'description' is required and must be a string."
                )));
            }
        }
    }
    Ok(())
}

/// The first way the arguments miss the schema, as the tool's validator words it.
fn schema_problem(args: &Map<String, Value>) -> Option<String> {
    let Some(questions) = args.get("questions") else {
        return Some("params must have required property 'questions'".into());
    };
    let Some(questions) = questions.as_array() else {
        return Some("params/questions must be array".into());
    };
    if questions.is_empty() {
        return Some("params/questions must NOT have fewer than 1 items".into());
    }
    if questions.len() > 4 {
        return Some("params/questions must NOT have more than 4 items".into());
    }
    for (i, q) in questions.iter().enumerate() {
        let at = format!("params/questions/{i}");
        let Some(q) = q.as_object() else {
            return Some(format!("{at} must be object"));
        };
        for key in ["question", "header", "type"] {
            if !q.contains_key(key) {
                return Some(format!("{at} must have required property '{key}'"));
            }
        }
        for key in ["question", "header", "type", "placeholder"] {
            if q.get(key).is_some_and(|v| !v.is_string()) {
                return Some(format!("{at}/{key} must be string"));
            }
        }
        if q["header"]
            .as_str()
            .is_some_and(|h| h.chars().count() > HEADER_MAX)
        {
            return Some(format!(
                "{at}/header must NOT have more than {HEADER_MAX} characters"
            ));
        }
        if !matches!(q["type"].as_str(), Some("choice" | "text" | "yesno")) {
            return Some(format!(
                "{at}/type must be equal to one of the allowed values"
            ));
        }
        if q.get("options").is_some_and(|v| !v.is_array()) {
            return Some(format!("{at}/options must be array"));
        }
        if q.get("multiSelect").is_some_and(|v| !v.is_boolean()) {
            return Some(format!("{at}/multiSelect must be boolean"));
        }
    }
    None
}

/// The create body: a form of the questions, open for a week.
pub fn create_body(args: &Map<String, Value>) -> Value {
    let questions: Vec<Value> = args["questions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|q| {
            let mut q = q.clone();
            // Options on a text or yes/no question are not shown: the tool ignores them.
            if q["type"] != "choice"
                && let Some(obj) = q.as_object_mut()
            {
                obj.remove("options");
                obj.remove("multiSelect");
                if q["type"] == "yesno" {
                    q.as_object_mut().map(|o| o.remove("placeholder"));
                }
            }
            q
        })
        .collect();
    json!({
        "kind": "form",
        "question": title(args.get("questions")),
        "questions": questions,
        "allow_remark": false,
        "ttl_minutes": PROFILE_TTL_MINUTES,
    })
}

/// A resolved decision as the tool returns it.
pub fn word(asked: &Asked<'_>) -> Worded {
    if !asked.has_answer() {
        return Worded::ok(DISMISSED.to_string(), None);
    }
    let mut answers = Map::new();
    for (i, q) in asked.questions().iter().enumerate() {
        let mut parts = q.selected.clone();
        parts.extend(q.custom.clone());
        if !parts.is_empty() {
            answers.insert(i.to_string(), json!(parts.join(", ")));
        }
    }
    let result = json!({ "answers": answers });
    Worded::ok(result.to_string(), Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(v: Value) -> String {
        check(v.as_object().unwrap()).unwrap_err().text
    }

    #[test]
    fn the_tools_own_refusals() {
        let choice = |options: Value| json!({"questions": [{"question": "Q?", "header": "H", "type": "choice", "options": options}]});
        assert_eq!(
            refusal(choice(json!([{"label": "a", "description": ""}]))),
            "Question 1: type='choice' requires 'options' array with 2-4 items."
        );
        let five: Vec<Value> = (0..5)
            .map(|i| json!({"label": i.to_string(), "description": ""}))
            .collect();
        assert_eq!(
            refusal(choice(json!(five))),
            "Question 1: 'options' array must have at most 4 items."
        );
        assert_eq!(
            refusal(choice(
                json!([{"label": " ", "description": ""}, {"label": "b", "description": ""}])
            )),
            "Question 1, option 1: 'label' is required and must be a non-empty string."
        );
        assert_eq!(
            refusal(choice(
                json!([{"label": "a", "description": ""}, {"label": "b"}])
            )),
            "Question 1, option 2: 'description' is required and must be a string."
        );
        assert_eq!(
            refusal(
                json!({"questions": [{"question": "Q?", "header": "Seventeen chars!!", "type": "text"}]})
            ),
            "params/questions/0/header must NOT have more than 16 characters"
        );
        assert_eq!(
            refusal(json!({"questions": [{"question": "Q?", "header": "H"}]})),
            "params/questions/0 must have required property 'type'"
        );
        assert_eq!(
            refusal(json!({"questions": []})),
            "params/questions must NOT have fewer than 1 items"
        );
    }
}
