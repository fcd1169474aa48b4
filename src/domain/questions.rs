//! Coding-agent `questions` (Claude Code's AskUserQuestion, gemini-cli's and pi's ask_user)
//! turned into a form (docs/API.md).

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
pub const MAX_HEADER_CHARS: usize = 200;
pub const MAX_PLACEHOLDER_CHARS: usize = 200;

const KNOWN: &[&str] = &[
    "id",
    "question",
    "header",
    "type",
    "options",
    "multiSelect",
    "multi",
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
    if let Some(h) = &header
        && read::chars(h) > HEADER_CHIP_CHARS
    {
        warnings.push(format!(
            "{path}.header is longer than {HEADER_CHIP_CHARS} characters and may not fit its chip"
        ));
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
    // `multiSelect` is Claude Code's name, `multi` oh-my-pi's: either turns on multi-select.
    let flag = |name: &str, issues: &mut Issues| {
        read::get(obj, name).and_then(|v| read::boolean(v, &join(path, name), issues))
    };
    let multi = match (flag("multiSelect", issues), flag("multi", issues)) {
        (Some(a), Some(b)) if a != b => {
            issues.push(
                join(path, "multi"),
                "contradicts multiSelect: give one of the two",
            );
            false
        }
        (a, b) => a.or(b).unwrap_or(false),
    };
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
    let placeholder_for_other = placeholder.clone();
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
    // A choice's placeholder is its "Other" box's hint.
    let other_placeholder = match &input {
        FieldInput::Choice {
            allow_other: true, ..
        }
        | FieldInput::MultiChoice { .. } => placeholder_for_other,
        _ => None,
    };
    Some(FormField {
        name,
        title: Some(question),
        description: None,
        header,
        placeholder: other_placeholder,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::issues::Issue;

    fn parse(questions: Value) -> (FormSpec, Vec<String>) {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let form = parse_questions(&questions, "questions", &mut issues, &mut warnings);
        assert!(issues.is_empty(), "{:?}", issues.into_vec());
        (form.unwrap(), warnings)
    }

    fn refused(questions: Value) -> Vec<Issue> {
        let mut issues = Issues::new();
        let form = parse_questions(&questions, "questions", &mut issues, &mut vec![]);
        assert!(form.is_none());
        issues.into_vec()
    }

    fn message_at(questions: Value, path: &str) -> String {
        let issues = refused(questions);
        issues
            .iter()
            .find(|i| i.path == path)
            .map(|i| i.message.clone())
            .unwrap_or_else(|| panic!("no issue at {path}: {issues:?}"))
    }

    #[test]
    fn a_claude_code_question_becomes_a_choice_with_other() {
        let (form, warnings) = parse(json!([{
            "question": "Which database should we use?",
            "header": "Database",
            "options": [
                {"label": "PostgreSQL", "description": "production"},
                {"label": "SQLite", "description": "embedded"}
            ],
            "multiSelect": false
        }]));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(form.source, FormSource::Questions);
        let f = &form.fields[0];
        assert_eq!(f.name, "Which database should we use?");
        assert_eq!(f.title.as_deref(), Some("Which database should we use?"));
        assert_eq!(f.header.as_deref(), Some("Database"));
        assert!(f.required);
        let FieldInput::Choice {
            options,
            allow_other,
            recommended,
        } = &f.input
        else {
            panic!()
        };
        assert!(*allow_other);
        assert_eq!(*recommended, None);
        assert_eq!(options[1].value, "SQLite");
        assert_eq!(options[0].description.as_deref(), Some("production"));
    }

    #[test]
    fn the_id_names_the_field_when_given() {
        let (form, _) = parse(json!([{"id": "db", "question": "Which?", "options": ["a"]}]));
        assert_eq!(form.fields[0].name, "db");
        assert_eq!(form.fields[0].title.as_deref(), Some("Which?"));
    }

    #[test]
    fn oh_my_pis_multi_is_multi_select_too() {
        let (form, warnings) = parse(
            json!([{"id": "langs", "question": "Which?", "options": ["a", "b"], "multi": true}]),
        );
        assert!(
            matches!(form.fields[0].input, FieldInput::MultiChoice { .. }),
            "{:?}",
            form.fields[0].input
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let (form, _) =
            parse(json!([{"question": "Which?", "options": ["a", "b"], "multi": false}]));
        assert!(matches!(form.fields[0].input, FieldInput::Choice { .. }));
        assert_eq!(
            message_at(
                json!([{"question": "Which?", "options": ["a", "b"], "multi": true, "multiSelect": false}]),
                "questions[0].multi"
            ),
            "contradicts multiSelect: give one of the two"
        );
    }

    #[test]
    fn multi_select_becomes_a_multi_choice_with_other() {
        let (form, _) = parse(
            json!([{"question": "Which?", "options": ["a", "b"], "multiSelect": true, "recommended": 1}]),
        );
        assert_eq!(
            form.fields[0].input,
            FieldInput::MultiChoice {
                options: match &form.fields[0].input {
                    FieldInput::MultiChoice { options, .. } => options.clone(),
                    _ => panic!(),
                },
                min_items: None,
                max_items: None,
                allow_other: true,
                recommended: Some(1),
            }
        );
    }

    #[test]
    fn without_options_a_question_is_multiline_text() {
        let (form, _) = parse(json!([{"question": "Anything else?", "placeholder": "notes"}]));
        assert_eq!(
            form.fields[0].input,
            FieldInput::Text {
                min_length: None,
                max_length: None,
                format: None,
                placeholder: Some("notes".into()),
                multiline: true
            }
        );
    }

    #[test]
    fn yesno_is_a_closed_choice_of_yes_and_no() {
        let (form, _) = parse(json!([{"question": "Proceed?", "type": "yesno"}]));
        let FieldInput::Choice {
            options,
            allow_other,
            ..
        } = &form.fields[0].input
        else {
            panic!()
        };
        assert!(!allow_other);
        let pairs: Vec<(&str, &str)> = options
            .iter()
            .map(|o| (o.value.as_str(), o.label.as_str()))
            .collect();
        assert_eq!(pairs, [("yes", "Yes"), ("no", "No")]);
    }

    #[test]
    fn options_on_a_text_question_are_a_warning() {
        let (form, warnings) =
            parse(json!([{"question": "Name?", "type": "text", "options": ["a", "b"]}]));
        assert!(matches!(form.fields[0].input, FieldInput::Text { .. }));
        assert_eq!(
            warnings,
            ["questions[0].options is not used by a text question and was ignored"]
        );
    }

    #[test]
    fn a_long_header_is_kept_with_a_warning() {
        let (form, warnings) = parse(json!([{"question": "Q?", "header": "A rather long header"}]));
        assert_eq!(
            form.fields[0].header.as_deref(),
            Some("A rather long header")
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("questions[0].header is longer than 12"));
    }

    #[test]
    fn between_1_and_10_questions_are_taken() {
        assert_eq!(
            message_at(json!([]), "questions"),
            "must have 1–10 questions (got 0)"
        );
        let eleven: Vec<Value> = (0..11)
            .map(|i| json!({ "question": format!("q{i}") }))
            .collect();
        message_at(json!(eleven), "questions");
        message_at(json!({"question": "Q?"}), "questions");
    }

    #[test]
    fn field_names_must_be_unique() {
        let issues = refused(json!([
            {"question": "Same?"},
            {"question": "Same?"},
            {"id": "x", "question": "A"},
            {"id": "x", "question": "B"}
        ]));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["questions[1].question", "questions[3].id"]);
        // An id may equal another question's text only if it is not that field's name too.
        message_at(
            json!([{"question": "db"}, {"id": "db", "question": "Which?"}]),
            "questions[1].id",
        );
    }

    #[test]
    fn choice_options_are_checked() {
        assert!(
            message_at(
                json!([{"question": "Q", "type": "choice"}]),
                "questions[0].options"
            )
            .starts_with("is required for a choice question")
        );
        message_at(
            json!([{"question": "Q", "options": ["a", "a"]}]),
            "questions[0].options[1].label",
        );
        let many: Vec<String> = (0..21).map(|i| i.to_string()).collect();
        message_at(
            json!([{ "question": "Q", "options": many }]),
            "questions[0].options",
        );
    }

    #[test]
    fn every_question_field_is_type_checked() {
        let issues = refused(json!([{
            "id": 1, "question": "", "header": [], "type": "slider",
            "multiSelect": "no", "placeholder": 3
        }]));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "questions[0].question",
                "questions[0].id",
                "questions[0].header",
                "questions[0].type",
                "questions[0].multiSelect",
                "questions[0].placeholder"
            ]
        );
        message_at(json!([{"options": ["a"]}]), "questions[0].question");
        message_at(json!(["Q?"]), "questions[0]");
    }

    #[test]
    fn recommended_out_of_range_is_a_warning() {
        let (form, warnings) =
            parse(json!([{"question": "Q", "options": ["a", "b"], "recommended": 5}]));
        assert!(matches!(
            form.fields[0].input,
            FieldInput::Choice {
                recommended: None,
                ..
            }
        ));
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn unknown_question_fields_are_warnings() {
        let (_, warnings) = parse(json!([{"question": "Q", "urgency": 3}]));
        assert_eq!(
            warnings,
            ["unknown field \"urgency\" in questions[0] ignored"]
        );
    }
}
