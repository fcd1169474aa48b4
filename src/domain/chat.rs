//! The chats a person answers from (docs/CHANNELS.md): a message an ask was posted as, so
//! it is edited in place as the decision moves on, and a reply or a reaction to it finds
//! its decision.

use uuid::Uuid;

use super::outbox::Channel;

/// One message a chat courier posted for a decision, to one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatPost {
    pub decision: Uuid,
    pub person: Uuid,
    /// Slack, Matrix or Telegram.
    pub channel: Channel,
    /// Where it was posted: a Slack channel id, a Matrix room id, a Telegram chat id.
    pub conversation: String,
    /// The message there: a Slack `ts`, a Matrix event id, a Telegram message id.
    pub message: String,
}

/// What a person sent from a chat: a press of one of the message's buttons (its code, see
/// the service's `chat_reading`), or a text (a reply to the message, a modal's field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatReply {
    Button(String),
    Text(String),
}

/// The value a button carries: the decision's id and the button's code,
/// `"{32 hex digits}.{code}"`, at most 64 bytes (Telegram's limit for callback data). It
/// holds no capability: who may answer is the platform's verified user, not the button.
pub fn button_value(decision: Uuid, code: &str) -> String {
    format!("{}.{code}", decision.simple())
}

/// The decision and code of a button's value, if it is one of ours.
pub fn parse_button_value(value: &str) -> Option<(Uuid, String)> {
    let (id, code) = value.split_once('.')?;
    if id.len() != 32 || code.is_empty() || code.len() > 8 {
        return None;
    }
    Some((Uuid::try_parse(id).ok()?, code.to_string()))
}

/// The code of the button for choosing option `i` of a `choose` decision.
pub fn option_code(i: usize) -> String {
    format!("o{i}")
}
