//! The chats (docs/CHANNELS.md): what an ask says on Slack, Matrix and Telegram, before each
//! platform words it in its own markup, and the lines that replace its controls once it
//! settles or while a rule of several people counts.
//!
//! Everything the asker wrote (the question, the context) is made visible here and escaped
//! by the platform's renderer; an approval shows what runs, built from the approval itself
//! (render/what_runs.rs), never the asker's words. A button carries the decision's id and a
//! code (`domain::chat::button_value`), no capability: the platform's verified user decides
//! whose answer it is.

pub mod matrix;
mod routes;
mod settings;
pub mod slack;
pub mod telegram;

pub use routes::routes;
pub use settings::{ChatSettings, MatrixSettings, SlackSettings, TelegramSettings};

use crate::render::project::short_project;
use serde_json::Value;

use super::Delivering;
use super::people::{ESCALATION, waiting_line};
use crate::domain::answered_by::AnswerChannel;
use crate::domain::approval::{ALLOW, DENY};
use crate::domain::chat::{button_value, option_code};
use crate::domain::outbox::Purpose;
use crate::domain::people::required;
use crate::domain::spec::KindSpec;
use crate::domain::{Decision, Status};
use crate::render::Zone;
use crate::render::approval::gathered_line;
use crate::render::visible::{Lines, clip};
use crate::render::what_runs;
use crate::service::SHOWN_CHARS;

/// Starts each chat's listener that takes presses and replies without a public URL (long
/// polling, sync, Socket Mode), or tells the platform where the webhook is; they stop with
/// the service.
pub fn start_listeners(svc: &crate::service::Service, settings: &ChatSettings) {
    if let Some(s) = &settings.slack {
        slack::start_listener(svc, s);
    }
    if let Some(t) = &settings.telegram {
        let api = telegram::BotApi::new(t);
        match &t.webhook_secret {
            None => svc.spawn_until_shutdown(telegram::run_listener(svc.clone(), api)),
            Some(secret) => svc.spawn_until_shutdown(telegram::set_webhook(
                api,
                format!("{}/chat/telegram/webhook", svc.settings().public_url),
                secret.clone(),
            )),
        }
    }
    if let Some(m) = &settings.matrix {
        svc.spawn_until_shutdown(matrix::run_listener(svc.clone(), matrix::Matrix::shared(m)));
    }
}

/// Sends `person` a test message on `channel` (`sayso person test`): what went out, or why
/// nothing did, in words for the operator.
pub async fn send_test(
    settings: &ChatSettings,
    channel: crate::domain::outbox::Channel,
    person: &crate::domain::people::Person,
    svc: &crate::service::Service,
) -> Result<String, String> {
    use crate::domain::outbox::Channel;
    let Some(user) = person.chats.on(channel) else {
        return Err(format!(
            "{} has no {channel} user: sayso person set {} --{channel} …",
            person.name, person.name
        ));
    };
    let off =
        |vars: &str| format!("{channel} is not set up here: set {vars} as the server has them");
    let text = format!(
        "This is a test from sayso: questions for {} will arrive here.",
        person.name
    );
    match channel {
        Channel::Telegram => {
            let t = settings
                .telegram
                .as_ref()
                .ok_or_else(|| off("SAYSO_TELEGRAM_BOT_TOKEN"))?;
            telegram::send_test(t, user, &text).await
        }
        Channel::Slack => {
            let s = settings
                .slack
                .as_ref()
                .ok_or_else(|| off("SAYSO_SLACK_BOT_TOKEN"))?;
            slack::send_test(s, user, &text).await
        }
        Channel::Matrix => {
            let m = settings.matrix.as_ref().ok_or_else(|| {
                off(
                    "SAYSO_MATRIX_HOMESERVER, SAYSO_MATRIX_USER and SAYSO_MATRIX_PASSWORD \
                     (or SAYSO_MATRIX_ACCESS_TOKEN)",
                )
            })?;
            matrix::send_test(m, svc, user, &text).await
        }
        other => Err(format!("{other} is not a chat")),
    }
}

/// The note of a `choose` that takes an answer of one's own (Slack shows a button for it
/// instead).
pub const OWN_ANSWER_NOTE: &str = "Or reply to this message with your own answer.";

/// The code of an approval's Allow button (`button_value(decision, ALLOW_CODE)`).
pub const ALLOW_CODE: &str = "a";
/// The note of an approval whose message gives no one-tap Allow.
pub const ALLOW_ON_THE_PAGE: &str = "Allow on the page: it shows all that runs.";

/// The most buttons an ask shows; a `choose` with more options opens the page.
pub const MAX_BUTTONS: usize = 5;
/// The most characters of a question, and of its context, in a message.
const QUESTION_CHARS: usize = 500;
const CONTEXT_CHARS: usize = 1500;

/// What an ask says, before a platform words it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatAsk {
    /// The project, or "sayso".
    pub title: String,
    /// "Reminder" or "Escalated to you", when it is one.
    pub heading: Option<String>,
    /// The question (an approval's: who wants to do what), made visible, plain text.
    pub question: String,
    /// The asker's Markdown context, made visible and cut; each platform escapes it.
    pub context: Option<String>,
    /// What a tool approval runs, exactly as the page shows it: set apart (a code block).
    pub command: Option<String>,
    /// The agent's own words about the call, and the dangers, one line each.
    pub notes: Vec<String>,
    pub controls: Controls,
    /// The person's own link for this chat: the page.
    pub link: String,
}

/// How the person answers from the message.
#[derive(Debug, Clone, PartialEq)]
pub enum Controls {
    /// One press answers (bool, approvals, a short `choose`, a to-do).
    Buttons(Vec<ChatButton>),
    /// A text: Slack opens a modal, Matrix and Telegram read a reply to the message.
    Reply { placeholder: Option<String> },
    /// Only the page can take it: a form, an Allow that needs the page, many options.
    Link,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatButton {
    pub label: String,
    /// What the button's press carries: `button_value(decision, code)`.
    pub value: String,
    pub style: ButtonStyle,
    /// The option the asker recommends (shown marked).
    pub recommended: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonStyle {
    Primary,
    Danger,
    Plain,
}

/// What the ask of `d` says, for its person on its channel.
pub fn ask(d: &Delivering<'_>) -> ChatAsk {
    let decision = d.decision;
    let spec = &decision.spec;
    let heading = match d.message.purpose {
        Purpose::Reminder => Some("Reminder".to_string()),
        _ if d.message.payload[ESCALATION] == Value::Bool(true) => {
            Some("Escalated to you".to_string())
        }
        _ => None,
    };
    let mut notes = Vec::new();
    let (question, command, controls) = match &spec.approval {
        Some(a) => {
            let shown = what_runs::shown(a, SHOWN_CHARS);
            if let Some(said) = &shown.description {
                notes.push(format!("The agent says: {said}"));
            }
            notes.extend(shown.dangers.iter().map(|d| format!("⚠ {d}")));
            let allow = if shown.one_tap_allow {
                button(decision, ALLOW, ALLOW_CODE, ButtonStyle::Primary)
            } else {
                // The message cannot show all that runs, or the rule wants a passkey: Allow
                // is given on the page, which the link opens.
                notes.push(ALLOW_ON_THE_PAGE.to_string());
                ChatButton {
                    value: String::new(),
                    ..button(decision, ALLOW, "", ButtonStyle::Primary)
                }
            };
            let mut buttons = vec![allow, button(decision, DENY, "d", ButtonStyle::Danger)];
            buttons.retain(|b| !b.value.is_empty());
            // The input's other fields go with what runs, set apart the same way.
            let mut command = shown.subject.with_note();
            for f in shown.fields_lines() {
                command.push('\n');
                command.push_str(&f);
            }
            (
                shown.title.clone(),
                Some(command),
                Controls::Buttons(buttons),
            )
        }
        None => {
            if let KindSpec::Choose {
                allow_other: true,
                multi: false,
                ..
            } = &spec.body
            {
                notes.push(OWN_ANSWER_NOTE.to_string());
            }
            (
                clip(&spec.question, QUESTION_CHARS, Lines::Kept).with_note(),
                None,
                controls(decision),
            )
        }
    };
    match d.gathered() {
        0 => {}
        n => notes.push(gathered_line(n)),
    }
    // When it closes, while it is open; a settled message says when it settled instead.
    let now = crate::service::now();
    if decision.is_open_at(now) {
        notes.push(d.zone.expires(decision.expires_at, now));
    }
    let waiting = d.waiting();
    let controls = if waiting > 0 && matches!(d.message.purpose, Purpose::Ask | Purpose::Reminder) {
        // It stands for asks the person's budget held: answering here would answer only
        // this one, so the feed takes them all.
        notes.push(waiting_line(waiting));
        Controls::Link
    } else if d.gathered() > 0 {
        Controls::Link
    } else {
        controls
    };
    ChatAsk {
        title: spec
            .project
            .as_deref()
            .map_or_else(|| "sayso".to_string(), short_project),
        heading,
        question,
        context: spec
            .context_md
            .as_deref()
            .map(|c| clip(c, CONTEXT_CHARS, Lines::Kept).with_note()),
        command,
        notes,
        controls,
        link: d.web_url.to_string(),
    }
}

/// The controls of a question that is not a tool approval.
fn controls(d: &Decision) -> Controls {
    match &d.spec.body {
        KindSpec::Bool {
            yes_label,
            no_label,
        } => Controls::Buttons(vec![
            button(d, yes_label, "y", ButtonStyle::Primary),
            button(d, no_label, "n", ButtonStyle::Plain),
        ]),
        // "Other" is a reply to the message (the ask says so).
        KindSpec::Choose {
            options,
            multi: false,
            recommended,
            ..
        } if options.len() <= MAX_BUTTONS => Controls::Buttons(
            options
                .iter()
                .enumerate()
                .map(|(i, o)| ChatButton {
                    recommended: *recommended == Some(i),
                    ..button(d, &o.label, &option_code(i), ButtonStyle::Plain)
                })
                .collect(),
        ),
        KindSpec::Text { placeholder } => Controls::Reply {
            placeholder: placeholder.clone(),
        },
        KindSpec::Todo => Controls::Buttons(vec![
            button(d, "Done", "done", ButtonStyle::Primary),
            button(d, "Skip", "skip", ButtonStyle::Plain),
        ]),
        // Several options, "Other", more than fit, a form: the page.
        KindSpec::Choose { .. } | KindSpec::Form(_) => Controls::Link,
    }
}

fn button(d: &Decision, label: &str, code: &str, style: ButtonStyle) -> ChatButton {
    ChatButton {
        label: clip(label, 60, Lines::Marked).with_note(),
        value: button_value(d.id, code),
        style,
        recommended: false,
    }
}

/// The zone to tell `user` of `channel` about the decision of `outcome` in: theirs, else
/// the inbox's own person's.
pub async fn presser_zone(
    svc: &crate::service::Service,
    channel: crate::domain::outbox::Channel,
    user: &str,
    outcome: &crate::service::ChatOutcome,
) -> Zone {
    use crate::service::ChatOutcome;
    match outcome {
        ChatOutcome::Recorded(d) | ChatOutcome::Settled(d) => {
            Zone::of(svc.chat_user_zone(d, channel, user).await.as_deref())
        }
        _ => Zone::utc(),
    }
}

/// The line that replaces a message's controls once its decision settled, saying who
/// decided, how and when, in `zone`: "Allowed by ana from the feed, 2026-11-27 04:12 CET".
pub fn settled(d: &Decision, zone: &Zone) -> String {
    let when = d
        .resolved_at
        .map(|t| format!(", {}", zone.date_time(t)))
        .unwrap_or_default();
    let last = d.answers.last();
    let by = last
        .and_then(|a| a.person.as_deref())
        .map(|p| format!(" by {p}"))
        .unwrap_or_default();
    let via = d
        .answered_by
        .map(|b| b.channel)
        .or(last.map(|a| a.channel))
        .map(|c| format!(" {}", from(c)))
        .unwrap_or_default();
    match d.status {
        Status::Pending => progress(d).unwrap_or_else(|| "Waiting for an answer".to_string()),
        Status::Answered => {
            let what = match (&d.spec.approval, &d.outcome) {
                (Some(_), Some(Value::String(s))) if s == DENY => "Denied".to_string(),
                (Some(_), _) => "Allowed".to_string(),
                (None, Some(v)) => format!("Answered {}", outcome_words(d, v)),
                (None, None) => "Answered".to_string(),
            };
            let remark = d
                .remark
                .as_deref()
                .map(|r| format!(" · {}", clip(r, 300, Lines::Marked).with_note()))
                .unwrap_or_default();
            format!("{what}{by}{via}{when}{remark}")
        }
        Status::Declined => format!("Declined{by}{via}{when}"),
        Status::Expired => match &d.outcome {
            Some(v) => format!(
                "Expired{when}, unanswered: the default ({}) applies",
                outcome_words(d, v)
            ),
            None => format!("Expired{when}, unanswered"),
        },
        Status::Cancelled
            if d.cancel_reason == Some(crate::domain::decision::CancelReason::Abandoned) =>
        {
            format!("Withdrawn{when}: the agent stopped waiting")
        }
        Status::Cancelled => format!("Cancelled by the agent{when}"),
    }
}

/// What the one who answered is told: "Allowed." or, while others must agree too, the tally.
pub fn recorded(d: &Decision, zone: &Zone) -> String {
    match progress(d) {
        Some(p) => format!("Counted. {p}"),
        None => settled(d, zone),
    }
}

/// What a pending decision's message says under its question while others are asked too:
/// the tally of a rule of several ("1 of 2 allowed: ana") and its escalation ("Escalated to
/// bo, 2026-11-27 04:12 CET", in `zone`); `None` when neither applies.
pub fn standing(d: &Decision, now: time::OffsetDateTime, zone: &Zone) -> Option<String> {
    let mut parts: Vec<String> = progress(d).into_iter().collect();
    if let Some(r) = &d.spec.routing
        && let Some(at) = r.escalates_at(d.created_at).filter(|at| *at <= now)
    {
        let to = if r.escalate_to.is_empty() {
            "everyone else".to_string()
        } else {
            r.escalate_to.join(", ")
        };
        parts.push(format!("Escalated to {to}, {}", zone.date_time(at)));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// "1 of 2 allowed: ana", while a rule of several people is counting.
pub fn progress(d: &Decision) -> Option<String> {
    let needed = required(d);
    if needed <= 1 || d.status != Status::Pending {
        return None;
    }
    let names: Vec<&str> = d
        .answers
        .iter()
        .filter(|a| !a.is_veto())
        .filter_map(|a| a.person.as_deref())
        .collect();
    let verb = if d.spec.approval.is_some() {
        "allowed"
    } else {
        "said yes"
    };
    Some(format!(
        "{} of {needed} {verb}: {}",
        names.len(),
        if names.is_empty() {
            "no one yet".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// "from the feed", "from Slack": the way an answer came, as a person says it.
fn from(c: AnswerChannel) -> &'static str {
    match c {
        AnswerChannel::Link => "from the question's link",
        AnswerChannel::Feed => "from the feed",
        AnswerChannel::Push => "from a notification",
        AnswerChannel::Ntfy => "from ntfy",
        AnswerChannel::Email => "from the mail",
        AnswerChannel::Api => "by the agent",
        AnswerChannel::Slack => "from Slack",
        AnswerChannel::Matrix => "from Matrix",
        AnswerChannel::Telegram => "from Telegram",
    }
}

/// An outcome in a few words: "yes", "Blue", "Blue, Green", a text cut short.
fn outcome_words(d: &Decision, v: &Value) -> String {
    let words = match (&d.spec.body, v) {
        (KindSpec::Bool { yes_label, .. }, Value::Bool(true)) => yes_label.clone(),
        (KindSpec::Bool { no_label, .. }, Value::Bool(false)) => no_label.clone(),
        (_, Value::String(s)) => s.clone(),
        (_, Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        (_, other) => other.to_string(),
    };
    format!("“{}”", clip(&words, 200, Lines::Marked).with_note())
}
