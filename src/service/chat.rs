//! Answers from the chats (docs/CHANNELS.md), and what their couriers and listeners keep:
//! the messages posted for each decision, the inbound requests already taken, and their
//! own small state (a sync token, a person's direct room).
//!
//! Who answers is the platform's verified id of the user who pressed or replied, mapped to
//! the one person of the decision's inbox bound to it (`sayso person set --slack …`); a
//! button carries no capability, so a press copied, forged or replayed by anyone else counts
//! for no one.

use uuid::Uuid;

use super::chat_reading::{Reading, button_input, text_input};
use super::outbox::Outbox;
use super::{Service, ServiceError, now};
use crate::domain::answered_by::{AnsweredBy, PersonChannel};
use crate::domain::chat::{ChatPost, ChatReply};
use crate::domain::lang::Lang;
use crate::domain::outbox::Channel;
use crate::domain::people::Person;
use crate::domain::tally;
use crate::domain::{Decision, Status};
use crate::storage::StoreError;

/// What became of an answer from a chat; the chat says it to the one who sent it.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatOutcome {
    /// Counted: it resolved the decision, or counts towards a rule of several (look at its
    /// status).
    Recorded(Decision),
    /// The sender is no one this decision asks: nothing is recorded, and only they are told.
    NotYours,
    /// Already answered, declined, expired or cancelled: the decision says by whom.
    Settled(Decision),
    /// This needs the page (a form, an Allow the message cannot show in full or that wants
    /// a passkey): the sender's own link for this chat.
    OpenPage(String),
    /// The reply does not answer the question; the message says why.
    Refused(String),
}

impl Service {
    /// An answer from `channel` by the platform user `user` (the platform's verified id,
    /// never a display name) to the decision `decision`.
    #[tracing::instrument(name = "chat_answer", skip_all, fields(%channel, %decision))]
    pub async fn chat_answer(
        &self,
        channel: Channel,
        user: &str,
        decision: Uuid,
        reply: &ChatReply,
    ) -> ChatOutcome {
        match self.try_chat_answer(channel, user, decision, reply).await {
            Ok(outcome) => outcome,
            Err(ServiceError::AlreadyResolved(d) | ServiceError::Expired(d)) => {
                ChatOutcome::Settled(*d)
            }
            Err(ServiceError::NotFound) => ChatOutcome::NotYours,
            Err(ServiceError::Validation(issues)) => ChatOutcome::Refused(
                issues
                    .into_iter()
                    .map(|i| i.message)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "an answer from a chat was not recorded");
                ChatOutcome::Refused(
                    "the answer could not be recorded just now; try again, or answer on the page"
                        .into(),
                )
            }
        }
    }

    async fn try_chat_answer(
        &self,
        channel: Channel,
        user: &str,
        decision: Uuid,
        reply: &ChatReply,
    ) -> Result<ChatOutcome, ServiceError> {
        let Some(via) = PersonChannel::of(channel).filter(|_| channel.is_chat()) else {
            return Ok(ChatOutcome::NotYours);
        };
        let Some(d) = self.store().decision(None, decision).await? else {
            return Ok(ChatOutcome::NotYours);
        };
        let Some(person) = self.chat_person(&d, channel, user).await? else {
            tracing::warn!(
                user,
                "a chat answer from someone this decision does not ask"
            );
            return Ok(ChatOutcome::NotYours);
        };
        match d.status {
            Status::Pending => {}
            _ => return Ok(ChatOutcome::Settled(d)),
        }
        let reading = match reply {
            ChatReply::Button(code) => button_input(&d.spec, code),
            ChatReply::Text(text) => text_input(&d.spec, text),
        };
        let input = match reading {
            Ok(Reading::Answer(input)) => *input,
            Ok(Reading::Page) => {
                return Ok(ChatOutcome::OpenPage(self.chat_link(&d, channel, &person)));
            }
            Err(why) => return Ok(ChatOutcome::Refused(why)),
        };
        let by = AnsweredBy::new(via.answer_channel(), None);
        Ok(ChatOutcome::Recorded(
            self.answer_as(&d, &input, by, &person).await?,
        ))
    }

    /// The person of `d`'s inbox bound to `user` on `channel`, if `d` asks them now: whose
    /// answer a press or reply from that user would be (a chat opens a dialog only for them).
    pub async fn chat_person(
        &self,
        d: &Decision,
        channel: Channel,
        user: &str,
    ) -> Result<Option<Person>, ServiceError> {
        let everyone = self.store().people(d.inbox_id).await?;
        Ok(everyone
            .into_iter()
            .find(|p| p.chats.on(channel) == Some(user))
            .filter(|p| tally::is_asked(d, &p.name, now())))
    }

    /// The zone to tell `user` of `channel` the times of `d` in: theirs when they are a
    /// person of its inbox, else the inbox's own person's; `None` for UTC (and when the
    /// people cannot be read, which the log says).
    pub async fn chat_user_zone(
        &self,
        d: &Decision,
        channel: Channel,
        user: &str,
    ) -> Option<String> {
        let everyone = match self.store().people(d.inbox_id).await {
            Ok(everyone) => everyone,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the people for a chat's reply");
                return None;
            }
        };
        let theirs = everyone.iter().find(|p| p.chats.on(channel) == Some(user));
        theirs
            .and_then(|p| p.tz.clone())
            .or_else(|| everyone.iter().find(|p| p.is_inbox_own())?.tz.clone())
    }

    /// The language a reply to `user` on `channel` about the decision `id` is written in:
    /// that user's person's in the decision's inbox, else the inbox's own person's; `None`
    /// when neither chose one (or the decision is gone).
    pub async fn chat_lang(&self, id: Uuid, channel: Channel, user: &str) -> Option<Lang> {
        let d = self.store().decision(None, id).await.ok()??;
        let everyone = self.store().people(d.inbox_id).await.ok()?;
        let theirs = everyone.iter().find(|p| p.chats.on(channel) == Some(user));
        let own = everyone.iter().find(|p| p.is_inbox_own());
        theirs.and_then(|p| p.lang).or(own.and_then(|p| p.lang))
    }

    /// The decision `id` while it is still pending.
    pub async fn pending_decision(&self, id: Uuid) -> Result<Option<Decision>, ServiceError> {
        Ok(self
            .store()
            .decision(None, id)
            .await?
            .filter(|d| d.status == Status::Pending))
    }

    /// Where `person` answers `d` on the page from `channel`: their own link for it.
    pub fn chat_link(&self, d: &Decision, channel: Channel, person: &Person) -> String {
        match PersonChannel::of(channel) {
            Some(c) => self.person_url(d, c, person.id),
            None => self.web_url(d),
        }
    }

    /// The decision and person a chat message was posted for, if it is one of ours.
    pub async fn chat_post(
        &self,
        channel: Channel,
        conversation: &str,
        message: &str,
    ) -> Result<Option<ChatPost>, ServiceError> {
        Ok(self
            .store()
            .chat_post(channel, conversation, message)
            .await?)
    }

    /// Whether an inbound request's key (a signature, an event id) is new; a replay of one
    /// taken in the last day is not.
    pub async fn first_seen(&self, key: &str) -> Result<bool, ServiceError> {
        Ok(self.store().first_seen(key, now()).await?)
    }

    /// A chat listener's own state (a sync token, a person's direct room), by name.
    pub async fn chat_state(&self, key: &str) -> Result<Option<String>, ServiceError> {
        Ok(self.store().setting(&format!("chat.{key}")).await?)
    }

    pub async fn set_chat_state(&self, key: &str, value: &str) -> Result<(), ServiceError> {
        Ok(self
            .store()
            .put_setting(&format!("chat.{key}"), value)
            .await?)
    }
}

impl Outbox {
    /// Remembers a message a chat courier posted for a decision.
    pub async fn record_chat_post(&self, post: &ChatPost) -> Result<(), StoreError> {
        self.service().store().record_chat_post(post, now()).await
    }

    /// The messages posted for a decision on `channel`, oldest first.
    pub async fn chat_posts(
        &self,
        decision: Uuid,
        channel: Channel,
    ) -> Result<Vec<ChatPost>, StoreError> {
        let mut posts = self.service().store().chat_posts(decision).await?;
        posts.retain(|p| p.channel == channel);
        Ok(posts)
    }

    /// A chat listener's state (`Service::chat_state`), for a courier that keeps some.
    pub async fn chat_state(&self, key: &str) -> Result<Option<String>, ServiceError> {
        self.service().chat_state(key).await
    }

    pub async fn set_chat_state(&self, key: &str, value: &str) -> Result<(), ServiceError> {
        self.service().set_chat_state(key, value).await
    }
}
