//! Which way an answer came, for the audit trail and for the hook's "Allow for this
//! session": the person's own side (the feed, a notification, the mail) or something an
//! agent's API key reaches (a question's link, the API's cancel).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::words::words;

/// The way a decision was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum AnswerChannel {
    /// The decision's own link (`web_url`, `/d/{token}`): only plain questions, whose link
    /// the agent holds and may have handed on.
    Link,
    /// The person's feed, on a device bound to the inbox or opened with the feed link.
    Feed,
    /// A Web Push notification's buttons or the page it opened.
    Push,
    /// An ntfy notification's buttons or the page it opened.
    Ntfy,
    /// The approval mail's links.
    Email,
    /// The agent's API key: a cancel (HTTP, MCP or the CLI).
    Api,
    /// A Slack button, modal or reply, by the person's Slack user (docs/CHANNELS.md).
    Slack,
    /// A Matrix reaction or reply, by the person's Matrix user.
    Matrix,
    /// A Telegram button or reply, by the person's Telegram user.
    Telegram,
}

words!(AnswerChannel {
    Link => "link",
    Feed => "feed",
    Push => "push",
    Ntfy => "ntfy",
    Email => "email",
    Api => "api",
    Slack => "slack",
    Matrix => "matrix",
    Telegram => "telegram",
});

impl AnswerChannel {
    /// Whether the answer came through what only the person holds: an approval's answer
    /// capability, never shown to an API key.
    pub fn is_person_side(self) -> bool {
        PersonChannel::from_answer_channel(self).is_some()
    }
}

/// The ways only the person can answer a tool approval; each gets its own approval token,
/// so the token itself says which one was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PersonChannel {
    Feed,
    Push,
    Ntfy,
    Email,
    Slack,
    Matrix,
    Telegram,
}

impl PersonChannel {
    pub const ALL: [PersonChannel; 7] = [
        PersonChannel::Feed,
        PersonChannel::Push,
        PersonChannel::Ntfy,
        PersonChannel::Email,
        PersonChannel::Slack,
        PersonChannel::Matrix,
        PersonChannel::Telegram,
    ];

    /// The byte that stands for the channel inside an approval token.
    pub fn code(self) -> u8 {
        match self {
            PersonChannel::Feed => 1,
            PersonChannel::Push => 2,
            PersonChannel::Ntfy => 3,
            PersonChannel::Email => 4,
            PersonChannel::Slack => 5,
            PersonChannel::Matrix => 6,
            PersonChannel::Telegram => 7,
        }
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    pub fn answer_channel(self) -> AnswerChannel {
        match self {
            PersonChannel::Feed => AnswerChannel::Feed,
            PersonChannel::Push => AnswerChannel::Push,
            PersonChannel::Ntfy => AnswerChannel::Ntfy,
            PersonChannel::Email => AnswerChannel::Email,
            PersonChannel::Slack => AnswerChannel::Slack,
            PersonChannel::Matrix => AnswerChannel::Matrix,
            PersonChannel::Telegram => AnswerChannel::Telegram,
        }
    }

    fn from_answer_channel(c: AnswerChannel) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.answer_channel() == c)
    }
}

impl PersonChannel {
    /// The person's channel a notification goes out on; `None` for the agent's webhook.
    pub fn of(c: super::outbox::Channel) -> Option<Self> {
        use super::outbox::Channel;
        match c {
            Channel::Email => Some(PersonChannel::Email),
            Channel::Push => Some(PersonChannel::Push),
            Channel::Ntfy => Some(PersonChannel::Ntfy),
            Channel::Slack => Some(PersonChannel::Slack),
            Channel::Matrix => Some(PersonChannel::Matrix),
            Channel::Telegram => Some(PersonChannel::Telegram),
            Channel::Webhook | Channel::Completion => None,
        }
    }
}

/// Who answered, as far as the server can tell: the channel, and the bound device when
/// the answer came from a browser that opened the feed link (its cookie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnsweredBy {
    pub channel: AnswerChannel,
    /// The id of the device bound to the inbox that answered, when known.
    pub device_id: Option<Uuid>,
}

impl AnsweredBy {
    pub fn new(channel: AnswerChannel, device_id: Option<Uuid>) -> Self {
        AnsweredBy { channel, device_id }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_persons_channels_count_as_theirs() {
        let person: Vec<AnswerChannel> = AnswerChannel::ALL
            .into_iter()
            .filter(|c| c.is_person_side())
            .collect();
        assert_eq!(
            person,
            [
                AnswerChannel::Feed,
                AnswerChannel::Push,
                AnswerChannel::Ntfy,
                AnswerChannel::Email,
                AnswerChannel::Slack,
                AnswerChannel::Matrix,
                AnswerChannel::Telegram,
            ]
        );
        for c in PersonChannel::ALL {
            assert_eq!(PersonChannel::from_code(c.code()), Some(c));
        }
        assert_eq!(PersonChannel::from_code(0), None);
    }
}
