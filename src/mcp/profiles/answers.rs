//! A resolved question form read back per question: which options were picked, what was
//! typed, the note and the picked option's preview. Every profile words its result from this.

use serde_json::{Map, Value};

use crate::domain::spec::{ChoiceOption, FieldInput, FormField, KindSpec};
use crate::domain::{Decision, OutcomeSource, Status};

/// A decision asked through a profile, with the notes its answer carried.
pub struct Asked<'a> {
    pub decision: &'a Decision,
    /// `{field name: note}` from the answer's audit-trail entry.
    pub notes: &'a Map<String, Value>,
}

/// One question and what the person answered to it.
pub struct QuestionAnswer<'a> {
    pub field: &'a FormField,
    /// The offered options (none for a text question).
    pub options: &'a [ChoiceOption],
    pub multi: bool,
    pub recommended: Option<usize>,
    /// The labels of the options picked, in the order the answer gave them.
    pub selected: Vec<String>,
    /// Text typed instead of (or, for multi-select, besides) an option.
    pub custom: Option<String>,
    pub note: Option<&'a str>,
    /// The preview of the single option picked, when it has one.
    pub preview: Option<&'a str>,
}

impl QuestionAnswer<'_> {
    /// The question's text.
    pub fn question(&self) -> &str {
        self.field.title.as_deref().unwrap_or(&self.field.name)
    }

    /// The labels offered.
    pub fn labels(&self) -> Vec<String> {
        self.options.iter().map(|o| o.label.clone()).collect()
    }
}

impl<'a> Asked<'a> {
    /// Whether the answer was chosen by the timeout (the default outcome on expiry).
    pub fn timed_out(&self) -> bool {
        self.decision.status == Status::Expired
            && self.decision.outcome_source == Some(OutcomeSource::Default)
    }

    /// Whether the decision carries an answer (a person's, or the timeout's).
    pub fn has_answer(&self) -> bool {
        self.decision.status == Status::Answered || self.timed_out()
    }

    /// Every question of the form, with its answer.
    pub fn questions(&self) -> Vec<QuestionAnswer<'a>> {
        let KindSpec::Form(form) = &self.decision.spec.body else {
            return vec![];
        };
        let empty = Map::new();
        let outcome = self
            .decision
            .outcome
            .as_ref()
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        form.fields
            .iter()
            .map(|f| read(f, outcome.get(&f.name), self.notes))
            .collect()
    }
}

fn read<'a>(
    field: &'a FormField,
    value: Option<&Value>,
    notes: &'a Map<String, Value>,
) -> QuestionAnswer<'a> {
    let (options, multi, recommended): (&[ChoiceOption], bool, Option<usize>) = match &field.input {
        FieldInput::Choice {
            options,
            recommended,
            ..
        } => (options, false, *recommended),
        FieldInput::MultiChoice {
            options,
            recommended,
            ..
        } => (options, true, *recommended),
        _ => (&[], false, None),
    };
    let items: Vec<&str> = match value {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let mut selected = Vec::new();
    let mut typed = Vec::new();
    for item in items {
        match options.iter().find(|o| o.value == item) {
            Some(o) => selected.push(o.label.clone()),
            None => typed.push(item.to_string()),
        }
    }
    let preview = match (multi, selected.as_slice()) {
        (false, [one]) => options
            .iter()
            .find(|o| &o.label == one)
            .and_then(|o| o.preview.as_deref()),
        _ => None,
    };
    QuestionAnswer {
        field,
        options,
        multi,
        recommended,
        selected,
        custom: (!typed.is_empty()).then(|| typed.join(", ")),
        note: notes.get(&field.name).and_then(Value::as_str),
        preview,
    }
}

/// The notes of a decision's answer, from its audit trail (the newest answer's entry).
pub fn notes_of(events: &[crate::domain::DecisionEvent]) -> Map<String, Value> {
    events
        .iter()
        .rev()
        .find(|e| e.kind == crate::domain::EventKind::Answered)
        .and_then(|e| e.detail.get("notes"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}
