//! People: the answerers of an inbox. Who a decision asks (`approvers`), how many of them
//! must agree (`required`), when it moves on to others (`escalate_after_s`,
//! `escalate_to`), and the answers it has gathered so far.
//! The rule over a decision is `tally.rs`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::answered_by::AnswerChannel;
use super::quiet::QuietHours;

/// The longest a person's name may be.
pub const MAX_NAME: usize = 64;
/// The most people a decision may name as approvers or escalation targets.
pub const MAX_NAMED: usize = 50;

/// One of an inbox's answerers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The inbox's own person (the one every inbox starts with) has the inbox's id.
    pub id: Uuid,
    pub inbox_id: Uuid,
    pub name: String,
    pub email: Option<String>,
    /// An ntfy topic URL of their own.
    pub ntfy_url: Option<String>,
    pub ntfy_token: Option<String>,
    /// Who they are on Slack, Matrix and Telegram (docs/CHANNELS.md).
    pub chats: ChatUsers,
    /// Their time zone, an IANA name under its canonical spelling ("Asia/Kolkata"): every
    /// time their pages, mails, notifications and chats state is in it; `None` for UTC.
    pub tz: Option<String>,
    /// While these hold, their notifications wait (urgent decisions excepted); read in `tz`.
    pub quiet: Option<QuietHours>,
    /// The language sayso speaks to them in (pages, mails, notifications, chats); none
    /// leaves it to their browser, else English.
    pub lang: Option<super::lang::Lang>,
    pub created_at: OffsetDateTime,
}

impl Person {
    /// A person who is only a name so far: no way to reach them, no zone, quiet hours or
    /// language of their own.
    pub fn named(id: Uuid, inbox_id: Uuid, name: &str, created_at: OffsetDateTime) -> Person {
        Person {
            id,
            inbox_id,
            name: name.to_string(),
            email: None,
            ntfy_url: None,
            ntfy_token: None,
            chats: Default::default(),
            tz: None,
            quiet: None,
            lang: None,
            created_at,
        }
    }

    /// Whether this is the person the inbox was made with (whose feed link is the inbox's).
    pub fn is_inbox_own(&self) -> bool {
        self.id == self.inbox_id
    }
}

/// Who a person is on each chat: the platform's own id of their user, which is what an
/// answer from that chat is checked against (never a display name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatUsers {
    /// A Slack user id, `U…` or `W…`.
    pub slack: Option<String>,
    /// A Matrix user id, `@name:server`.
    pub matrix: Option<String>,
    /// A Telegram user id (digits), which is also their private chat with the bot.
    pub telegram: Option<String>,
}

impl ChatUsers {
    /// Their user on `channel`, if that is a chat and they have one there.
    pub fn on(&self, channel: super::outbox::Channel) -> Option<&str> {
        use super::outbox::Channel;
        match channel {
            Channel::Slack => self.slack.as_deref(),
            Channel::Matrix => self.matrix.as_deref(),
            Channel::Telegram => self.telegram.as_deref(),
            Channel::Email
            | Channel::Push
            | Channel::Ntfy
            | Channel::Webhook
            | Channel::Completion => None,
        }
    }
}

/// A person's name: like an inbox's, a–z, 0–9, `-` and `_`, so it is typed the same way on
/// a command line, in a policy file and in a request.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!(
            "a person's name is 1 to {MAX_NAME} characters, not {}",
            name.len()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
    {
        Some(c) => Err(format!(
            "{name:?} is not a person's name: {c:?} is not allowed (use a-z, 0-9, '-' and '_')"
        )),
        None => Ok(()),
    }
}

/// A Slack user id as Slack's API gives it: `U` or `W` and upper-case letters and digits.
pub fn check_slack_user(id: &str) -> Result<(), String> {
    let ok = id.len() >= 3
        && id.len() <= 32
        && id.starts_with(['U', 'W'])
        && id
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    ok.then_some(()).ok_or_else(|| {
        format!(
            "{id:?} is not a Slack user id: it looks like U012AB3CD (the person's profile, \
             ⋮ → Copy member ID), not a name or an @handle"
        )
    })
}

/// A Matrix user id, `@localpart:server`, as the specification writes it.
pub fn check_matrix_user(id: &str) -> Result<(), String> {
    let bad = || {
        format!(
            "{id:?} is not a Matrix user id: it looks like @ana:example.org (an @, the \
             name, a colon, the homeserver)"
        )
    };
    let (local, server) = id
        .strip_prefix('@')
        .and_then(|rest| rest.split_once(':'))
        .ok_or_else(bad)?;
    let local_ok = !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._=-/+".contains(c));
    let server_ok = !server.is_empty()
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c));
    (local_ok && server_ok && id.len() <= 255)
        .then_some(())
        .ok_or_else(bad)
}

/// A Telegram user id: digits. The bot reaches the person in their private chat with it,
/// whose id is the same number; a group's id (negative) is refused, since anyone in the
/// group would read the question.
pub fn check_telegram_user(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 20
        && id.chars().all(|c| c.is_ascii_digit())
        && id.parse::<u64>().is_ok_and(|n| n > 0);
    ok.then_some(()).ok_or_else(|| {
        format!(
            "{id:?} is not a Telegram user id: it is the person's number (digits, as the bot \
             sees it in /start; docs/CHANNELS.md), not a @username or a group"
        )
    })
}

/// Who a decision asks and what it takes to resolve it. Absent from a decision's spec when
/// the request named none of it: then everyone in the inbox is asked and the first answer
/// resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routing {
    /// The people asked, by name; empty for everyone in the inbox.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
    /// How many of them must say Yes (or Allow); at least 1.
    #[serde(default = "one")]
    pub required: u32,
    /// Seconds after creation at which a decision still pending is sent to `escalate_to`
    /// too, who may then answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_after_s: Option<u32>,
    /// The people an escalation reaches; empty for everyone not among the approvers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalate_to: Vec<String>,
    /// Notifications go through quiet hours.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub urgent: bool,
}

fn one() -> u32 {
    1
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            approvers: Vec::new(),
            required: 1,
            escalate_after_s: None,
            escalate_to: Vec::new(),
            urgent: false,
        }
    }
}

impl Routing {
    /// When the decision escalates, if it does.
    pub fn escalates_at(&self, created_at: OffsetDateTime) -> Option<OffsetDateTime> {
        self.escalate_after_s
            .map(|s| created_at + Duration::seconds(i64::from(s)))
    }

    /// Whether `name` is one of the approvers (everyone is, when none are named).
    pub fn is_approver(&self, name: &str) -> bool {
        self.approvers.is_empty() || self.approvers.iter().any(|a| a == name)
    }

    /// Whether `name` is among those an escalation reaches.
    pub fn is_escalation_target(&self, name: &str) -> bool {
        self.escalate_after_s.is_some()
            && if self.escalate_to.is_empty() {
                !self.is_approver(name)
            } else {
                self.escalate_to.iter().any(|a| a == name)
            }
    }
}

/// The action of an answer request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnswerAction {
    #[default]
    Answer,
    Decline,
    Done,
    Skip,
}

/// One answer a person gave a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnswerRecord {
    /// The person's name; null for an answer through the decision's own link from a browser
    /// bound to nobody.
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub person_id: Option<Uuid>,
    /// `answer`, `decline`, `done` or `skip`.
    pub action: AnswerAction,
    /// What they answered, shaped like the decision's `outcome`; null for a decline.
    pub value: Option<Value>,
    pub remark: Option<String>,
    /// A tool approval allowed with its command edited: the command as the person wrote
    /// it, which is what runs (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_command: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub channel: AnswerChannel,
}

/// The answer the tests build on: ana's `value` on the feed at `at`, without a remark.
#[cfg(test)]
impl AnswerRecord {
    pub fn by_ana(value: Value, at: OffsetDateTime) -> AnswerRecord {
        AnswerRecord {
            person: Some("ana".into()),
            person_id: None,
            action: AnswerAction::Answer,
            value: Some(value),
            remark: None,
            edited_command: None,
            at,
            channel: AnswerChannel::Feed,
        }
    }
}

impl AnswerRecord {
    /// A No, a Deny or a Decline: it resolves the decision at once, whatever the rule.
    /// (Several people agree only on a `bool` or a tool approval, whose answers are
    /// `true`/`false` and Allow/Deny.)
    pub fn is_veto(&self) -> bool {
        self.action == AnswerAction::Decline
            || match &self.value {
                Some(Value::Bool(yes)) => !yes,
                Some(Value::String(s)) => s == super::approval::DENY,
                _ => false,
            }
    }

    /// A Yes or an Allow: it counts towards the people `required`.
    pub fn is_yes(&self) -> bool {
        self.action == AnswerAction::Answer
            && match &self.value {
                Some(Value::Bool(yes)) => *yes,
                Some(Value::String(s)) => {
                    s == super::approval::ALLOW || s == super::approval::ALLOW_SESSION
                }
                _ => false,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_slugs() {
        assert!(check_name("ana").is_ok());
        assert!(check_name("ben-2_x").is_ok());
        for bad in ["", "Ana", "a b", "ana!", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn escalation_targets_default_to_everyone_else() {
        let r = Routing {
            approvers: vec!["ana".into()],
            escalate_after_s: Some(60),
            ..Routing::default()
        };
        assert!(r.is_approver("ana") && !r.is_approver("ben"));
        assert!(r.is_escalation_target("ben") && !r.is_escalation_target("ana"));
        let named = Routing {
            escalate_to: vec!["cy".into()],
            ..r.clone()
        };
        assert!(named.is_escalation_target("cy") && !named.is_escalation_target("ben"));
        let never = Routing {
            escalate_after_s: None,
            ..r
        };
        assert!(!never.is_escalation_target("ben"));
    }

    #[test]
    fn allow_counts_and_deny_vetoes_as_yes_and_no_do() {
        let answer = |value: Value| AnswerRecord::by_ana(value, OffsetDateTime::UNIX_EPOCH);
        for yes in [
            Value::Bool(true),
            Value::from("Allow"),
            Value::from("Allow for this session"),
        ] {
            assert!(answer(yes.clone()).is_yes() && !answer(yes).is_veto());
        }
        for no in [Value::Bool(false), Value::from("Deny")] {
            assert!(answer(no.clone()).is_veto() && !answer(no).is_yes());
        }
        let decline = AnswerRecord {
            action: AnswerAction::Decline,
            value: None,
            ..answer(Value::Null)
        };
        assert!(decline.is_veto());
    }

    #[test]
    fn routing_reads_back_with_defaults() {
        let r: Routing = serde_json::from_str(r#"{"approvers":["ana"]}"#).unwrap();
        assert_eq!(r.required, 1);
        assert_eq!(
            serde_json::to_value(Routing::default()).unwrap(),
            serde_json::json!({"required": 1})
        );
    }
}
