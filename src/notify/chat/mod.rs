//! Chat channels (Slack): what a chat message of a decision holds, platform-neutral.
//!
//! Each platform renders a `ChatAsk` in its own markup, and the one line `settled` returns
//! once the decision is settled.

pub mod slack_api;
pub mod slack_blocks;
pub mod slack_interaction;
pub mod slack_mrkdwn;
pub mod slack_signature;
pub mod slack_socket;

use uuid::Uuid;

/// A decision's question as a chat message shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatAsk {
    /// The project, or "sayso".
    pub title: String,
    /// "Reminder" / "Escalated", or none.
    pub heading: Option<String>,
    /// Made visible, plain text.
    pub question: String,
    /// The decision's context: Markdown source, already clipped.
    pub context: Option<String>,
    /// What an approval runs, exactly as the page shows it.
    pub command: Option<String>,
    pub controls: Controls,
    /// The person's own link for this channel: the page.
    pub link: String,
    /// "3 more questions are waiting…" lines.
    pub notes: Vec<String>,
}

/// How the person answers from the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Controls {
    /// bool, approval, choose (at most `MAX_BUTTONS` options).
    Buttons(Vec<ChatButton>),
    /// text: a modal (Slack) or a reply to the message.
    Reply { placeholder: Option<String> },
    /// Only on the page: forms, a passkey step-up, too many options, gathered asks.
    Link,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatButton {
    pub label: String,
    pub code: String,
    pub style: ButtonStyle,
    pub recommended: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonStyle {
    Primary,
    Danger,
    Plain,
}

pub const MAX_BUTTONS: usize = 5;

/// The value a button carries: "{decision id, 32 hex}.{code}".
pub fn button_value(decision: Uuid, code: &str) -> String {
    format!("{}.{code}", decision.simple())
}

pub fn parse_button_value(s: &str) -> Option<(Uuid, String)> {
    let (id, code) = s.split_once('.')?;
    if id.len() != 32 || code.is_empty() {
        return None;
    }
    Some((Uuid::try_parse(id).ok()?, code.to_string()))
}
