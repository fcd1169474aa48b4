//! Claude Code's `AskUserQuestion` (`/mcp/claude`), also served as `ask_user_question` on
//! `/mcp`: 1–4 questions, each with a header chip of at most 12 characters and 2–4 options
//! (label, description, optional preview). Its result reads "User has answered your
//! questions: "…"="…", …" with the picked preview and the person's notes; `answers` given in
//! the call come back at once without asking anyone.

use serde_json::{Map, Value, json};

use super::answers::Asked;
use super::{PROFILE_TTL_MINUTES, Worded, title};
use crate::domain::Status;

/// The tool's name on `/mcp/claude`.
pub const TOOL: &str = "AskUserQuestion";
/// Its name on `/mcp`.
pub const HOSTED_TOOL: &str = "ask_user_question";

/// The widest header chip.
pub const HEADER_MAX: usize = 12;

/// The tool's input schema; `extras` adds sayso's own fields (wait, project, context, ttl).
pub fn schema(extras: bool) -> Value {
    let option = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "What the user picks; the answer holds this label."},
            "description": {"type": "string", "description": "What choosing this option means."},
            "preview": {"type": "string", "description": "Optional content shown beside the option (Markdown or an HTML fragment, shown sanitised); the picked one comes back as the selected preview."}
        },
        "required": ["label", "description"],
        "additionalProperties": false
    });
    let mut schema = json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "description": "1-4 multiple-choice questions asked together.",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The full question."},
                        "header": {"type": "string", "maxLength": HEADER_MAX, "description": "A chip label of at most 12 characters."},
                        "options": {"type": "array", "minItems": 2, "maxItems": 4, "items": option, "description": "2-4 distinct options; the user may always type their own answer instead."},
                        "multiSelect": {"type": "boolean", "description": "Several options may be picked."}
                    },
                    "required": ["question", "header", "options"],
                    "additionalProperties": false
                }
            },
            "answers": {"type": "object", "description": "Answers already known, keyed by question text (a label, or a list for multi-select): returned at once, nobody is asked."},
            "annotations": {"type": "object", "description": "Per-question {preview, notes} keyed by question text, returned with answers given in the call."},
            "metadata": {
                "type": "object",
                "properties": {"source": {"type": "string", "description": "Why the question was asked; kept with the decision."}},
                "additionalProperties": false
            }
        },
        "required": ["questions"]
    });
    if extras {
        let props = schema["properties"].as_object_mut().expect("properties");
        props.insert(
            "project".into(),
            json!({"type": "string", "description": "Optional project name to group questions."}),
        );
        props.insert("context_md".into(), json!({"type": "string", "description": "Optional Markdown shown above the questions."}));
        props.insert("ttl_minutes".into(), json!({"type": "integer", "minimum": 1, "maximum": 43200, "description": "Minutes until the questions expire (default a week)."}));
        props.insert("wait_s".into(), json!({"type": "integer", "minimum": 0, "description": "Seconds to wait for the answers in this call (default 50); after that, await_decision keeps waiting."}));
    } else {
        schema["additionalProperties"] = json!(false);
    }
    schema
}

/// The tool's own checks, in its order, with its messages.
pub fn check(args: &Map<String, Value>) -> Result<(), Worded> {
    let questions = match args.get("questions").and_then(Value::as_array) {
        Some(qs) if !qs.is_empty() => qs,
        _ => return Err(Worded::error("Provide 1-4 questions")),
    };
    if questions.len() > 4 {
        return Err(Worded::error("At most 4 questions allowed"));
    }
    let text = |q: &Value, key: &str| q.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    for q in questions {
        let n = q
            .get("options")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if !(2..=4).contains(&n) {
            return Err(Worded::error(format!(
                "Question \"{}\" must have 2-4 options",
                text(q, "question")
            )));
        }
    }
    let mut seen = Vec::new();
    for q in questions {
        let question = text(q, "question");
        if seen.contains(&question) {
            return Err(Worded::error(format!(
                "Question texts must be unique: \"{question}\""
            )));
        }
        seen.push(question.clone());
        // The tool counts as JavaScript does: UTF-16 units.
        if text(q, "header").encode_utf16().count() > HEADER_MAX {
            return Err(Worded::error(format!(
                "header for \"{question}\" exceeds {HEADER_MAX} chars"
            )));
        }
        let mut labels = Vec::new();
        for o in q["options"].as_array().into_iter().flatten() {
            let label = text(o, "label");
            if labels.contains(&label) {
                return Err(Worded::error(format!(
                    "Option labels must be unique within question \"{question}\""
                )));
            }
            if let Some(problem) = o
                .get("preview")
                .and_then(Value::as_str)
                .and_then(preview_problem)
            {
                return Err(Worded::error(format!(
                    "Option \"{label}\" in question \"{question}\": {problem}"
                )));
            }
            labels.push(label);
        }
    }
    Ok(())
}

/// What the tool refuses in a preview: a whole document, or script and style. (It also
/// wants HTML; sayso takes Markdown too, and shows both sanitised.)
fn preview_problem(preview: &str) -> Option<&'static str> {
    let lower = preview.to_ascii_lowercase();
    let opens = |names: &[&str]| {
        lower.match_indices('<').any(|(at, _)| {
            let rest = lower[at + 1..].trim_start();
            names.iter().any(|n| {
                rest.starts_with(n)
                    && !rest[n.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
    };
    if opens(&["html", "body", "!doctype"]) {
        return Some(
            "preview must be an HTML fragment, not a full document (no <html>, <body>, or <!DOCTYPE>)",
        );
    }
    if opens(&["script", "style"]) {
        return Some(
            "preview must not contain <script> or <style> tags. Use inline styles via the style attribute if needed.",
        );
    }
    None
}

/// The result for `answers` given in the call: nobody is asked. `None` when there are none.
pub fn given_answers(args: &Map<String, Value>) -> Option<Worded> {
    let answers = args.get("answers")?.as_object().filter(|a| !a.is_empty())?;
    let annotations = args.get("annotations").and_then(Value::as_object);
    let entries = answers.iter().map(|(question, answer)| {
        let display = match answer {
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", "),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let note = annotations.and_then(|a| a.get(question));
        let field = |k: &str| {
            note.and_then(|n| n.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        entry(question, &display, field("preview"), field("notes"))
    });
    let mut data = json!({"questions": args.get("questions").cloned().unwrap_or(json!([])), "answers": answers});
    if let Some(a) = annotations {
        data["annotations"] = Value::Object(a.clone());
    }
    Some(Worded::ok(sentence(entries.collect()), Some(data)))
}

/// The create body: a form of the questions, open for a week unless `ttl_minutes` says.
pub fn create_body(args: &Map<String, Value>) -> Value {
    let mut body = Map::new();
    for key in ["questions", "project", "context_md", "ttl_minutes"] {
        if let Some(v) = args.get(key) {
            body.insert(key.into(), v.clone());
        }
    }
    if let Some(source) = args.get("metadata") {
        body.insert("metadata".into(), source.clone());
    }
    body.insert("kind".into(), json!("form"));
    body.insert("question".into(), json!(title(args.get("questions"))));
    body.insert("allow_remark".into(), json!(false));
    body.entry("ttl_minutes")
        .or_insert(json!(PROFILE_TTL_MINUTES));
    Value::Object(body)
}

/// A resolved decision as the tool returns it; a decline is the tool's error.
pub fn word(asked: &Asked<'_>) -> Worded {
    if !asked.has_answer() {
        let reason = match asked.decision.status {
            Status::Declined => asked.decision.remark.clone(),
            Status::Expired => Some("expired".into()),
            _ => Some("cancelled".into()),
        };
        let reason = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        return Worded::error(format!("User declined to answer questions{reason}"));
    }
    let mut answers = Map::new();
    let mut annotations = Map::new();
    let mut questions = Vec::new();
    let mut entries = Vec::new();
    for q in asked.questions() {
        let text = q.question().to_string();
        let mut picked: Vec<String> = q.selected.clone();
        picked.extend(q.custom.clone());
        let answer = if q.multi {
            json!(picked)
        } else {
            json!(picked.join(", "))
        };
        entries.push(entry(&text, &picked.join(", "), q.preview, q.note));
        let mut note = Map::new();
        if let Some(p) = q.preview {
            note.insert("preview".into(), json!(p));
        }
        if let Some(n) = q.note {
            note.insert("notes".into(), json!(n));
        }
        if !note.is_empty() {
            annotations.insert(text.clone(), Value::Object(note));
        }
        let options: Vec<Value> = q
            .options
            .iter()
            .map(|o| {
                let mut v = json!({"label": o.label, "description": o.description.clone().unwrap_or_default()});
                if let Some(p) = &o.preview {
                    v["preview"] = json!(p);
                }
                v
            })
            .collect();
        questions.push(json!({
            "question": text,
            "header": q.field.header.clone().unwrap_or_default(),
            "options": options,
            "multiSelect": q.multi,
        }));
        answers.insert(text, answer);
    }
    let mut data = json!({"questions": questions, "answers": answers});
    if !annotations.is_empty() {
        data["annotations"] = Value::Object(annotations);
    }
    Worded::ok(sentence(entries), Some(data))
}

/// `"question"="answer"`, then the picked preview and the notes.
fn entry(question: &str, display: &str, preview: Option<&str>, notes: Option<&str>) -> String {
    let mut parts = vec![format!("\"{question}\"=\"{display}\"")];
    if let Some(p) = preview {
        parts.push(format!("selected preview:\n{p}"));
    }
    if let Some(n) = notes {
        parts.push(format!("user notes: {n}"));
    }
    parts.join(" ")
}

fn sentence(entries: Vec<String>) -> String {
    format!(
        "User has answered your questions: {}. You can now continue with the user's answers in mind.",
        entries.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn q(question: &str, header: &str, labels: &[&str]) -> Value {
        let options: Vec<Value> = labels
            .iter()
            .map(|l| json!({"label": l, "description": ""}))
            .collect();
        json!({"question": question, "header": header, "options": options})
    }

    fn refusal(v: Value) -> String {
        check(&args(v)).unwrap_err().text
    }

    #[test]
    fn the_tools_own_refusals() {
        assert_eq!(refusal(json!({"questions": []})), "Provide 1-4 questions");
        let five: Vec<Value> = (0..5)
            .map(|i| q(&format!("Q{i}?"), "H", &["a", "b"]))
            .collect();
        assert_eq!(
            refusal(json!({"questions": five})),
            "At most 4 questions allowed"
        );
        assert_eq!(
            refusal(json!({"questions": [q("Which?", "H", &["a"])]})),
            "Question \"Which?\" must have 2-4 options"
        );
        assert_eq!(
            refusal(
                json!({"questions": [q("Which?", "H", &["a", "b"]), q("Which?", "H", &["a", "b"])]})
            ),
            "Question texts must be unique: \"Which?\""
        );
        assert_eq!(
            refusal(json!({"questions": [q("Which?", "Thirteen char", &["a", "b"])]})),
            "header for \"Which?\" exceeds 12 chars"
        );
        assert_eq!(
            refusal(json!({"questions": [q("Which?", "H", &["a", "a"])]})),
            "Option labels must be unique within question \"Which?\""
        );
        let mut scripted = q("Which?", "H", &["a", "b"]);
        scripted["options"][0]["preview"] = json!("<div><SCRIPT>x()</script></div>");
        assert!(
            refusal(json!({"questions": [scripted]})).starts_with(
                "Option \"a\" in question \"Which?\": preview must not contain <script>"
            )
        );
        let mut fine = q("Which?", "H", &["a", "b"]);
        fine["options"][0]["preview"] = json!("```\nmarkdown\n```<b>bold</b>");
        assert!(check(&args(json!({"questions": [fine]}))).is_ok());
    }

    #[test]
    fn given_answers_return_at_once_in_the_tools_words() {
        let w = given_answers(&args(json!({
            "questions": [q("Which?", "H", &["a", "b"])],
            "answers": {"Which?": "a", "Also?": ["x", "y"]},
            "annotations": {"Which?": {"preview": "P", "notes": "N"}}
        })))
        .unwrap();
        assert_eq!(
            w.text,
            "User has answered your questions: \"Which?\"=\"a\" selected preview:\nP user notes: N, \
             \"Also?\"=\"x, y\". You can now continue with the user's answers in mind."
        );
        assert!(given_answers(&args(json!({"questions": [], "answers": {}}))).is_none());
    }
}
