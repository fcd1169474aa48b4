//! A browser form post (`application/x-www-form-urlencoded`) turned into the `AnswerInput`
//! the API takes, by the decision's kind. What was sent is kept so a refused answer can be
//! shown again as the person left it.

use serde_json::{Map, Value};

use crate::domain::spec::{FieldInput, FormField, KindSpec};
use crate::domain::webauthn::AssertionInput;
use crate::domain::{AnswerAction, AnswerInput, DecisionSpec};

/// The radio or checkbox value that stands for "Other (type your own)".
pub use crate::domain::options::OTHER_MARKER as OTHER;

/// The name of the text box holding the typed "Other" of a form field.
pub fn other_name(field: &str) -> String {
    format!("other:{field}")
}

/// The name of the note box of a question.
pub fn note_name(field: &str) -> String {
    format!("note:{field}")
}

/// The fields of one form post, in order, repeated names kept.
#[derive(Debug, Clone, Default)]
pub struct Submitted {
    pairs: Vec<(String, String)>,
}

impl Submitted {
    pub fn parse(body: &[u8]) -> Self {
        // Browsers send a textarea's line breaks as CRLF; agents get them as typed, `\n`.
        let unix = |v: String| {
            if v.contains('\r') {
                v.replace("\r\n", "\n").replace('\r', "\n")
            } else {
                v
            }
        };
        Submitted {
            pairs: url::form_urlencoded::parse(body)
                .into_owned()
                .map(|(k, v)| (k, unix(v)))
                .collect(),
        }
    }

    /// The first value of `name`, if sent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in the order sent.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The action asked for; an unknown one is `None`.
    pub fn action(&self) -> Option<AnswerAction> {
        match self.get("action").unwrap_or("answer") {
            "answer" | "" => Some(AnswerAction::Answer),
            "decline" => Some(AnswerAction::Decline),
            "done" => Some(AnswerAction::Done),
            "skip" => Some(AnswerAction::Skip),
            _ => None,
        }
    }

    /// Whether the post came from the feed and should go back there.
    pub fn returns_to_feed(&self) -> bool {
        self.get("return") == Some("feed")
    }

    /// Whether the post came from the session page (many calls on one screen) and should go
    /// back there.
    pub fn returns_to_session(&self) -> bool {
        self.get("return") == Some("session")
    }

    /// The passkey assertion the approval page's script adds to an Allow (`passkey_id`,
    /// `passkey_client_data`, `passkey_authenticator_data`, `passkey_signature`).
    fn passkey(&self) -> Option<AssertionInput> {
        let id = self.get("passkey_id").filter(|v| !v.is_empty())?;
        let part = |name| self.get(name).unwrap_or_default().to_string();
        Some(AssertionInput {
            id: id.to_string(),
            client_data_json: part("passkey_client_data"),
            authenticator_data: part("passkey_authenticator_data"),
            signature: part("passkey_signature"),
        })
    }

    /// The answer this post makes for a decision of `spec`.
    pub fn to_input(&self, spec: &DecisionSpec, action: AnswerAction) -> AnswerInput {
        let remark = self.get("remark").map(str::to_string);
        let mut input = AnswerInput {
            action,
            value: None,
            other: None,
            remark,
            notes: None,
            command: self.get("command").map(str::to_string),
            passkey: self.passkey(),
        };
        if action != AnswerAction::Answer {
            return input;
        }
        match &spec.body {
            KindSpec::Bool { .. } | KindSpec::Text { .. } => {
                input.value = self.get("value").map(|v| Value::String(v.to_string()));
            }
            KindSpec::Choose { multi, .. } => {
                let picked = self.all("value");
                let other_picked = picked.contains(&OTHER);
                let labels: Vec<Value> = picked
                    .iter()
                    .filter(|v| **v != OTHER)
                    .map(|v| Value::String(v.to_string()))
                    .collect();
                let typed = self.get("other").map(str::trim).filter(|t| !t.is_empty());
                // Typed text counts when "Other" is picked, or when nothing else is.
                if other_picked || labels.is_empty() {
                    input.other = typed.map(str::to_string);
                }
                input.value = match (multi, labels.len()) {
                    (_, 0) => None,
                    (true, _) => Some(Value::Array(labels)),
                    (false, _) => labels.into_iter().next(),
                };
            }
            KindSpec::Form(form) => {
                let mut object = Map::new();
                for field in &form.fields {
                    if let Some(v) = self.field_value(field) {
                        object.insert(field.name.clone(), v);
                    }
                }
                input.value = Some(Value::Object(object));
                let notes: Map<String, Value> = form
                    .fields
                    .iter()
                    .filter_map(|f| {
                        let note = self.get(&note_name(&f.name))?.trim();
                        (!note.is_empty()).then(|| (f.name.clone(), Value::String(note.into())))
                    })
                    .collect();
                input.notes = (!notes.is_empty()).then_some(Value::Object(notes));
            }
            KindSpec::Todo => {
                input.value = self.get("value").map(|v| Value::String(v.to_string()));
            }
        }
        input
    }

    fn field_value(&self, field: &FormField) -> Option<Value> {
        let name = field.name.as_str();
        let typed_other = || {
            self.get(&other_name(name))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| Value::String(t.to_string()))
        };
        match &field.input {
            FieldInput::MultiChoice { .. } => {
                let mut items: Vec<Value> = Vec::new();
                for v in self.all(name) {
                    if v == OTHER {
                        items.extend(typed_other());
                    } else {
                        items.push(Value::String(v.to_string()));
                    }
                }
                (!items.is_empty()).then_some(Value::Array(items))
            }
            FieldInput::Choice { .. } => match self.get(name) {
                Some(OTHER) => typed_other(),
                Some(v) if !v.is_empty() => Some(Value::String(v.to_string())),
                _ => None,
            },
            // An unticked optional checkbox sends nothing: that is a "no".
            FieldInput::Boolean if !field.required => Some(Value::Bool(self.get(name).is_some())),
            _ => self
                .get(name)
                .filter(|v| !v.is_empty())
                .map(|v| Value::String(datetime_local_as_utc(field, v))),
        }
    }
}

/// A `datetime-local` input sends `2026-11-21T15:00` with no zone; the page labels the field
/// as UTC, so it is read as UTC.
fn datetime_local_as_utc(field: &FormField, v: &str) -> String {
    let is_datetime = matches!(
        field.input,
        FieldInput::Text {
            format: Some(crate::domain::spec::StringFormat::DateTime),
            ..
        }
    );
    let no_zone = v.len() == 16 && v.as_bytes().get(10) == Some(&b'T');
    let no_seconds_zone = v.len() == 19 && v.as_bytes().get(10) == Some(&b'T');
    match (is_datetime, no_zone, no_seconds_zone) {
        (true, true, _) => format!("{v}:00Z"),
        (true, _, true) => format!("{v}Z"),
        _ => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::new_decision::parse_new_decision;
    use serde_json::json;

    fn spec(v: Value) -> DecisionSpec {
        parse_new_decision(&v).unwrap().spec
    }

    fn post(s: &str) -> Submitted {
        Submitted::parse(s.as_bytes())
    }

    #[test]
    fn choose_with_other_picked_sends_the_typed_text() {
        let spec = spec(json!({"question": "Q", "kind": "choose", "options": ["A", "B"]}));
        let input = post("value=__other__&other=Redis").to_input(&spec, AnswerAction::Answer);
        assert_eq!(input.value, None);
        assert_eq!(input.other.as_deref(), Some("Redis"));
        let input = post("value=A&other=ignored").to_input(&spec, AnswerAction::Answer);
        assert_eq!(input.value, Some(json!("A")));
        assert_eq!(input.other, None);
    }

    #[test]
    fn multi_choose_sends_every_label() {
        let spec = spec(
            json!({"question": "Q", "kind": "choose", "multi": true, "options": ["A", "B", "C"]}),
        );
        let input =
            post("value=C&value=A&value=__other__&other=D").to_input(&spec, AnswerAction::Answer);
        assert_eq!(input.value, Some(json!(["C", "A"])));
        assert_eq!(input.other.as_deref(), Some("D"));
    }

    #[test]
    fn form_fields_are_collected_by_name() {
        let spec = spec(
            json!({"question": "Q", "kind": "form", "schema": {"properties": {
            "n": {"type": "integer"}, "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "when": {"type": "string", "format": "date-time"}}}}),
        );
        let input =
            post("n=3&tags=y&tags=x&when=2026-11-21T15%3A00").to_input(&spec, AnswerAction::Answer);
        assert_eq!(
            input.value,
            Some(
                json!({"n": "3", "ok": false, "tags": ["y", "x"], "when": "2026-11-21T15:00:00Z"})
            )
        );
    }

    #[test]
    fn question_choices_take_their_own_other_box() {
        let spec = spec(json!({"question": "Q", "kind": "form", "questions": [
            {"id": "db", "question": "Which?", "options": ["Postgres", "SQLite"]}]}));
        let input = post("db=__other__&other%3Adb=DuckDB").to_input(&spec, AnswerAction::Answer);
        assert_eq!(input.value, Some(json!({"db": "DuckDB"})));
    }

    #[test]
    fn line_breaks_arrive_as_newlines() {
        let sent = post("value=a%0D%0Ab%0Dc");
        assert_eq!(sent.get("value"), Some("a\nb\nc"));
    }

    #[test]
    fn actions_are_read_and_unknown_ones_refused() {
        assert_eq!(post("").action(), Some(AnswerAction::Answer));
        assert_eq!(post("action=decline").action(), Some(AnswerAction::Decline));
        assert_eq!(post("action=explode").action(), None);
        assert!(post("return=feed").returns_to_feed());
    }
}
