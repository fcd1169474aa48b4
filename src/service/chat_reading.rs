//! How a chat's reply is read (docs/CHANNELS.md): a button's code or a text, by the
//! decision's kind, into an answer or a request to open the page.

use serde_json::{Value, json};

use crate::domain::approval::{ALLOW, DENY};
use crate::domain::spec::{ChoiceOption, DecisionSpec, KindSpec};
use crate::domain::{AnswerAction, AnswerInput};
use crate::render::what_runs;

/// The most characters of what a tool approval runs that a chat message shows; an Allow of
/// anything longer is given on the page (the reply "allow" included), where all of it is.
pub const SHOWN_CHARS: usize = 1500;

/// What a reply asks for: an answer to record, or the page (a form, an Allow that the
/// message cannot show in full or that wants a passkey).
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Answer(Box<AnswerInput>),
    Page,
}

impl Reading {
    fn answer(input: AnswerInput) -> Self {
        Reading::Answer(Box::new(input))
    }
}

/// What a button press answers. Codes: `y`/`n` (bool), `a`/`d` (a tool approval's Allow and
/// Deny), `o0`… (a `choose` option), `done`/`skip` (a to-do).
pub fn button_input(spec: &DecisionSpec, code: &str) -> Result<Reading, String> {
    let stale = || "this button does not belong to this question any more".to_string();
    let answer = |value: Value| {
        Ok(Reading::answer(AnswerInput {
            value: Some(value),
            ..AnswerInput::default()
        }))
    };
    if let Some(approval) = &spec.approval {
        return match code {
            "a" if what_runs::shown(&Default::default(), approval, SHOWN_CHARS).one_tap_allow => {
                answer(json!(ALLOW))
            }
            "a" => Ok(Reading::Page),
            "d" => answer(json!(DENY)),
            _ => Err(stale()),
        };
    }
    match (&spec.body, code) {
        (KindSpec::Bool { .. }, "y") => answer(json!(true)),
        (KindSpec::Bool { .. }, "n") => answer(json!(false)),
        (KindSpec::Choose { options, .. }, code) => {
            let i: usize = code
                .strip_prefix('o')
                .and_then(|n| n.parse().ok())
                .ok_or_else(stale)?;
            let option = options.get(i).ok_or_else(stale)?;
            answer(json!(option.label))
        }
        (KindSpec::Todo, "done") => Ok(Reading::answer(AnswerInput {
            action: AnswerAction::Done,
            ..AnswerInput::default()
        })),
        (KindSpec::Todo, "skip") => Ok(Reading::answer(AnswerInput {
            action: AnswerAction::Skip,
            ..AnswerInput::default()
        })),
        (KindSpec::Form(_), _) => Ok(Reading::Page),
        _ => Err(stale()),
    }
}

/// What a text answers, read by the decision's kind:
/// - a tool approval: `allow`, or `deny` with an optional reason after it
///   (`deny: not on a Friday`);
/// - `bool`: yes / no (or the question's own labels), with an optional remark after a colon;
/// - `choose`: an option's number (from 1) or its label; several, comma-separated, where
///   more than one may be chosen;
/// - `text`: the text itself;
/// - a to-do: `done` or `skip`;
/// - a form: the page.
pub fn text_input(spec: &DecisionSpec, text: &str) -> Result<Reading, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the reply is empty".into());
    }
    let (head, rest) = split_remark(text);
    let word = head.to_lowercase();
    let remark = rest.map(str::to_string);
    let answer = |value: Value, remark: Option<String>| {
        Ok(Reading::answer(AnswerInput {
            value: Some(value),
            remark,
            ..AnswerInput::default()
        }))
    };
    if spec.approval.is_some() {
        return match word.as_str() {
            "allow" | "yes" | "y" => button_input(spec, "a").map(|r| with_remark(r, remark)),
            "deny" | "no" | "n" => answer(json!(DENY), remark),
            _ => Err(format!(
                "{head:?} does not answer a tool approval: reply allow, or deny with a reason \
                 (deny: not on a Friday)"
            )),
        };
    }
    match &spec.body {
        KindSpec::Bool {
            yes_label,
            no_label,
        } => {
            if ["yes", "y"].contains(&word.as_str()) || word == yes_label.to_lowercase() {
                answer(json!(true), remark)
            } else if ["no", "n"].contains(&word.as_str()) || word == no_label.to_lowercase() {
                answer(json!(false), remark)
            } else {
                Err(format!(
                    "{head:?} is neither {yes_label:?} nor {no_label:?}: reply yes or no, and a \
                     remark after a colon if you like"
                ))
            }
        }
        KindSpec::Choose {
            options,
            multi,
            allow_other,
            ..
        } => {
            // An option's label may itself hold a colon: the whole text is tried first.
            let whole = pick(options, text);
            let (picked, remark) = match whole {
                Some(o) => (vec![o], None),
                // No option by that name: where the person may write their own, this is it.
                None if *allow_other && !*multi && pick(options, head).is_none() => {
                    return Ok(Reading::answer(AnswerInput {
                        other: Some(text.to_string()),
                        ..AnswerInput::default()
                    }));
                }
                None => {
                    let picked: Option<Vec<&str>> = if *multi {
                        head.split(',').map(|p| pick(options, p)).collect()
                    } else {
                        pick(options, head).map(|o| vec![o])
                    };
                    let picked = picked.ok_or_else(|| {
                        format!(
                            "{head:?} is not one of the options: reply with its number (1 to \
                             {}) or its name",
                            options.len()
                        )
                    })?;
                    (picked, remark)
                }
            };
            let value = if *multi {
                json!(picked)
            } else {
                json!(picked[0])
            };
            answer(value, remark)
        }
        KindSpec::Text { .. } => answer(json!(text), None),
        KindSpec::Todo => match word.as_str() {
            "done" => button_input(spec, "done"),
            "skip" => button_input(spec, "skip"),
            _ => Err(format!(
                "{head:?} does not settle a to-do: reply done or skip"
            )),
        },
        KindSpec::Form(_) => Ok(Reading::Page),
    }
}

/// "deny: not today" → ("deny", Some("not today")); a text without a colon has no remark.
fn split_remark(text: &str) -> (&str, Option<&str>) {
    match text.split_once([':', '\n']) {
        Some((head, rest)) if !rest.trim().is_empty() => (head.trim(), Some(rest.trim())),
        Some((head, _)) => (head.trim(), None),
        None => (text, None),
    }
}

fn with_remark(reading: Reading, remark: Option<String>) -> Reading {
    match reading {
        Reading::Answer(input) => Reading::answer(AnswerInput { remark, ..*input }),
        page => page,
    }
}

/// The label of the option `said` names: its number from 1, or its label in any case.
fn pick<'a>(options: &'a [ChoiceOption], said: &str) -> Option<&'a str> {
    let said = said.trim();
    if let Ok(n) = said.parse::<usize>() {
        return n
            .checked_sub(1)
            .and_then(|i| options.get(i))
            .map(|o| o.label.as_str());
    }
    options
        .iter()
        .find(|o| o.label.eq_ignore_ascii_case(said) || o.value.eq_ignore_ascii_case(said))
        .map(|o| o.label.as_str())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::new_decision::parse_new_decision;

    fn spec(body: Value) -> DecisionSpec {
        parse_new_decision(&body).unwrap().spec
    }

    fn answer(r: Result<Reading, String>) -> AnswerInput {
        match r {
            Ok(Reading::Answer(input)) => *input,
            other => panic!("not an answer: {other:?}"),
        }
    }

    fn approval(command: &str) -> DecisionSpec {
        spec(json!({
            "question": "Claude Code wants to run a Bash command",
            "kind": "choose", "options": ["Allow", "Deny"],
            "approval": {"harness": "claude", "tool_name": "Bash",
                         "tool_input": {"command": command}},
        }))
    }

    #[test]
    fn an_approval_reads_allow_and_deny_with_its_reason() {
        let s = approval("make release");
        assert_eq!(answer(button_input(&s, "a")).value, Some(json!(ALLOW)));
        assert_eq!(answer(button_input(&s, "d")).value, Some(json!(DENY)));
        let deny = answer(text_input(&s, "Deny: not on a Friday"));
        assert_eq!(deny.value, Some(json!(DENY)));
        assert_eq!(deny.remark.as_deref(), Some("not on a Friday"));
        assert!(text_input(&s, "maybe").unwrap_err().contains("allow"));
        // A code of another kind does not answer it.
        assert!(button_input(&s, "y").is_err());
    }

    #[test]
    fn an_allow_the_message_cannot_show_whole_goes_to_the_page() {
        let long = format!("echo {}", "x".repeat(SHOWN_CHARS + 10));
        let s = approval(&long);
        assert_eq!(button_input(&s, "a"), Ok(Reading::Page));
        assert_eq!(text_input(&s, "allow"), Ok(Reading::Page));
        // Deny needs nothing shown.
        assert_eq!(answer(text_input(&s, "deny")).value, Some(json!(DENY)));
    }

    #[test]
    fn a_choice_is_read_by_number_or_label_or_as_the_persons_own() {
        let own = spec(json!({"question": "Colour?", "kind": "choose",
            "options": ["Red", "Blue"]}));
        assert_eq!(
            answer(text_input(&own, "Teal, please")).other.as_deref(),
            Some("Teal, please")
        );
        let s = spec(json!({"question": "Colour?", "kind": "choose",
            "options": ["Red", "Blue: the dark one"], "allow_other": false}));
        assert_eq!(
            answer(text_input(&s, "2")).value,
            Some(json!("Blue: the dark one"))
        );
        assert_eq!(
            answer(text_input(&s, "blue: the dark one")).value,
            Some(json!("Blue: the dark one"))
        );
        let red = answer(text_input(&s, "red: warmer"));
        assert_eq!(
            (red.value, red.remark.as_deref()),
            (Some(json!("Red")), Some("warmer"))
        );
        assert_eq!(
            answer(button_input(&s, "o1")).value,
            Some(json!("Blue: the dark one"))
        );
        assert!(button_input(&s, "o7").is_err());
        assert!(text_input(&s, "3").unwrap_err().contains("1 to 2"));
    }

    #[test]
    fn yes_no_text_and_todo_replies() {
        let b = spec(json!({"question": "Ship?", "kind": "bool"}));
        assert_eq!(answer(text_input(&b, " Yes ")).value, Some(json!(true)));
        assert_eq!(answer(button_input(&b, "n")).value, Some(json!(false)));
        assert!(text_input(&b, "perhaps").is_err());
        let t = spec(json!({"question": "Name it", "kind": "text"}));
        assert_eq!(
            answer(text_input(&t, "orbit: v2")).value,
            Some(json!("orbit: v2"))
        );
        assert!(text_input(&t, "   ").is_err());
        let todo = spec(json!({"question": "Smoke-test checkout", "kind": "todo"}));
        assert_eq!(answer(text_input(&todo, "done")).action, AnswerAction::Done);
        assert_eq!(
            answer(button_input(&todo, "skip")).action,
            AnswerAction::Skip
        );
    }
}
