//! What the answer page shows, built from a decision (and, after a refused answer, from what
//! the person sent and what was wrong with it).

use std::collections::HashMap;

use serde_json::Value;
use time::OffsetDateTime;

use super::submitted::{OTHER, Submitted, note_name, other_name};
use crate::domain::spec::{
    Attachment, ChoiceOption, FieldInput, FormField, FormSource, KindSpec, Shape, StringFormat,
};
use crate::domain::{CancelReason, Decision, Issue, OutcomeSource, Status};
use crate::render;
use crate::render::T;

pub mod decided;
mod people;

pub use people::{PeopleView, PersonLink, people_view};

/// The controls of the page, by kind.
pub enum Body {
    Bool {
        yes_label: String,
        no_label: String,
    },
    Choose(ChoiceView),
    Text {
        placeholder: String,
        value: String,
    },
    Form {
        fields: Vec<FieldView>,
        questions: bool,
    },
    Todo,
}

/// A list of options to pick from, with "Other" when allowed.
pub struct ChoiceView {
    /// The form name of the options.
    pub name: String,
    pub multi: bool,
    pub options: Vec<OptionView>,
    pub allow_other: bool,
    pub other_id: String,
    pub other_name: String,
    /// The id of the "Other" text box.
    pub other_text_id: String,
    pub other_checked: bool,
    pub other_value: String,
    pub placeholder: String,
}

pub struct OptionView {
    pub id: String,
    pub value: String,
    pub label: String,
    pub description: Option<String>,
    pub preview_html: Option<String>,
    pub recommended: bool,
    pub checked: bool,
}

/// One field of a form.
pub struct FieldView {
    pub id: String,
    pub name: String,
    pub label: String,
    pub description: Option<String>,
    pub header: Option<String>,
    pub required: bool,
    pub control: Control,
    pub error: Option<String>,
    /// The question's note box, when the asking tool's result carries notes.
    pub note: Option<NoteView>,
}

/// A note box beside a question.
pub struct NoteView {
    pub id: String,
    pub name: String,
    pub value: String,
}

pub enum Control {
    Input {
        kind: &'static str,
        value: String,
        min: Option<String>,
        max: Option<String>,
        step: Option<&'static str>,
        minlength: Option<u64>,
        maxlength: Option<u64>,
        placeholder: String,
    },
    TextArea {
        value: String,
        placeholder: String,
    },
    Select {
        options: Vec<OptionView>,
    },
    Radios(ChoiceView),
    Checkboxes(ChoiceView),
    Checkbox {
        checked: bool,
    },
    YesNo {
        yes: bool,
        no: bool,
    },
}

/// How a resolved decision ended, for people.
pub struct ResultView {
    pub status: &'static str,
    pub heading: String,
    /// What was answered: (field label, value) pairs; the label is empty for a single value.
    pub lines: Vec<(String, String)>,
    pub note: Option<String>,
    pub remark: Option<String>,
    pub when: String,
    pub when_iso: String,
}

impl ResultView {
    /// The one value answered, when it has no label (any answer but a form's): a paragraph
    /// of its own, since a list of terms needs a term for each value.
    pub fn single(&self) -> Option<&str> {
        match self.lines.as_slice() {
            [(label, value)] if label.is_empty() => Some(value),
            _ => None,
        }
    }
}

/// Problems with a refused answer, by where they belong on the page.
#[derive(Default)]
pub struct PageErrors {
    /// Shown at the top, all of them.
    pub summary: Vec<String>,
    /// By control: `value`, `other`, `remark`, or a form field's name.
    pub by_control: HashMap<String, String>,
}

impl PageErrors {
    pub fn from_issues(issues: &[Issue]) -> Self {
        let mut e = PageErrors::default();
        for issue in issues {
            let control = issue
                .path
                .strip_prefix("value.")
                .unwrap_or(issue.path.as_str());
            // A path into a field (`value.tags[2]`) belongs to the field.
            let control = control.split('[').next().unwrap_or(control).to_string();
            // The summary names the field; the message beside it need not.
            e.summary.push(match control.as_str() {
                "" | "value" | "action" => issue.message.clone(),
                name => format!("{name}: {}", issue.message),
            });
            e.by_control.entry(control).or_insert(issue.message.clone());
        }
        e
    }

    pub fn get(&self, control: &str) -> Option<String> {
        self.by_control.get(control).cloned()
    }
}

/// Builds the controls of a pending decision, filled with what was sent, if anything.
pub fn body(d: &Decision, sent: Option<&Submitted>, errors: &PageErrors) -> Body {
    let sent_all = |name: &str| sent.map(|s| s.all(name)).unwrap_or_default();
    let sent_one = |name: &str| {
        sent.and_then(|s| s.get(name))
            .map(str::to_string)
            .unwrap_or_default()
    };
    match &d.spec.body {
        KindSpec::Bool {
            yes_label,
            no_label,
        } => Body::Bool {
            yes_label: yes_label.clone(),
            no_label: no_label.clone(),
        },
        KindSpec::Choose {
            options,
            multi,
            recommended,
            allow_other,
            placeholder,
        } => Body::Choose(choice_view(
            "value",
            "opt",
            options,
            *multi,
            *recommended,
            *allow_other,
            &sent_all("value"),
            &sent_one("other"),
            "other",
            placeholder.clone().unwrap_or_default(),
        )),
        KindSpec::Text { placeholder } => Body::Text {
            placeholder: placeholder.clone().unwrap_or_default(),
            value: sent_one("value"),
        },
        KindSpec::Form(form) => Body::Form {
            fields: form
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let notes = d.spec.shape.is_some_and(|s| s.takes_notes());
                    field_view(i, f, sent, errors, notes)
                })
                .collect(),
            questions: form.source == FormSource::Questions,
        },
        KindSpec::Todo => Body::Todo,
    }
}

#[allow(clippy::too_many_arguments)]
fn choice_view(
    name: &str,
    id_prefix: &str,
    options: &[ChoiceOption],
    multi: bool,
    recommended: Option<usize>,
    allow_other: bool,
    picked: &[&str],
    typed: &str,
    other_box: &str,
    placeholder: String,
) -> ChoiceView {
    ChoiceView {
        name: name.to_string(),
        multi,
        options: options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                option_view(
                    format!("{id_prefix}-{i}"),
                    o,
                    recommended == Some(i),
                    picked,
                )
            })
            .collect(),
        allow_other,
        other_id: format!("{id_prefix}-other"),
        other_name: other_box.to_string(),
        other_text_id: if name == "value" {
            "other".to_string()
        } else {
            format!("{id_prefix}-other-text")
        },
        other_checked: picked.contains(&OTHER),
        other_value: typed.to_string(),
        placeholder,
    }
}

fn option_view(id: String, o: &ChoiceOption, recommended: bool, picked: &[&str]) -> OptionView {
    OptionView {
        id,
        value: o.value.clone(),
        label: o.label.clone(),
        description: o.description.clone(),
        preview_html: o.preview.as_deref().map(render::render_preview),
        recommended,
        checked: picked.contains(&o.value.as_str()),
    }
}

fn field_view(
    i: usize,
    f: &FormField,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    notes: bool,
) -> FieldView {
    let id = format!("f-{i}");
    let sent_all: Vec<&str> = sent.map(|s| s.all(&f.name)).unwrap_or_default();
    // What to show: what the person sent, else the field's default.
    let current = match sent {
        Some(s) => s.get(&f.name).map(str::to_string).unwrap_or_default(),
        None => f.default.as_ref().map(display_scalar).unwrap_or_default(),
    };
    let defaults: Vec<String> = match (&f.default, sent) {
        (Some(Value::Array(items)), None) => items.iter().map(display_scalar).collect(),
        _ => Vec::new(),
    };
    let picked: Vec<&str> = if sent.is_some() {
        sent_all
    } else if defaults.is_empty() {
        vec![current.as_str()]
    } else {
        defaults.iter().map(String::as_str).collect()
    };
    let typed = sent
        .and_then(|s| s.get(&other_name(&f.name)))
        .unwrap_or("")
        .to_string();
    let control = match &f.input {
        FieldInput::Text {
            min_length,
            max_length,
            format,
            placeholder,
            multiline,
        } => {
            let placeholder = placeholder.clone().unwrap_or_default();
            if *multiline {
                Control::TextArea {
                    value: current.clone(),
                    placeholder,
                }
            } else {
                let (kind, value) = match format {
                    Some(StringFormat::Email) => ("email", current.clone()),
                    Some(StringFormat::Uri) => ("url", current.clone()),
                    Some(StringFormat::Date) => ("date", current.clone()),
                    Some(StringFormat::DateTime) => ("datetime-local", datetime_local(&current)),
                    None => ("text", current.clone()),
                };
                Control::Input {
                    kind,
                    value,
                    min: None,
                    max: None,
                    step: None,
                    minlength: *min_length,
                    maxlength: *max_length,
                    placeholder,
                }
            }
        }
        FieldInput::Number {
            integer,
            minimum,
            maximum,
        } => Control::Input {
            kind: "number",
            value: current.clone(),
            min: minimum.map(|m| m.to_string()),
            max: maximum.map(|m| m.to_string()),
            step: Some(if *integer { "1" } else { "any" }),
            minlength: None,
            maxlength: None,
            placeholder: String::new(),
        },
        FieldInput::Boolean if f.required => Control::YesNo {
            yes: current == "true",
            no: current == "false",
        },
        FieldInput::Boolean => Control::Checkbox {
            checked: current == "true" || current == "on",
        },
        FieldInput::Choice {
            options,
            allow_other,
            recommended,
        } => {
            if *allow_other || f.header.is_some() {
                Control::Radios(choice_view(
                    &f.name,
                    &id,
                    options,
                    false,
                    *recommended,
                    *allow_other,
                    &picked,
                    &typed,
                    &other_name(&f.name),
                    f.placeholder.clone().unwrap_or_default(),
                ))
            } else {
                Control::Select {
                    options: options
                        .iter()
                        .enumerate()
                        .map(|(j, o)| option_view(format!("{id}-{j}"), o, false, &picked))
                        .collect(),
                }
            }
        }
        FieldInput::MultiChoice {
            options,
            allow_other,
            recommended,
            ..
        } => Control::Checkboxes(choice_view(
            &f.name,
            &id,
            options,
            true,
            *recommended,
            *allow_other,
            &picked,
            &typed,
            &other_name(&f.name),
            f.placeholder.clone().unwrap_or_default(),
        )),
    };
    let note = notes.then(|| NoteView {
        id: format!("{id}-note"),
        name: note_name(&f.name),
        value: sent
            .and_then(|s| s.get(&note_name(&f.name)))
            .unwrap_or("")
            .to_string(),
    });
    FieldView {
        id,
        name: f.name.clone(),
        label: f.title.clone().unwrap_or_else(|| f.name.clone()),
        description: f.description.clone(),
        header: f.header.clone(),
        required: f.required,
        control,
        error: errors
            .get(&f.name)
            .or_else(|| errors.get(&other_name(&f.name)))
            .or_else(|| errors.get(&format!("notes.{}", f.name))),
        note,
    }
}

/// `2026-11-21T15:00:00Z` as a `datetime-local` value (`2026-11-21T15:00`).
fn datetime_local(v: &str) -> String {
    if v.len() >= 16 && v.as_bytes().get(10) == Some(&b'T') {
        v[..16].to_string()
    } else {
        v.to_string()
    }
}

fn display_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The outcome of a resolved decision, for people, its time in `zone`.
pub fn result(t: &T, d: &Decision, now: OffsetDateTime, zone: &render::Zone) -> ResultView {
    let when = d.resolved_at.unwrap_or(d.expires_at);
    let note = match d.status {
        Status::Declined => Some("result-declined"),
        Status::Cancelled if d.cancel_reason == Some(CancelReason::Abandoned) => {
            Some("result-abandoned")
        }
        Status::Cancelled => Some("result-cancelled"),
        Status::Expired
            if d.outcome_source == Some(OutcomeSource::Default)
                && d.spec.shape == Some(Shape::Omp) =>
        {
            Some("result-timeout-chose")
        }
        Status::Expired if d.outcome_source == Some(OutcomeSource::Default) => {
            Some("result-default-applied")
        }
        Status::Expired => Some("result-no-answer"),
        Status::Pending | Status::Answered => None,
    };
    let mut lines = outcome_lines(t, d);
    if d.outcome_source == Some(OutcomeSource::Default) {
        // Never let a default read like a person's answer.
        for (label, _) in &mut lines {
            if label.is_empty() {
                *label = t.tr("result-default-label");
            }
        }
    }
    ResultView {
        status: d.status.as_str(),
        heading: render::heading(t, d, now),
        lines,
        note: note.map(|id| t.tr(id)),
        remark: d.remark.clone(),
        when: zone.date_time(when),
        when_iso: render::iso(when),
    }
}

fn outcome_lines(t: &T, d: &Decision) -> Vec<(String, String)> {
    let Some(outcome) = &d.outcome else {
        return Vec::new();
    };
    let single = |s: String| vec![(String::new(), s)];
    match (&d.spec.body, outcome) {
        (
            KindSpec::Bool {
                yes_label,
                no_label,
            },
            Value::Bool(b),
        ) => single(if *b {
            yes_label.clone()
        } else {
            no_label.clone()
        }),
        (KindSpec::Form(form), Value::Object(m)) => form
            .fields
            .iter()
            .filter_map(|f| {
                let v = m.get(&f.name)?;
                let label = f.title.clone().unwrap_or_else(|| f.name.clone());
                Some((label, display_value(t, f, v)))
            })
            .collect(),
        (_, Value::Array(items)) => single(
            items
                .iter()
                .map(display_scalar)
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (KindSpec::Todo, _) => Vec::new(),
        (_, v) => single(display_scalar(v)),
    }
}

/// A form value as people read it: an enum's title rather than its value, Yes/No for booleans.
fn display_value(t: &T, f: &FormField, v: &Value) -> String {
    let title_of = |options: &[ChoiceOption], raw: &Value| {
        let raw = display_scalar(raw);
        options
            .iter()
            .find(|o| o.value == raw)
            .map(|o| o.label.clone())
            .unwrap_or(raw)
    };
    match (&f.input, v) {
        (FieldInput::Boolean, Value::Bool(b)) => t.tr(if *b { "field-yes" } else { "field-no" }),
        (FieldInput::Choice { options, .. }, raw) => title_of(options, raw),
        (FieldInput::MultiChoice { options, .. }, Value::Array(items)) => items
            .iter()
            .map(|i| title_of(options, i))
            .collect::<Vec<_>>()
            .join(", "),
        (_, v) => display_scalar(v),
    }
}

/// The attachments, for the template.
pub fn attachments(d: &Decision) -> Vec<Attachment> {
    d.spec.attachments.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_placed_by_control() {
        let issues = vec![
            Issue {
                path: "value.n".into(),
                message: "too big".into(),
            },
            Issue {
                path: "value.tags[1]".into(),
                message: "not an option".into(),
            },
            Issue {
                path: "remark".into(),
                message: "not allowed".into(),
            },
        ];
        let e = PageErrors::from_issues(&issues);
        assert_eq!(e.get("n").as_deref(), Some("too big"));
        assert_eq!(e.get("tags").as_deref(), Some("not an option"));
        assert_eq!(e.get("remark").as_deref(), Some("not allowed"));
        assert_eq!(e.summary.len(), 3);
    }
}
