//! What a person did in Slack, taken: a press of an ask's button, the "Answer…" button that
//! opens the text modal, an approval's Deny (which asks for an optional reason in a modal
//! first), and a modal sent. They come signed to the interactivity URL (http/chat_slack.rs
//! checks the signature and refuses a replay) or over Socket Mode (`from_socket`, once per
//! envelope id).
//!
//! Who answers is `user.id`, which Slack sets; a press is taken only from a message this bot
//! posted for that very decision. Someone the decision does not ask is told so privately,
//! and nothing is recorded; a press after the decision settled says who decided.

use serde_json::{Value, json};
use uuid::Uuid;

use super::api::SlackApi;
use super::blocks::{self, DENY_CODE, REASON_INPUT, TEXT_INPUT};
use super::interaction::{self, Interaction, ModalKind, Press};
use super::mrkdwn::escape;
use super::socket::Envelope;
use crate::chat::{answer, recorded, settled};
use crate::domain::Decision;
use crate::domain::chat::ChatReply;
use crate::domain::outbox::Channel;
use crate::domain::people::Person;
use crate::domain::spec::KindSpec;
use crate::render::visible::{Lines, clip};
use crate::render::what_runs;
use crate::render::{T, Zone};
use crate::service::{ChatOutcome, SHOWN_CHARS, Service};

/// What the person is told when someone else's question reaches them.
pub const NOT_YOURS: &str = "This question is not yours to answer: nothing was recorded.";
const NOT_OURS: &str = "This button is not on one of sayso's questions: nothing was recorded.";

/// An `interactive` envelope from Socket Mode, taken once by its id; its answer (a modal's
/// `response_action`) goes back with the acknowledgement.
pub async fn from_socket(svc: &Service, api: &SlackApi, envelope: Envelope) -> Option<Value> {
    match svc
        .first_seen(&format!("slack:envelope:{}", envelope.id))
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(envelope = %envelope.id, "a Slack envelope came again; ignored");
            return None;
        }
        Err(e) => {
            tracing::warn!(error = %e, "Slack: could not check an envelope; ignored");
            return None;
        }
    }
    handle(svc, api, &envelope.payload).await
}

/// Takes one interaction payload; what Slack should get back in the acknowledgement (a
/// modal's errors), if anything.
pub async fn handle(svc: &Service, api: &SlackApi, payload: &Value) -> Option<Value> {
    let interaction = match interaction::read(payload) {
        Ok(i) => i,
        Err(why) => {
            tracing::warn!(
                why,
                "a Slack interaction that could not be read was ignored"
            );
            return None;
        }
    };
    match interaction {
        Interaction::Answer {
            press,
            decision,
            code,
        } => {
            if !on_our_message(svc, &press, decision).await {
                tell(api, &press, NOT_OURS);
                return None;
            }
            // An approval's Deny asks for a reason first; without a modal it denies as is.
            if code == DENY_CODE
                && let Some(trigger) = &press.trigger_id
                && let Some(d) = pending(svc, decision).await
                && d.spec.approval.is_some()
                && asked(svc, &d, &press.user).await.is_some()
            {
                let (question, command) = shown(&d);
                let view = blocks::deny_modal(&question, command.as_deref(), decision);
                match api.open_view(trigger, &view).await {
                    Ok(()) => return None,
                    Err(e) => tracing::warn!(
                        error = e.text(),
                        "Slack: the Deny modal did not open; denying without a reason"
                    ),
                }
            }
            let (t, outcome, zone) = answer(
                svc,
                Channel::Slack,
                &press.user,
                decision,
                &ChatReply::Button(code),
            )
            .await;
            if let Some(said) = said_to_presser(&t, outcome, &zone) {
                tell(api, &press, &said);
            }
            None
        }
        Interaction::OpenReply { press, decision } => {
            if !on_our_message(svc, &press, decision).await {
                tell(api, &press, NOT_OURS);
                return None;
            }
            let Some(d) = pending(svc, decision).await else {
                // Settled already, or gone: say so the way a press would be answered.
                let (t, outcome, zone) = answer(
                    svc,
                    Channel::Slack,
                    &press.user,
                    decision,
                    &ChatReply::Text(String::new()),
                )
                .await;
                if let Some(said) = said_to_presser(&t, outcome, &zone) {
                    tell(api, &press, &said);
                }
                return None;
            };
            // Someone not asked gets no answer box to fill in.
            let Some(person) = asked(svc, &d, &press.user).await else {
                tell(api, &press, NOT_YOURS);
                return None;
            };
            let placeholder = match &d.spec.body {
                KindSpec::Text { placeholder } | KindSpec::Choose { placeholder, .. } => {
                    placeholder.clone()
                }
                _ => None,
            };
            let (question, command) = shown(&d);
            let view = blocks::text_modal(
                &question,
                command.as_deref(),
                decision,
                placeholder.as_deref(),
            );
            let opened = match &press.trigger_id {
                Some(trigger) => api
                    .open_view(trigger, &view)
                    .await
                    .map_err(|e| e.text().to_string()),
                None => Err("the press carried no trigger_id".to_string()),
            };
            if let Err(why) = opened {
                tracing::warn!(why, "Slack: the answer modal did not open");
                let link = svc.chat_link(&d, Channel::Slack, &person);
                tell(
                    api,
                    &press,
                    &format!(
                        "The answer box did not open; answer on the page: {}",
                        escape(&link)
                    ),
                );
            }
            None
        }
        Interaction::Submit {
            user,
            decision,
            kind,
            text,
        } => {
            let (reply, input) = match kind {
                ModalKind::Text => (ChatReply::Text(text), TEXT_INPUT),
                ModalKind::Deny if text.trim().is_empty() => {
                    (ChatReply::Button(DENY_CODE.into()), REASON_INPUT)
                }
                ModalKind::Deny => (
                    ChatReply::Text(format!("deny: {}", text.trim())),
                    REASON_INPUT,
                ),
            };
            let (t, outcome, zone) = answer(svc, Channel::Slack, &user, decision, &reply).await;
            // Counted: the modal closes and the message changes. Anything else is shown
            // under the modal's field, so the person sees why and may try again.
            let said = match outcome {
                ChatOutcome::Recorded(_) => return None,
                ChatOutcome::NotYours => t.tr("chat-not-yours"),
                ChatOutcome::Settled(d) => settled(&t, &d, &zone),
                ChatOutcome::OpenPage(link) => format!("{} {link}", t.tr("chat-answered-on-page")),
                ChatOutcome::Refused(why) => why,
            };
            Some(json!({"response_action": "errors", "errors": {input: said}}))
        }
        Interaction::Ignored(_) => None,
    }
}

/// Whether the press came from a message this bot posted for `decision`.
async fn on_our_message(svc: &Service, press: &Press, decision: Uuid) -> bool {
    let (Some(channel), Some(ts)) = (&press.channel, &press.message_ts) else {
        tracing::warn!("a Slack press without its message was ignored");
        return false;
    };
    match svc.chat_post(Channel::Slack, channel, ts).await {
        Ok(Some(post)) if post.decision == decision => true,
        Ok(_) => {
            tracing::warn!(%decision, channel, ts, "a Slack press not on this decision's message was ignored");
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "Slack: could not look up a pressed message");
            false
        }
    }
}

/// The person bound to the Slack user `user` whom `d` asks (as `chat_answer` reads it), if
/// any: a modal is opened only for them.
async fn asked(svc: &Service, d: &Decision, user: &str) -> Option<Person> {
    match svc.chat_person(d, Channel::Slack, user).await {
        Ok(person) => person,
        Err(e) => {
            tracing::warn!(error = %e, "Slack: could not read the inbox's people");
            None
        }
    }
}

/// The decision, while it is still pending.
async fn pending(svc: &Service, decision: Uuid) -> Option<Decision> {
    svc.pending_decision(decision).await.ok().flatten()
}

/// The question and what runs, as the message shows them, for a modal's top.
fn shown(d: &Decision) -> (String, Option<String>) {
    match &d.spec.approval {
        Some(a) => {
            let s = what_runs::shown(&T::default(), a, SHOWN_CHARS);
            (s.title.clone(), Some(s.subject.with_note()))
        }
        None => (clip(&d.spec.question, 500, Lines::Kept).with_note(), None),
    }
}

/// What the presser is told privately, if anything: a counted press is seen in the message
/// itself, which the outbox changes (a tally, or settled). Times are in the presser's `zone`.
fn said_to_presser(t: &T, outcome: ChatOutcome, zone: &Zone) -> Option<String> {
    match outcome {
        ChatOutcome::Recorded(d) => {
            crate::chat::progress(t, &d).map(|_| escape(&recorded(t, &d, zone)))
        }
        ChatOutcome::NotYours => Some(escape(&t.tr("chat-not-yours"))),
        ChatOutcome::Settled(d) => Some(escape(&settled(t, &d, zone))),
        ChatOutcome::OpenPage(link) => Some(format!(
            "{} <{}|{}>",
            escape(&t.tr("chat-answered-on-page")),
            escape(&link),
            escape(&t.tr("chat-open-it"))
        )),
        ChatOutcome::Refused(why) => Some(escape(&why)),
    }
}

/// Tells the presser alone: through the press's response_url, else chat.postEphemeral. It
/// runs on its own, so the acknowledgement Slack waits for is not held up by it.
fn tell(api: &SlackApi, press: &Press, mrkdwn: &str) {
    let (api, press, mrkdwn) = (api.clone(), press.clone(), mrkdwn.to_string());
    tokio::spawn(async move {
        let result = match (&press.response_url, &press.channel) {
            (Some(url), _) => api.respond_ephemeral(url, &mrkdwn).await,
            (None, Some(channel)) => api.post_ephemeral(channel, &press.user, &mrkdwn).await,
            (None, None) => return,
        };
        if let Err(e) = result {
            tracing::warn!(
                error = e.text(),
                "Slack: could not answer a press privately"
            );
        }
    });
}
