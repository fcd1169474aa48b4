//! `ask_user_question`: the coding-agent shape turned into a `form` decision, and its answer
//! turned back into the sentence coding agents' own ask tools return.

use serde_json::{Map, Value};

use crate::domain::Status;
use crate::service::DecisionView;

/// The longest decision question (DESIGN.md §2).
const MAX_QUESTION_CHARS: usize = 2000;

/// The create body for the tool's arguments: a `form` decision with the `questions` as given,
/// titled by the questions themselves. `wait_s` is the tool's own and is taken out; every other
/// field goes to the create validation as is.
pub fn create_body(args: &Map<String, Value>) -> Value {
    let mut body = args.clone();
    body.remove("wait_s");
    body.insert("kind".into(), Value::String("form".into()));
    if !body.contains_key("question") {
        let title = title(args.get("questions"));
        body.insert("question".into(), Value::String(title));
    }
    Value::Object(body)
}

/// One line naming the questions, for the feed and the notification.
fn title(questions: Option<&Value>) -> String {
    let texts: Vec<&str> = questions
        .and_then(Value::as_array)
        .map(|qs| {
            qs.iter()
                .filter_map(|q| q.get("question").and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let title = match texts.as_slice() {
        [] => "Questions from your agent".to_string(),
        [one] => one.to_string(),
        many => many.join(" · "),
    };
    title.chars().take(MAX_QUESTION_CHARS).collect()
}

/// The answered text, as Claude Code's AskUserQuestion words it:
/// `User has answered your questions: "<question>"="<answer>", …. You can now continue with the
/// user's answers in mind.` Multi-select answers are joined with ", ". `None` unless answered.
pub fn answered_text(questions: &Value, view: &DecisionView) -> Option<String> {
    if view.status != Status::Answered {
        return None;
    }
    let outcome = view.outcome.as_ref()?.as_object()?;
    let mut pairs = Vec::new();
    for q in questions.as_array()? {
        let Some(text) = q.get("question").and_then(Value::as_str) else {
            continue;
        };
        // The outcome is keyed as the create validation names fields: trimmed id, else text.
        let key = q
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or(text)
            .trim()
            .to_string();
        let answer = outcome.get(&key).map(answer_words).unwrap_or_default();
        pairs.push(format!("\"{}\"=\"{answer}\"", text.trim()));
    }
    let remark = view
        .remark
        .as_deref()
        .map(|r| format!(" The user added a remark: \"{r}\"."))
        .unwrap_or_default();
    Some(format!(
        "User has answered your questions: {}. You can now continue with the user's answers in mind.{remark}",
        pairs.join(", ")
    ))
}

/// An answer as words: a string as is, a multi-select joined with ", ".
fn answer_words(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(answer_words)
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::domain::Kind;

    fn view(status: Status, outcome: Option<Value>, remark: Option<&str>) -> DecisionView {
        DecisionView {
            decision_id: Uuid::nil(),
            kind: Kind::Form,
            question: "q".into(),
            project: None,
            status,
            outcome,
            outcome_source: None,
            custom: false,
            remark: remark.map(String::from),
            answered_at: None,
            created_at: datetime!(2025-03-01 10:00 UTC),
            expires_at: datetime!(2025-03-01 11:00 UTC),
            web_url: "http://x/d/t".into(),
            metadata: Map::new(),
            answer_text: String::new(),
            notifications: vec![],
        }
    }

    fn questions() -> Value {
        json!([
            {"question": "Which database?", "header": "DB", "options": ["PostgreSQL", "SQLite"]},
            {"id": "langs", "question": "Which languages?", "options": ["Rust", "Go", "Zig"], "multiSelect": true}
        ])
    }

    #[test]
    fn the_answer_reads_like_claude_codes_ask_user_question() {
        let v = view(
            Status::Answered,
            Some(json!({"Which database?": "SQLite", "langs": ["Rust", "Zig"]})),
            None,
        );
        assert_eq!(
            answered_text(&questions(), &v).unwrap(),
            "User has answered your questions: \"Which database?\"=\"SQLite\", \
             \"Which languages?\"=\"Rust, Zig\". You can now continue with the user's answers in mind."
        );
    }

    #[test]
    fn a_remark_follows_the_answers() {
        let v = view(
            Status::Answered,
            Some(json!({"Which database?": "SQLite", "langs": []})),
            Some("only for now"),
        );
        assert!(
            answered_text(&questions(), &v)
                .unwrap()
                .ends_with("in mind. The user added a remark: \"only for now\".")
        );
    }

    #[test]
    fn only_an_answered_decision_has_answers() {
        assert_eq!(
            answered_text(&questions(), &view(Status::Pending, None, None)),
            None
        );
        assert_eq!(
            answered_text(&questions(), &view(Status::Declined, None, None)),
            None
        );
    }

    #[test]
    fn the_body_is_a_form_titled_by_its_questions() {
        let args = json!({"questions": questions(), "wait_s": 5, "project": "p"});
        let body = create_body(args.as_object().unwrap());
        assert_eq!(body["kind"], "form");
        assert_eq!(body["question"], "Which database? · Which languages?");
        assert_eq!(body["project"], "p");
        assert!(body.get("wait_s").is_none());
        let one = json!({"questions": [{"question": "Ship it?"}]});
        assert_eq!(
            create_body(one.as_object().unwrap())["question"],
            "Ship it?"
        );
        let none = json!({"questions": 3});
        assert_eq!(
            create_body(none.as_object().unwrap())["question"],
            "Questions from your agent"
        );
    }
}
