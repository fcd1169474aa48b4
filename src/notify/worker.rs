//! The outbox worker: claims due messages (safely on every replica at once), delivers each
//! through its channel to its person, and records the outcome with backoff and jitter for
//! retries.
//!
//! An ask or a reminder to a person in their quiet hours is held until they end (unless the
//! decision is urgent), and one past the person's notification budget until it has room,
//! then goes out for all that wait; an `escalate` fan-out asks the escalation's targets
//! (people.rs).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Semaphore;
use uuid::Uuid;

use super::people::{Budgeted, held, person_channels};
use super::{Worker, done};
use crate::courier::{Courier, Delivering, Delivery, ESCALATION};
use crate::domain::inbox::Inbox;
use crate::domain::outbox::{
    Channel, MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose, Route,
};
use crate::domain::people::Person;
use crate::domain::{Decision, Status};
use crate::service::{Outbox, message, now};

/// The per-person channels a fan-out can expand into (webhooks and completion callbacks go
/// to the agent).
const PERSON_CHANNELS: [Channel; 6] = [
    Channel::Email,
    Channel::Push,
    Channel::Ntfy,
    Channel::Slack,
    Channel::Matrix,
    Channel::Telegram,
];

/// What gathering a session's approvals makes of one ask.
enum Gathered {
    /// A later approval of the session carries the notification.
    IntoLater,
    /// Send it, standing for this many more pending approvals of the session.
    With(usize),
}

impl Worker {
    /// Runs until the task is aborted (on shutdown). Deliveries go on side by side, up to
    /// `concurrency`, each in a slot of its own: a slow or hanging endpoint holds one slot
    /// until its timeout while the others keep claiming and sending, so one dead receiver
    /// never delays the rest.
    pub async fn run(self: Arc<Self>, outbox: Outbox) {
        let slots = Arc::new(Semaphore::new(self.settings.concurrency.max(1)));
        let mut backoff = Duration::ZERO;
        loop {
            if !backoff.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = outbox.kicked() => {}
                }
            }
            // Claim only what free slots can start now: a claimed message waits for nobody.
            let Ok(first) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let free = (1 + slots.available_permits()).min(self.settings.batch as usize);
            let claimed = match outbox.claim(self.settings.lease, free as u32).await {
                Ok(claimed) => claimed,
                Err(e) => {
                    tracing::warn!(error = %e, "outbox claim failed; retrying");
                    backoff = (backoff * 2).clamp(Duration::from_secs(1), Duration::from_secs(30));
                    continue;
                }
            };
            backoff = if claimed.len() == free {
                Duration::ZERO
            } else {
                self.settings.poll_interval
            };
            let mut permit = Some(first);
            for m in claimed {
                let slot = match permit.take() {
                    Some(slot) => slot,
                    None => match Arc::clone(&slots).acquire_owned().await {
                        Ok(slot) => slot,
                        Err(_) => return,
                    },
                };
                let (worker, outbox) = (Arc::clone(&self), outbox.clone());
                tokio::spawn(async move {
                    worker.handle_and_record(&outbox, &m).await;
                    drop(slot);
                });
            }
        }
    }

    /// Delivers one message and records the outcome.
    async fn handle_and_record(&self, outbox: &Outbox, m: &OutboxMessage) {
        let (result, follow_ups) = self.handle(outbox, m).await;
        if let Err(e) = outbox.finish(m, &result, &follow_ups).await {
            // The lease runs out and the message is tried again.
            tracing::warn!(error = %e, message = %m.id, "could not record a delivery");
        }
    }

    async fn handle(&self, outbox: &Outbox, m: &OutboxMessage) -> (MessageResult, Vec<NewMessage>) {
        // A notice about no decision (a passkey added) goes to its person alone.
        if m.decision_id.is_nil() {
            let courier = m.route.channel().and_then(|c| self.couriers.get(&c));
            return (
                super::notice::deliver(self, outbox, m, courier).await,
                vec![],
            );
        }
        let decision = match outbox.decision(m.decision_id).await {
            Ok(Some(d)) => d,
            Ok(None) => {
                return (
                    done(MessageStatus::Skipped, "the decision no longer exists"),
                    vec![],
                );
            }
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        let Some(channel) = m.route.channel() else {
            return match m.purpose {
                Purpose::Escalate => self.escalate(outbox, m, &decision).await,
                _ => self.expand(outbox, m, &decision).await,
            };
        };
        if m.purpose == Purpose::Escalate {
            return (
                done(
                    MessageStatus::Skipped,
                    "an escalation goes to every channel, not to one",
                ),
                vec![],
            );
        }
        if matches!(
            m.purpose,
            Purpose::Ask | Purpose::Reminder | Purpose::Progress
        ) && decision.status != Status::Pending
        {
            return (
                done(
                    MessageStatus::Skipped,
                    "the decision was resolved before this was sent",
                ),
                vec![],
            );
        }
        let inbox = match outbox.inbox(decision.inbox_id).await {
            Ok(Some(inbox)) => inbox,
            Ok(None) => return (self.retry(m, "the inbox no longer exists".into()), vec![]),
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        // Messages to no one in particular go to the inbox's own person.
        let person = match outbox.person(m.person.unwrap_or(decision.inbox_id)).await {
            Ok(p) => p.filter(|p| p.inbox_id == decision.inbox_id),
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        if person.is_none() && m.person.is_some() {
            return (
                done(MessageStatus::Skipped, "the person no longer exists"),
                vec![],
            );
        }
        if let Some(held) = held(m, &decision, person.as_ref(), now()) {
            return (held, vec![]);
        }
        let gathered = match self.gather(outbox, m, &decision).await {
            Ok(Gathered::IntoLater) => {
                return (
                    done(
                        MessageStatus::Skipped,
                        "gathered into the notification of a later question of the same session",
                    ),
                    vec![],
                );
            }
            Ok(Gathered::With(n)) => n,
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        let Some(courier) = self.couriers.get(&channel) else {
            return (
                done(
                    MessageStatus::Skipped,
                    &format!("{channel} is not configured on this server"),
                ),
                vec![],
            );
        };
        let waiting = match self.budget(outbox, m, person.as_ref()).await {
            Ok(Budgeted::Send { waiting }) => waiting,
            Ok(Budgeted::Not(result)) => return (result, vec![]),
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        // The message as the courier sees it: how many more of the session, and how many
        // the budget held, it stands for.
        let with_counts;
        let m = if gathered > 0 || waiting > 0 {
            let mut copy = m.clone();
            if gathered > 0 {
                copy.payload["gathered"] = serde_json::json!(gathered);
            }
            if waiting > 0 {
                copy.payload["waiting"] = serde_json::json!(waiting);
            }
            with_counts = copy;
            &with_counts
        } else {
            m
        };
        let delivered = match self
            .deliver(
                outbox,
                courier.as_ref(),
                m,
                &decision,
                &inbox,
                person.as_ref(),
            )
            .await
        {
            Ok(d) => d,
            Err(e) => Delivery::Retry(e),
        };
        match delivered {
            Delivery::Sent(detail) => {
                // Resolved while this ask was in flight, after the fan-out looked: withdraw it too.
                let follow_ups = match outbox.decision(m.decision_id).await {
                    Ok(Some(now_d))
                        if m.purpose == Purpose::Ask && now_d.status != Status::Pending =>
                    {
                        vec![NewMessage {
                            person: m.person,
                            ..message(m.route, Purpose::Resolved, now())
                        }]
                    }
                    _ => vec![],
                };
                (
                    MessageResult {
                        status: MessageStatus::Sent,
                        retry_at: None,
                        detail,
                    },
                    follow_ups,
                )
            }
            Delivery::Retry(e) => (self.retry(m, e), vec![]),
            Delivery::Failed(e) => (done(MessageStatus::Failed, &e), vec![]),
            Delivery::Skipped(r) => (done(MessageStatus::Skipped, &r), vec![]),
        }
    }

    /// One notification for a burst of one agent session's approvals: the ask of the newest
    /// goes out, saying how many more are waiting; an older one's is skipped when a newer one
    /// came within the gather window after it.
    async fn gather(
        &self,
        outbox: &Outbox,
        m: &OutboxMessage,
        decision: &Decision,
    ) -> Result<Gathered, crate::storage::StoreError> {
        // An escalation's ask stands for its own decision only.
        if m.purpose != Purpose::Ask
            || decision.spec.approval.is_none()
            || m.payload[ESCALATION] == json!(true)
        {
            return Ok(Gathered::With(0));
        }
        let siblings = outbox.session_siblings(decision).await?;
        let window = crate::domain::approval::GATHER;
        let newer = siblings.iter().any(|s| {
            s.created_at > decision.created_at && s.created_at - decision.created_at <= window
        });
        if newer {
            return Ok(Gathered::IntoLater);
        }
        Ok(Gathered::With(
            siblings
                .iter()
                .filter(|s| s.created_at < decision.created_at)
                .count(),
        ))
    }

    /// Hands `m` to its courier, for `person` (the message's, or the inbox's own).
    async fn deliver(
        &self,
        outbox: &Outbox,
        courier: &dyn Courier,
        m: &OutboxMessage,
        decision: &Decision,
        inbox: &Inbox,
        person: Option<&Person>,
    ) -> Result<Delivery, String> {
        let view = outbox.view(decision).await.map_err(|e| e.to_string())?;
        // A tool approval's notification, and one of a decision sent to people by name,
        // carries the person's own link for that channel, which only the person's side ever
        // holds; anything else its answer link.
        let web_url = match (
            m.route.channel().and_then(crate::domain::PersonChannel::of),
            person,
        ) {
            (Some(channel), Some(p)) => outbox.person_url(decision, channel, p.id),
            _ => outbox.web_url(decision),
        };
        let channels = match (m.person, person) {
            (Some(_), Some(p)) => person_channels(p, inbox),
            _ => inbox.channels.clone(),
        };
        let zone = outbox
            .person_zone(person, inbox.id)
            .await
            .map_err(|e| e.to_string())?;
        Ok(courier
            .deliver(&Delivering {
                message: m,
                decision,
                view: &view,
                inbox,
                person,
                channels: &channels,
                zone: &crate::render::Zone::of(zone.as_deref()),
                web_url: &web_url,
                public_url: outbox.public_url(),
                outbox,
            })
            .await)
    }

    /// A fan-out: the messages a resolution or a reminder makes, one per channel and person
    /// that an ask reached.
    async fn expand(
        &self,
        outbox: &Outbox,
        m: &OutboxMessage,
        decision: &Decision,
    ) -> (MessageResult, Vec<NewMessage>) {
        let at = now();
        if matches!(m.purpose, Purpose::Reminder | Purpose::Progress)
            && decision.status != Status::Pending
        {
            return (
                done(
                    MessageStatus::Skipped,
                    &format!("the decision was resolved before the {}", m.purpose),
                ),
                vec![],
            );
        }
        let sent = match outbox.messages(decision.id).await {
            Ok(all) => all,
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        // Only channels that reached a person get a reminder or a withdrawal, to that person.
        let mut reached: Vec<(Channel, Option<Uuid>)> = Vec::new();
        // A tally in progress shows only where a message can be edited in place: the chats.
        let channels = PERSON_CHANNELS
            .into_iter()
            .filter(|c| m.purpose != Purpose::Progress || c.is_chat());
        for c in channels {
            for s in &sent {
                if s.route == Route::from(c)
                    && s.purpose == Purpose::Ask
                    && s.status == MessageStatus::Sent
                    && !reached.contains(&(c, s.person))
                {
                    reached.push((c, s.person));
                }
            }
        }
        let mut follow_ups: Vec<NewMessage> = reached
            .into_iter()
            .map(|(c, person)| NewMessage {
                person,
                ..message(c.into(), m.purpose, at)
            })
            .collect();
        if m.purpose == Purpose::Resolved {
            let agents = [
                (Route::Webhook, decision.spec.callback_url.is_some()),
                (Route::Completion, decision.spec.completion.is_some()),
            ];
            for (route, _) in agents.into_iter().filter(|(_, wanted)| *wanted) {
                follow_ups.push(NewMessage {
                    give_up_at: at + time::Duration::hours(24),
                    ..message(route, Purpose::Resolved, at)
                });
            }
        }
        let detail = format!("{} message(s) queued", follow_ups.len());
        (done(MessageStatus::Sent, &detail), follow_ups)
    }
}
