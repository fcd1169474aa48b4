//! A decision's messages as Slack Block Kit: the ask with its buttons, the same message
//! updated with a quorum's tally or settled, and the modals for a text answer and a denial's
//! reason.
//!
//! Everything an agent wrote is escaped for mrkdwn (slack_mrkdwn.rs); an approval's command is
//! a `rich_text_preformatted` element, whose text Slack shows exactly as given and never reads
//! as markup. Buttons carry only `button_value(decision, code)`: who pressed is Slack's
//! verified user id, never something in the message. Every text is kept within Block Kit's
//! limits (below), so a long question or context cannot make Slack refuse the message.

use serde_json::{Value, json};
use uuid::Uuid;

use super::mrkdwn::{clip_plain, cut_at, escape, markdown_to_mrkdwn, split};
use crate::chat::{ButtonStyle, ChatAsk, ChatButton, Controls};
use crate::domain::chat::{button_value, parse_button_value};
use crate::render::visible::{Lines, clip};

/// Block Kit's limits (api.slack.com/reference/block-kit).
pub const MAX_BLOCKS: usize = 50;
pub const MAX_SECTION_TEXT: usize = 3000;
pub const MAX_HEADER_TEXT: usize = 150;
pub const MAX_BUTTON_TEXT: usize = 75;
pub const MAX_BUTTON_VALUE: usize = 2000;
pub const MAX_BUTTON_URL: usize = 3000;
pub const MAX_ACTION_ID: usize = 255;
pub const MAX_ACTIONS_ELEMENTS: usize = 25;
pub const MAX_CONTEXT_ELEMENTS: usize = 10;
pub const MAX_MODAL_TITLE: usize = 24;
pub const MAX_INPUT_LENGTH: usize = 3000;
pub const MAX_PRIVATE_METADATA: usize = 3000;
/// A message's `text`, the notification's words: Slack cuts anything past 40,000 characters;
/// a notification shows far fewer.
pub const MAX_FALLBACK_TEXT: usize = 3000;

/// Room kept for the note that says what runs was cut ("… [cut: 1,234 more characters]").
const CUT_NOTE_ROOM: usize = 40;

/// The most sections a decision's context takes.
const CONTEXT_SECTIONS: usize = 4;

/// The `action_id`s of sayso's buttons and modals. An answer button's is `ANSWER` followed
/// by its code (unique within its block, as Slack wants).
pub const ANSWER: &str = "sayso.answer.";
/// The button that opens the text modal.
pub const REPLY: &str = "sayso.reply";
/// A button that opens the page (Slack still reports its press; it is acknowledged only).
pub const OPEN: &str = "sayso.open";
/// The modals' `callback_id`s.
pub const TEXT_MODAL: &str = "sayso.text";
pub const DENY_MODAL: &str = "sayso.deny";
/// The input of each modal (its `block_id` and `action_id`).
pub const TEXT_INPUT: &str = "answer";
pub const REASON_INPUT: &str = "reason";
/// The code a text answer's button carries (`button_value(decision, TEXT_CODE)`).
pub const TEXT_CODE: &str = "text";
/// The approval's Deny: pressing it asks for an optional reason first.
pub const DENY_CODE: &str = "d";

/// A message as chat.postMessage and chat.update take it: the notification's text and the
/// blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct SlackMessage {
    pub text: String,
    pub blocks: Vec<Value>,
}

/// A decision's question, with its controls; `progress` ("1 of 2 allowed: ana") while a rule
/// of several people is counting.
pub fn ask_message(ask: &ChatAsk, decision: Uuid, progress: Option<&str>) -> SlackMessage {
    let mut blocks = head(ask);
    if let Some(progress) = progress {
        blocks.push(context(&[progress]));
    }
    // A choice's own answer is given in a dialog here, not by a reply: its button says so.
    let own_answer = ask.t.tr("chat-own-answer");
    let notes: Vec<&str> = ask
        .notes
        .iter()
        .map(String::as_str)
        .filter(|n| *n != own_answer)
        .collect();
    if !notes.is_empty() {
        blocks.push(context(&notes));
    }
    blocks.push(actions(ask, decision));
    blocks.truncate(MAX_BLOCKS);
    SlackMessage {
        text: fallback(ask),
        blocks,
    }
}

/// The message once the decision is settled: the question as it was, and the one line that
/// says how it ended, with no controls left to press.
pub fn settled_message(ask: &ChatAsk, settled: &str) -> SlackMessage {
    let mut blocks = head(ask);
    blocks.push(section(&format!(
        "*{}*",
        escape(&clip_plain(settled, 2900))
    )));
    blocks.truncate(MAX_BLOCKS);
    SlackMessage {
        text: fallback_text(&format!("{}: {settled}", ask.title)),
        blocks,
    }
}

/// A notice about no decision (a passkey was added, a test message): its title, its words, a
/// button to the page.
pub fn notice_message(title: &str, body: &str, url: &str) -> SlackMessage {
    let mut blocks = vec![header(title)];
    blocks.extend(
        split(&escape(body), MAX_SECTION_TEXT, 2)
            .iter()
            .map(|s| section(s)),
    );
    if url.len() <= MAX_BUTTON_URL && !url.is_empty() {
        blocks.push(json!({
            "type": "actions",
            "elements": [link_button("Open", url)],
        }));
    }
    SlackMessage {
        text: fallback_text(&format!("{title}: {body}")),
        blocks,
    }
}

/// The modal a text question's button opens: the question and one input; its submission is
/// the answer.
pub fn text_modal(
    question: &str,
    command: Option<&str>,
    decision: Uuid,
    placeholder: Option<&str>,
) -> Value {
    let mut input = json!({
        "type": "plain_text_input",
        "action_id": TEXT_INPUT,
        "multiline": true,
        "max_length": MAX_INPUT_LENGTH,
    });
    if let Some(p) = placeholder.filter(|p| !p.trim().is_empty()) {
        input["placeholder"] = plain(&clip_plain(p, 150));
    }
    modal(
        TEXT_MODAL,
        &button_value(decision, TEXT_CODE),
        "Answer",
        "Send",
        question,
        command,
        json!({
            "type": "input",
            "block_id": TEXT_INPUT,
            "label": plain("Your answer"),
            "element": input,
        }),
    )
}

/// The modal an approval's Deny opens: the question and an optional reason for the agent;
/// submitting it (with or without one) denies.
pub fn deny_modal(question: &str, command: Option<&str>, decision: Uuid) -> Value {
    modal(
        DENY_MODAL,
        &button_value(decision, DENY_CODE),
        "Deny",
        "Deny",
        question,
        command,
        json!({
            "type": "input",
            "block_id": REASON_INPUT,
            "optional": true,
            "label": plain("Reason for the agent (optional)"),
            "element": {
                "type": "plain_text_input",
                "action_id": REASON_INPUT,
                "multiline": true,
                "max_length": MAX_INPUT_LENGTH,
            },
        }),
    )
}

fn modal(
    callback_id: &str,
    metadata: &str,
    title: &str,
    submit: &str,
    question: &str,
    command: Option<&str>,
    input: Value,
) -> Value {
    let mut blocks = vec![section(&question_text(question))];
    if let Some(command) = command {
        blocks.push(command_block(command));
    }
    blocks.push(input);
    json!({
        "type": "modal",
        "callback_id": callback_id,
        "private_metadata": metadata,
        "title": plain(&clip_plain(title, MAX_MODAL_TITLE)),
        "submit": plain(&clip_plain(submit, MAX_MODAL_TITLE)),
        "close": plain("Cancel"),
        "blocks": blocks,
    })
}

/// The header, the question, the context and what runs: what every message of the decision
/// shows.
fn head(ask: &ChatAsk) -> Vec<Value> {
    let title = match &ask.heading {
        Some(h) => format!("{h} · {}", ask.title),
        None => ask.title.clone(),
    };
    let mut blocks = vec![header(&title), section(&question_text(&ask.question))];
    if let Some(context) = ask.context.as_deref().filter(|c| !c.trim().is_empty()) {
        let mrkdwn = markdown_to_mrkdwn(context);
        blocks.extend(
            split(&mrkdwn, MAX_SECTION_TEXT, CONTEXT_SECTIONS)
                .iter()
                .map(|s| section(s)),
        );
    }
    if let Some(command) = &ask.command {
        blocks.push(command_block(command));
    }
    blocks
}

fn question_text(question: &str) -> String {
    split(&escape(question), MAX_SECTION_TEXT, 1)
        .into_iter()
        .next()
        .unwrap_or_else(|| " ".into())
}

/// What an approval runs, set apart in a code block. A rich text's `text` element is shown as
/// given: no mrkdwn, no mention, no link is read in it, so it needs no escaping and shows the
/// page's words exactly. Past a block's 3000 characters it is cut with a note saying how much
/// (the page shows all of it).
fn command_block(command: &str) -> Value {
    let text = if command.chars().count() <= MAX_SECTION_TEXT {
        command.to_string()
    } else {
        clip(command, MAX_SECTION_TEXT - CUT_NOTE_ROOM, Lines::Kept).with_note()
    };
    json!({
        "type": "rich_text",
        "elements": [{
            "type": "rich_text_preformatted",
            "elements": [{"type": "text", "text": text}],
        }],
    })
}

/// The row of controls: the kind's buttons, or the one that opens the text modal, and a
/// button to the page.
fn actions(ask: &ChatAsk, decision: Uuid) -> Value {
    let mut elements: Vec<Value> = match &ask.controls {
        Controls::Buttons(buttons) => {
            let mut row: Vec<Value> = buttons.iter().map(answer_button).collect();
            if ask.notes.iter().any(|n| *n == ask.t.tr("chat-own-answer")) {
                row.push(json!({
                    "type": "button",
                    "text": plain(&ask.t.tr("chat-other")),
                    "action_id": REPLY,
                    "value": button_value(decision, TEXT_CODE),
                }));
            }
            row
        }
        Controls::Reply { .. } => vec![json!({
            "type": "button",
            "text": plain(&ask.t.tr("chat-answer")),
            "style": "primary",
            "action_id": REPLY,
            "value": button_value(decision, TEXT_CODE),
        })],
        Controls::Link => vec![],
    };
    let open = ask.t.tr(if matches!(ask.controls, Controls::Link) {
        "chat-answer-on-the-page"
    } else {
        "chat-open-the-page"
    });
    if ask.link.len() <= MAX_BUTTON_URL && !ask.link.is_empty() {
        let mut button = link_button(&open, &ask.link);
        if matches!(ask.controls, Controls::Link) {
            button["style"] = json!("primary");
        }
        elements.push(button);
    }
    elements.truncate(MAX_ACTIONS_ELEMENTS);
    json!({
        "type": "actions",
        "block_id": format!("sayso.{}", decision.simple()),
        "elements": elements,
    })
}

/// One answer: its label (the recommended one marked ★, as on the page), its style, and the value that names
/// the decision and the answer, nothing more; its action id repeats the answer's code.
fn answer_button(b: &ChatButton) -> Value {
    let code = parse_button_value(&b.value)
        .map(|(_, code)| code)
        .unwrap_or_default();
    const RECOMMENDED: &str = "★ ";
    let label = if b.recommended {
        let room = MAX_BUTTON_TEXT - RECOMMENDED.chars().count();
        format!("{RECOMMENDED}{}", clip_plain(&b.label, room))
    } else {
        clip_plain(&b.label, MAX_BUTTON_TEXT)
    };
    let mut button = json!({
        "type": "button",
        "text": plain(&label),
        "action_id": clip_plain(&format!("{ANSWER}{code}"), MAX_ACTION_ID),
        "value": b.value,
    });
    match b.style {
        ButtonStyle::Primary => button["style"] = json!("primary"),
        ButtonStyle::Danger => button["style"] = json!("danger"),
        ButtonStyle::Plain => {}
    }
    button
}

fn link_button(label: &str, url: &str) -> Value {
    json!({
        "type": "button",
        "text": plain(label),
        "action_id": OPEN,
        "url": url,
    })
}

fn header(text: &str) -> Value {
    json!({"type": "header", "text": plain(&clip_plain(text, MAX_HEADER_TEXT))})
}

/// A section of mrkdwn already escaped and within the limit.
fn section(mrkdwn: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}})
}

/// Small grey lines (notes, a tally), each escaped.
fn context(lines: &[&str]) -> Value {
    let elements: Vec<Value> = lines
        .iter()
        .take(MAX_CONTEXT_ELEMENTS)
        .map(|l| json!({"type": "mrkdwn", "text": escape(&clip_plain(l, 2000))}))
        .collect();
    json!({"type": "context", "elements": elements})
}

fn plain(text: &str) -> Value {
    json!({"type": "plain_text", "text": text, "emoji": true})
}

/// The notification's words: the title and the question.
fn fallback(ask: &ChatAsk) -> String {
    fallback_text(&format!("{}: {}", ask.title, ask.question))
}

/// A message's `text`, which Slack reads as mrkdwn too: escaped, then cut to fit.
fn fallback_text(text: &str) -> String {
    let escaped = escape(text);
    let (head, rest) = cut_at(&escaped, MAX_FALLBACK_TEXT - 1);
    if rest.is_empty() {
        head.to_string()
    } else {
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests;
