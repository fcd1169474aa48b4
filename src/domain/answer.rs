//! Checking a person's answer against its decision.

use serde_json::{Map, Value, json};

use super::decision::{AnswerInput, Resolution};
use super::form_answer::{MAX_TEXT_ANSWER_CHARS, check_form};
use super::issues::{Issue, Issues};
use super::kind::{Kind, OutcomeSource, Status};
use super::options::{check_typed, not_an_option};
use super::people::AnswerAction;
use super::read::{self, quote_short};
use super::spec::{ChoiceOption, DecisionSpec, KindSpec};

pub const MAX_REMARK_CHARS: usize = 2000;
/// The longest note on one question.
pub const MAX_NOTE_CHARS: usize = 2000;

/// Validates an answer request against the decision it answers and builds the resolution.
pub fn validate_answer(spec: &DecisionSpec, input: &AnswerInput) -> Result<Resolution, Vec<Issue>> {
    let mut issues = Issues::new();
    let remark = check_remark(spec, input.remark.as_deref(), &mut issues);
    let notes = match input.action {
        AnswerAction::Answer => check_notes(spec, input.notes.as_ref(), &mut issues),
        _ => Map::new(),
    };
    let kind = spec.kind();
    let (status, outcome, custom) = match input.action {
        AnswerAction::Decline => (Status::Declined, None, false),
        AnswerAction::Done | AnswerAction::Skip if kind != Kind::Todo => {
            issues.push(
                "action",
                format!(
                    "must be answer or decline for a {} decision (done and skip are for to-dos)",
                    kind.as_str()
                ),
            );
            (Status::Answered, None, false)
        }
        AnswerAction::Done => (Status::Answered, Some(json!("done")), false),
        AnswerAction::Skip => (Status::Answered, Some(json!("skipped")), false),
        AnswerAction::Answer => {
            let found = answer_outcome(spec, input, &mut issues);
            let custom = found.as_ref().is_some_and(|(_, custom)| *custom);
            (Status::Answered, found.map(|(v, _)| v), custom)
        }
    };
    let action = match input.action {
        AnswerAction::Answer => "answer",
        AnswerAction::Decline => "decline",
        AnswerAction::Done => "done",
        AnswerAction::Skip => "skip",
    };
    let mut detail = json!({ "action": action });
    if !notes.is_empty() {
        detail["notes"] = Value::Object(notes);
    }
    // An approval allowed with an edited command: the person's Allow, marked edited
    // (`custom`, which the API shows as the Allow it is), the command kept in the audit
    // trail's `answered` event, where the agent reads it.
    let edited = spec.approval.as_ref().and_then(|a| {
        super::approval::edited_command(a, outcome.as_ref(), input.command.as_deref(), &mut issues)
    });
    if let Some(command) = &edited {
        detail["edited_command"] = json!(command);
    }
    issues.finish(Resolution {
        status,
        outcome_source: (status == Status::Answered).then_some(OutcomeSource::Human),
        outcome,
        custom: custom || edited.is_some(),
        remark,
        detail,
        by: None,
        answer: None,
        expect_answers: None,
        cancel_reason: None,
    })
}

/// The per-question notes of a question form: each keyed by a question of the form, a
/// string of at most `MAX_NOTE_CHARS`; blank ones are dropped. They are kept in the answer's
/// audit-trail entry, where the ask tools that return notes read them.
fn check_notes(
    spec: &DecisionSpec,
    notes: Option<&Value>,
    issues: &mut Issues,
) -> Map<String, Value> {
    let mut kept = Map::new();
    let Some(notes) = notes.filter(|n| !n.is_null()) else {
        return kept;
    };
    let KindSpec::Form(form) = &spec.body else {
        issues.push("notes", "only a form decision takes notes per question");
        return kept;
    };
    let Value::Object(given) = notes else {
        issues.push(
            "notes",
            format!(
                "must be an object of notes keyed by question (got {})",
                read::type_name(notes)
            ),
        );
        return kept;
    };
    for (name, note) in given {
        let path = super::issues::join("notes", name);
        if !form.fields.iter().any(|f| &f.name == name) {
            issues.push(
                &path,
                format!("{} is not a question of this form", quote_short(name)),
            );
            continue;
        }
        let Some(text) = read::string(note, &path, issues).map(str::trim) else {
            continue;
        };
        if !text.is_empty() && read::check_len(text, &path, issues, 0, MAX_NOTE_CHARS) {
            kept.insert(name.clone(), Value::String(text.to_string()));
        }
    }
    kept
}

fn check_remark(spec: &DecisionSpec, remark: Option<&str>, issues: &mut Issues) -> Option<String> {
    let remark = remark.map(str::trim).filter(|r| !r.is_empty())?;
    if !spec.allow_remark {
        issues.push("remark", "this decision does not take a remark");
        return None;
    }
    read::check_len(remark, "remark", issues, 0, MAX_REMARK_CHARS).then(|| remark.to_string())
}

fn answer_outcome(
    spec: &DecisionSpec,
    input: &AnswerInput,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    let other = input
        .other
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty());
    let value = input.value.as_ref().filter(|v| !v.is_null());
    if let KindSpec::Choose {
        options,
        multi,
        allow_other,
        ..
    } = &spec.body
    {
        return choose_answer(options, *multi, *allow_other, value, other, issues);
    }
    if other.is_some() {
        issues.push(
            "other",
            format!(
                "only a choose decision takes a typed answer of your own; this one is {}",
                spec.kind().as_str()
            ),
        );
    }
    let Some(value) = value else {
        let expected = match spec.kind() {
            Kind::Bool => "yes or no",
            Kind::Todo => "\"done\" or \"skipped\"",
            Kind::Form => "an object with one member per field",
            Kind::Text | Kind::Choose => "the answer",
        };
        issues.push("value", format!("is required: give {expected}"));
        return None;
    };
    check_outcome(spec, value, "value", issues)
}

/// Checks an outcome-shaped value (an answer's `value`, or `default_outcome`) and returns
/// it normalised, with whether it is a typed "Other" answer. Problems go to `issues` under `path`.
pub fn check_outcome(
    spec: &DecisionSpec,
    value: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    match &spec.body {
        KindSpec::Bool {
            yes_label,
            no_label,
        } => check_bool(value, yes_label, no_label, path, issues).map(|b| (json!(b), false)),
        KindSpec::Choose { options, multi, .. } => {
            if *multi {
                let labels = check_labels(options, value, path, issues)?;
                if labels.is_empty() {
                    issues.push(path, "must name at least one option");
                    return None;
                }
                Some((json!(labels), false))
            } else {
                let label = check_label(options, value, path, issues)?;
                Some((json!(label), false))
            }
        }
        KindSpec::Text { .. } => {
            let s = read::text(value, path, issues, 1, MAX_TEXT_ANSWER_CHARS)?;
            Some((json!(s), false))
        }
        KindSpec::Form(form) => check_form(form, value, path, issues),
        KindSpec::Todo => match value.as_str().map(str::trim) {
            Some(s @ ("done" | "skipped")) => Some((json!(s), false)),
            _ => {
                issues.push(path, "must be \"done\" or \"skipped\"");
                None
            }
        },
    }
}

/// `true`/`false`, or `"yes"`/`"no"`/`"true"`/`"false"` or the decision's own button labels,
/// in any case.
fn check_bool(
    value: &Value,
    yes_label: &str,
    no_label: &str,
    path: &str,
    issues: &mut Issues,
) -> Option<bool> {
    let parsed = match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => {
            let s = s.trim();
            if ["yes", "true"].iter().any(|w| s.eq_ignore_ascii_case(w)) {
                Some(true)
            } else if ["no", "false"].iter().any(|w| s.eq_ignore_ascii_case(w)) {
                Some(false)
            } else if s.to_lowercase() == yes_label.to_lowercase() {
                Some(true)
            } else if s.to_lowercase() == no_label.to_lowercase() {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    };
    if parsed.is_none() {
        issues.push(path, "must be true or false (or \"yes\" or \"no\")");
    }
    parsed
}

/// The option a label names: exactly (after trimming), else the one option equal to it
/// ignoring case.
pub(crate) fn find_label<'a>(options: &'a [ChoiceOption], s: &str) -> Option<&'a ChoiceOption> {
    let s = s.trim();
    if let Some(o) = options.iter().find(|o| o.label == s) {
        return Some(o);
    }
    let lower = s.to_lowercase();
    let mut matches = options.iter().filter(|o| o.label.to_lowercase() == lower);
    match (matches.next(), matches.next()) {
        (Some(o), None) => Some(o),
        _ => None,
    }
}

fn check_label(
    options: &[ChoiceOption],
    value: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<String> {
    let s = read::string(value, path, issues)?;
    match find_label(options, s) {
        Some(o) => Some(o.label.clone()),
        None => {
            issues.push(path, not_an_option(options, s));
            None
        }
    }
}

/// Several labels (an array, or one string), no duplicates; returned in option order.
fn check_labels(
    options: &[ChoiceOption],
    value: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<Vec<String>> {
    let given: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::String(_) => vec![value],
        other => {
            issues.push(
                path,
                format!(
                    "must be an array of option labels (got {})",
                    read::type_name(other)
                ),
            );
            return None;
        }
    };
    let before = issues.len();
    let mut picked = vec![false; options.len()];
    for (i, item) in given.iter().enumerate() {
        let item_path = if value.is_array() {
            super::issues::index(path, i)
        } else {
            path.to_string()
        };
        let Some(s) = read::string(item, &item_path, issues) else {
            continue;
        };
        let Some(at) = find_label(options, s).and_then(|o| options.iter().position(|x| x == o))
        else {
            issues.push(&item_path, not_an_option(options, s));
            continue;
        };
        if picked[at] {
            issues.push(
                &item_path,
                format!("{} is given twice", quote_short(&options[at].label)),
            );
        }
        picked[at] = true;
    }
    (issues.len() == before).then(|| {
        options
            .iter()
            .zip(picked)
            .filter(|(_, p)| *p)
            .map(|(o, _)| o.label.clone())
            .collect()
    })
}

/// A `choose` answer: a label or labels, and/or the typed "Other" text.
fn choose_answer(
    options: &[ChoiceOption],
    multi: bool,
    allow_other: bool,
    value: Option<&Value>,
    other: Option<&str>,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    // Browsers send an empty value when no option is ticked.
    let value = value.filter(|v| v.as_str().is_none_or(|s| !s.trim().is_empty()));
    // Typed text that is one of the labels is just that option.
    let (other, other_label) = match other.map(|o| (o, find_label(options, o))) {
        Some((_, Some(o))) => (None, Some(o.label.clone())),
        Some((o, None)) => (Some(o), None),
        None => (None, None),
    };
    if other.is_some() && !allow_other {
        issues.push(
            "other",
            "this decision does not take an answer of your own: pick one of the options",
        );
        return None;
    }
    if other.is_some_and(|o| !check_typed(o, "other", issues)) {
        return None;
    }
    if !multi {
        return match (value, other.or(other_label.as_deref())) {
            (Some(_), Some(_)) => {
                issues.push("other", "pick one option or type your own answer, not both");
                None
            }
            (Some(v), None) => check_label(options, v, "value", issues).map(|l| (json!(l), false)),
            (None, Some(typed)) => Some((json!(typed), other.is_some())),
            (None, None) => {
                issues.push("value", required_choice(allow_other));
                None
            }
        };
    }
    let mut labels = match value {
        Some(v) => check_labels(options, v, "value", issues)?,
        None => vec![],
    };
    if let Some(l) = other_label.filter(|l| !labels.contains(l)) {
        labels.push(l);
        labels.sort_by_key(|l| options.iter().position(|o| &o.label == l));
    }
    if labels.is_empty() && other.is_none() {
        issues.push("value", required_choice(allow_other));
        return None;
    }
    let mut outcome: Vec<Value> = labels.into_iter().map(Value::String).collect();
    if let Some(o) = other {
        outcome.push(json!(o));
    }
    Some((Value::Array(outcome), other.is_some()))
}

fn required_choice(allow_other: bool) -> &'static str {
    if allow_other {
        "is required: pick an option or type your own answer"
    } else {
        "is required: pick an option"
    }
}

#[cfg(test)]
mod tests;
