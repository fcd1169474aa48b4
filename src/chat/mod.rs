//! The chats (docs/CHANNELS.md): what an ask says on Slack, Matrix and Telegram, before each
//! platform words it in its own markup, and the lines that replace its controls once it
//! settles or while a rule of several people counts.
//!
//! Everything the asker wrote (the question, the context) is made visible here and escaped
//! by the platform's renderer; an approval shows what runs, built from the approval itself
//! (render/what_runs.rs), never the asker's words. A button carries the decision's id and a
//! code (`domain::chat::button_value`), no capability: the platform's verified user decides
//! whose answer it is.
//!
//! A chat goes both ways: out, each platform's courier (`courier::Courier`) is one of the
//! outbox worker's channels (`notify` registers them); in, its listeners (`start_listeners`)
//! and inbound URLs (`routes`, joined by `app`) hand a verified press or reply to
//! `Service::chat_answer`.
//!
//! Uses `courier`, `service`, `render` and `domain`; never `notify`, `http` or `app`, which
//! stand on it (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod matrix;
mod routes;
mod settings;
pub mod slack;
pub mod telegram;

pub use routes::routes;
pub use settings::{ChatSettings, MatrixSettings, SlackSettings, TelegramSettings};

use crate::render::project::short_project;
use serde_json::Value;

use crate::courier::{Delivering, ESCALATION};
use crate::domain::answered_by::AnswerChannel;
use crate::domain::approval::DENY;
use crate::domain::chat::{button_value, option_code};
use crate::domain::outbox::Purpose;
use crate::domain::spec::KindSpec;
use crate::domain::tally::required;
use crate::domain::{Decision, Status};
use crate::render::visible::{Lines, clip};
use crate::render::what_runs;
use crate::render::{T, Zone};
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

/// The code of an approval's Allow button (`button_value(decision, ALLOW_CODE)`).
pub const ALLOW_CODE: &str = "a";

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
    /// The language of the person it goes to: the platforms' own words in it (the link's
    /// button, the reply box) come from here.
    pub t: T,
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
    let t = d.t();
    let heading = match d.message.purpose {
        Purpose::Reminder => Some(t.tr("chat-reminder")),
        _ if d.message.payload[ESCALATION] == Value::Bool(true) => Some(t.tr("chat-escalated")),
        _ => None,
    };
    let mut notes = Vec::new();
    let (question, command, controls) = match &spec.approval {
        Some(a) => {
            let shown = what_runs::shown(&t, a, SHOWN_CHARS);
            if let Some(said) = &shown.description {
                notes.push(t.tr1("chat-agent-says", "said", said));
            }
            notes.extend(shown.dangers.iter().map(|d| format!("⚠ {d}")));
            let allow_label = t.tr("approval-allow");
            let allow = if shown.one_tap_allow {
                button(decision, &allow_label, ALLOW_CODE, ButtonStyle::Primary)
            } else {
                // The message cannot show all that runs, or the rule wants a passkey: Allow
                // is given on the page, which the link opens.
                notes.push(t.tr("mail-allow-on-the-page"));
                ChatButton {
                    value: String::new(),
                    ..button(decision, &allow_label, "", ButtonStyle::Primary)
                }
            };
            let deny = button(decision, &t.tr("approval-deny"), "d", ButtonStyle::Danger);
            let mut buttons = vec![allow, deny];
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
                notes.push(t.tr("chat-own-answer"));
            }
            (
                clip(&spec.question, QUESTION_CHARS, Lines::Kept).with_note(),
                None,
                controls(&t, decision),
            )
        }
    };
    match d.gathered() {
        0 => {}
        n => notes.push(t.tr1("notify-gathered", "count", n)),
    }
    // When it closes, while it is open; a settled message says when it settled instead.
    let now = crate::service::now();
    if decision.is_open_at(now) {
        notes.push(d.zone.expires(&t, decision.expires_at, now));
    }
    let waiting = d.waiting();
    let controls = if waiting > 0 && matches!(d.message.purpose, Purpose::Ask | Purpose::Reminder) {
        // It stands for asks the person's budget held: answering here would answer only
        // this one, so the feed takes them all.
        notes.push(t.tr1("notify-waiting", "count", waiting));
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
        t,
    }
}

/// The controls of a question that is not a tool approval.
fn controls(t: &T, d: &Decision) -> Controls {
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
            button(d, &t.tr("todo-done"), "done", ButtonStyle::Primary),
            button(d, &t.tr("todo-skip"), "skip", ButtonStyle::Plain),
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

/// Counts `user`'s answer to `decision` through `channel`, with what the reply to it needs:
/// their language (read before the answer counts) and the zone its times are told in.
pub async fn answer(
    svc: &crate::service::Service,
    channel: crate::domain::outbox::Channel,
    user: &str,
    decision: uuid::Uuid,
    reply: &crate::domain::chat::ChatReply,
) -> (T, crate::service::ChatOutcome, Zone) {
    let t = reply_t(svc, decision, channel, user).await;
    let outcome = svc.chat_answer(channel, user, decision, reply).await;
    let zone = presser_zone(svc, channel, user, &outcome).await;
    (t, outcome, zone)
}

/// The zone to tell `user` of `channel` about the decision of `outcome` in: theirs, else
/// the inbox's own person's.
async fn presser_zone(
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

/// The language a reply to a press or an answer from `user` on `channel` is written in
/// (`Service::chat_lang`), English when nobody chose one.
async fn reply_t(
    svc: &crate::service::Service,
    decision: uuid::Uuid,
    channel: crate::domain::outbox::Channel,
    user: &str,
) -> T {
    T::new(
        svc.chat_lang(decision, channel, user)
            .await
            .unwrap_or_default(),
    )
}

/// The line that replaces a message's controls once its decision settled, saying who
/// decided, how and when, in `zone`: "Allowed by ana from the feed, 2026-11-27 04:12 CET".
pub fn settled(t: &T, d: &Decision, zone: &Zone) -> String {
    let when = d
        .resolved_at
        .map(|at| format!(", {}", zone.date_time(at)))
        .unwrap_or_default();
    let last = d.answers.last();
    let by = last
        .and_then(|a| a.person.as_deref())
        .map(|p| format!(" {}", t.tr1("chat-by", "person", p)))
        .unwrap_or_default();
    let via = d
        .answered_by
        .map(|b| b.channel)
        .or(last.map(|a| a.channel))
        .map(|c| format!(" {}", from(t, c)))
        .unwrap_or_default();
    match d.status {
        Status::Pending => progress(t, d).unwrap_or_else(|| t.tr("chat-waiting")),
        Status::Answered => {
            let what = match (&d.spec.approval, &d.outcome) {
                (Some(_), Some(Value::String(s))) if s == DENY => t.tr("decided-denied"),
                (Some(_), _) => t.tr("decided-allowed"),
                (None, Some(v)) => t.tr1("chat-answered-with", "answer", outcome_words(d, v)),
                (None, None) => t.tr("status-answered"),
            };
            let remark = d
                .remark
                .as_deref()
                .map(|r| format!(" · {}", clip(r, 300, Lines::Marked).with_note()))
                .unwrap_or_default();
            format!("{what}{by}{via}{when}{remark}")
        }
        Status::Declined => format!("{}{by}{via}{when}", t.tr("status-declined")),
        Status::Expired => match &d.outcome {
            Some(v) => t.tr2(
                "chat-expired-default",
                "when",
                when,
                "default",
                outcome_words(d, v),
            ),
            None => t.tr1("chat-expired", "when", when),
        },
        Status::Cancelled
            if d.cancel_reason == Some(crate::domain::decision::CancelReason::Abandoned) =>
        {
            t.tr1("chat-withdrawn", "when", when)
        }
        Status::Cancelled => t.tr1("chat-cancelled", "when", when),
    }
}

/// What the one who answered is told: "Allowed." or, while others must agree too, the tally.
pub fn recorded(t: &T, d: &Decision, zone: &Zone) -> String {
    match progress(t, d) {
        Some(p) => t.tr1("chat-counted", "progress", p),
        None => settled(t, d, zone),
    }
}

/// What a pending decision's message says under its question while others are asked too:
/// the tally of a rule of several ("1 of 2 allowed: ana") and its escalation ("Escalated to
/// bo, 2026-11-27 04:12 CET", in `zone`); `None` when neither applies.
pub fn standing(t: &T, d: &Decision, now: time::OffsetDateTime, zone: &Zone) -> Option<String> {
    let mut parts: Vec<String> = progress(t, d).into_iter().collect();
    if let Some(r) = &d.spec.routing
        && let Some(at) = r.escalates_at(d.created_at).filter(|at| *at <= now)
    {
        let to = if r.escalate_to.is_empty() {
            t.tr("chat-everyone-else")
        } else {
            r.escalate_to.join(", ")
        };
        parts.push(t.tr2("chat-escalated-to", "to", to, "when", zone.date_time(at)));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// "1 of 2 allowed: ana", while a rule of several people is counting.
pub fn progress(t: &T, d: &Decision) -> Option<String> {
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
    let id = if d.spec.approval.is_some() {
        "chat-progress-allowed"
    } else {
        "chat-progress-yes"
    };
    let count = names.len();
    let names = if names.is_empty() {
        t.tr("chat-no-one-yet")
    } else {
        names.join(", ")
    };
    Some(t.tr3(id, "count", count, "needed", needed, "names", names))
}

/// "from the feed", "from Slack": the way an answer came, as a person says it.
fn from(t: &T, c: AnswerChannel) -> String {
    t.tr(match c {
        AnswerChannel::Link => "chat-from-link",
        AnswerChannel::Feed => "chat-from-feed",
        AnswerChannel::Push => "chat-from-push",
        AnswerChannel::Ntfy => "chat-from-ntfy",
        AnswerChannel::Email => "chat-from-email",
        AnswerChannel::Api => "chat-from-api",
        AnswerChannel::Slack => "chat-from-slack",
        AnswerChannel::Matrix => "chat-from-matrix",
        AnswerChannel::Telegram => "chat-from-telegram",
    })
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
