//! Coding-agent `questions` (Claude Code's AskUserQuestion, gemini-cli's and pi's ask_user),
//! DESIGN.md §2.2, turned into a form.

use std::collections::HashSet;

use serde_json::Value;

use super::issues::{Issues, index, join};
use super::options::{parse_options, parse_recommended};
use super::read::{self, quote_short};
use super::spec::{ChoiceOption, FieldInput, FormField, FormSource, FormSpec};

pub const MAX_QUESTIONS: usize = 10;
pub const MAX_QUESTION_OPTIONS: usize = 20;
pub const MAX_QUESTION_CHARS: usize = 2000;
pub const MAX_ID_CHARS: usize = 100;
/// Claude Code shows the header as a chip of at most 12 characters; longer ones are kept.
pub const HEADER_CHIP_CHARS: usize = 12;
pub const MAX_HEADER_CHARS: usize = 100;
pub const MAX_PLACEHOLDER_CHARS: usize = 200;

const KNOWN: &[&str] = &[
    "id",
    "question",
    "header",
    "type",
    "options",
    "multiSelect",
    "placeholder",
    "recommended",
];

/// Parses `questions` into a form; problems go to `issues` under `path`.
pub fn parse_questions(
    questions: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormSpec> {
    let items = read::array(questions, path, issues)?;
    if items.is_empty() || items.len() > MAX_QUESTIONS {
        issues.push(
            path,
            format!(
                "must have 1–{MAX_QUESTIONS} questions (got {})",
                items.len()
            ),
        );
        return None;
    }
    let before = issues.len();
    let mut names = HashSet::new();
    let mut fields = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = index(path, i);
        let Some(field) = parse_question(item, &item_path, issues, warnings) else {
            continue;
        };
        if !names.insert(field.name.clone()) {
            let (key, what) = match item.get("id").filter(|v| !v.is_null()) {
                Some(_) => ("id", "ids"),
                None => ("question", "question texts without an id"),
            };
            issues.push(
                join(&item_path, key),
                format!(
                    "{} is used twice: {what} must be unique",
                    quote_short(&field.name)
                ),
            );
            continue;
        }
        fields.push(field);
    }
    (issues.len() == before).then_some(FormSpec {
        source: FormSource::Questions,
        fields,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum QuestionType {
    Choice,
    Text,
    YesNo,
}

fn parse_question(
    item: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormField> {
    let obj = read::object(item, path, issues)?;
    read::warn_unknown(obj, KNOWN, path, warnings);
    let question_path = join(path, "question");
    let question = match read::get(obj, "question") {
        Some(q) => read::text(q, &question_path, issues, 1, MAX_QUESTION_CHARS),
        None => {
            issues.push(&question_path, "is required");
            None
        }
    };
    let id =
        read::get(obj, "id").map(|v| read::text(v, &join(path, "id"), issues, 1, MAX_ID_CHARS));
    let header = read::optional_text(
        read::get(obj, "header"),
        &join(path, "header"),
        issues,
        MAX_HEADER_CHARS,
    );
    if let Some(h) = &header {
        if read::chars(h) > HEADER_CHIP_CHARS {
            warnings.push(format!(
                "{path}.header is longer than {HEADER_CHIP_CHARS} characters and may not fit its chip"
            ));
        }
    }
    let options_value = read::get(obj, "options");
    let type_path = join(path, "type");
    let question_type = match read::get(obj, "type") {
        None if options_value.is_some() => Some(QuestionType::Choice),
        None => Some(QuestionType::Text),
        Some(t) => match read::string(t, &type_path, issues) {
            Some("choice") => Some(QuestionType::Choice),
            Some("text") => Some(QuestionType::Text),
            Some("yesno") => Some(QuestionType::YesNo),
            Some(other) => {
                issues.push(
                    &type_path,
                    format!(
                        "must be one of choice, text, yesno (got {})",
                        quote_short(other)
                    ),
                );
                None
            }
            None => None,
        },
    };
    let multi = read::get(obj, "multiSelect")
        .and_then(|v| read::boolean(v, &join(path, "multiSelect"), issues))
        .unwrap_or(false);
    let placeholder = read::optional_text(
        read::get(obj, "placeholder"),
        &join(path, "placeholder"),
        issues,
        MAX_PLACEHOLDER_CHARS,
    );
    let recommended_value = read::get(obj, "recommended");
    let unused = |field: &str, warnings: &mut Vec<String>, kind: &str| {
        warnings.push(format!(
            "{path}.{field} is not used by a {kind} question and was ignored"
        ));
    };
    let input = match question_type? {
        QuestionType::Choice => {
            let options_path = join(path, "options");
            let options = match options_value {
                Some(v) => {
                    parse_options(v, &options_path, 1, MAX_QUESTION_OPTIONS, issues, warnings)
                }
                None => {
                    issues.push(
                        &options_path,
                        format!(
                            "is required for a choice question: 1–{MAX_QUESTION_OPTIONS} options"
                        ),
                    );
                    None
                }
            };
            let recommended = parse_recommended(
                recommended_value,
                &join(path, "recommended"),
                options.as_ref().map(Vec::len),
                issues,
                warnings,
            );
            if placeholder.is_some() {
                unused("placeholder", warnings, "choice");
            }
            let options = options?;
            if multi {
                FieldInput::MultiChoice {
                    options,
                    min_items: None,
                    max_items: None,
                    allow_other: true,
                    recommended,
                }
            } else {
                FieldInput::Choice {
                    options,
                    allow_other: true,
                    recommended,
                }
            }
        }
        QuestionType::YesNo => {
            for (field, given) in [
                ("options", options_value.is_some()),
                ("multiSelect", multi),
                ("placeholder", placeholder.is_some()),
                ("recommended", recommended_value.is_some()),
            ] {
                if given {
                    unused(field, warnings, "yesno");
                }
            }
            FieldInput::Choice {
                options: vec![yes_no("yes", "Yes"), yes_no("no", "No")],
                allow_other: false,
                recommended: None,
            }
        }
        QuestionType::Text => {
            for (field, given) in [
                ("options", options_value.is_some()),
                ("multiSelect", multi),
                ("recommended", recommended_value.is_some()),
            ] {
                if given {
                    unused(field, warnings, "text");
                }
            }
            FieldInput::Text {
                min_length: None,
                max_length: None,
                format: None,
                placeholder,
                multiline: true,
            }
        }
    };
    let question = question?;
    let name = match id {
        Some(id) => id?,
        None => question.clone(),
    };
    Some(FormField {
        name,
        title: Some(question),
        description: None,
        header,
        required: true,
        default: None,
        input,
    })
}

fn yes_no(value: &str, label: &str) -> ChoiceOption {
    ChoiceOption {
        value: value.to_string(),
        label: label.to_string(),
        description: None,
        preview: None,
    }
}
