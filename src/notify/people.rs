//! Messages to people: where a person's messages go, holding them through the person's
//! quiet hours and past their notification budget, and a decision's escalation to more
//! people.
//!
//! The budget: a person gets at most `SAYSO_NOTIFY_PER_MINUTE` asks and reminders (to-dos
//! too) on each channel in any minute. Past it the next are held; when the budget has room
//! again, the first of them to go stands for the rest: it carries "N more are waiting" and
//! opens the feed, and the rest are skipped as gathered into it. A burst of six hundred
//! questions is then a few notifications and one that says how many more wait, whichever
//! agent sent them and however urgent they claim to be.

use serde_json::json;
use time::OffsetDateTime;

use super::{Worker, done};
use crate::courier::ESCALATION;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::domain::outbox::{MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose};
use crate::domain::people::Person;
use crate::domain::{Decision, EventKind, Status};
use crate::render::iso;
use crate::service::{Outbox, now};
use crate::storage::Budget;

/// The payload mark of an escalation's asks that go through quiet hours, because every
/// approver was in theirs when the decision escalated.
const THROUGH_QUIET: &str = "through_quiet";

impl Worker {
    /// A decision's escalation time came: still pending, it goes to the escalation's
    /// targets too (an `escalated` event, and an ask to each on their channels).
    pub(super) async fn escalate(
        &self,
        outbox: &Outbox,
        m: &OutboxMessage,
        decision: &Decision,
    ) -> (MessageResult, Vec<NewMessage>) {
        if decision.status != Status::Pending {
            return (
                done(
                    MessageStatus::Skipped,
                    "the decision was resolved before it escalated",
                ),
                vec![],
            );
        }
        let Some(routing) = decision
            .spec
            .routing
            .as_ref()
            .filter(|r| r.escalate_after_s.is_some())
        else {
            return (
                done(MessageStatus::Skipped, "the decision does not escalate"),
                vec![],
            );
        };
        let people = match outbox.people(decision.inbox_id).await {
            Ok(people) => people,
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        let targets: Vec<&Person> = people
            .iter()
            .filter(|p| routing.is_escalation_target(&p.name))
            .collect();
        if targets.is_empty() {
            return (
                done(
                    MessageStatus::Skipped,
                    "no one in the inbox is there to escalate to",
                ),
                vec![],
            );
        }
        let at = now();
        let names: Vec<&str> = targets.iter().map(|p| p.name.as_str()).collect();
        // Once per decision, also when this message is tried again.
        let recorded = match outbox.events(decision.id).await {
            Ok(events) => events.iter().any(|e| e.kind == EventKind::Escalated),
            Err(e) => return (self.retry(m, format!("database: {e}")), vec![]),
        };
        if !recorded
            && let Err(e) = outbox
                .record_event(decision.id, EventKind::Escalated, &json!({ "to": names }))
                .await
        {
            return (self.retry(m, format!("database: {e}")), vec![]);
        }
        // Quiet hours hold an escalation too, unless no approver could be reached either.
        let approvers: Vec<&Person> = people
            .iter()
            .filter(|p| routing.is_approver(&p.name))
            .collect();
        let all_quiet =
            !approvers.is_empty() && approvers.iter().all(|p| quiet_until(p, at).is_some());
        let mut payload = json!({ ESCALATION: true });
        if all_quiet {
            payload[THROUGH_QUIET] = json!(true);
        }
        let mut follow_ups = outbox.asks_to(decision, &targets, &payload, at);
        // The chats that asked the approvers edit their message to say it escalated.
        follow_ups.push(crate::service::message(
            crate::domain::outbox::Route::FanOut,
            Purpose::Progress,
            at,
        ));
        let detail = format!(
            "escalated to {}{}; {} message(s) queued",
            names.join(", "),
            if all_quiet {
                " through quiet hours (every approver is in theirs)"
            } else {
                ""
            },
            follow_ups.len()
        );
        (done(MessageStatus::Sent, &detail), follow_ups)
    }
}

/// What the notification budget makes of a message.
pub(super) enum Budgeted {
    /// Send it, standing for `waiting` more the budget held.
    Send { waiting: u64 },
    /// Not now, or not at all: this result says which.
    Not(MessageResult),
}

impl Worker {
    /// Counts an ask or a reminder to a person against their budget on its channel.
    pub(super) async fn budget(
        &self,
        outbox: &Outbox,
        m: &OutboxMessage,
        person: Option<&Person>,
    ) -> Result<Budgeted, crate::storage::StoreError> {
        let Some(rule) = self.settings.budget else {
            return Ok(Budgeted::Send { waiting: 0 });
        };
        if !matches!(m.purpose, Purpose::Ask | Purpose::Reminder) || m.person.is_none() {
            return Ok(Budgeted::Send { waiting: 0 });
        }
        let name = person.map_or("the person", |p| p.name.as_str());
        Ok(match outbox.count_notification(m, rule).await? {
            Budget::Granted { waiting } => Budgeted::Send { waiting },
            Budget::Covered { at } => Budgeted::Not(done(
                MessageStatus::Skipped,
                &format!(
                    "gathered into {name}'s notification of {}, which says how many wait",
                    iso(at)
                ),
            )),
            Budget::Spent { until } if until > m.give_up_at => Budgeted::Not(done(
                MessageStatus::Skipped,
                &format!(
                    "{name}'s notification budget has no room before the decision expires; \
                     it waits in their feed"
                ),
            )),
            Budget::Spent { until } => Budgeted::Not(MessageResult {
                status: MessageStatus::Pending,
                retry_at: Some(until),
                detail: Some(format!(
                    "held: {name} had {} notifications on {} in the last {} (SAYSO_NOTIFY_PER_MINUTE); \
                     it goes with the next, as one for all that wait, at {}",
                    rule.per_window,
                    m.route.as_str(),
                    window_words(rule.window),
                    iso(until)
                )),
            }),
        })
    }
}

/// "minute", or the span in seconds when it is not one.
fn window_words(window: std::time::Duration) -> String {
    match window.as_secs() {
        60 => "minute".into(),
        s => format!("{s} s"),
    }
}

/// The feed of the device that opens it: no capability in the link, so it can go in any
/// notification (a device that never opened its person's feed link is asked for it).
pub(super) fn feed_link(public_url: &str) -> String {
    format!("{public_url}/inbox")
}

/// An ask or a reminder to a person in their quiet hours waits until they end: `Some` with
/// that wait (or, when they end after the message is given up on, its skipping). Urgent
/// decisions, and an escalation no approver could take, go through.
pub(super) fn held(
    m: &OutboxMessage,
    decision: &Decision,
    person: Option<&Person>,
    at: OffsetDateTime,
) -> Option<MessageResult> {
    if !matches!(m.purpose, Purpose::Ask | Purpose::Reminder)
        || decision.spec.routing.as_ref().is_some_and(|r| r.urgent)
        || m.payload[THROUGH_QUIET] == json!(true)
    {
        return None;
    }
    let person = person?;
    let end = quiet_until(person, at)?;
    if end > m.give_up_at {
        return Some(done(
            MessageStatus::Skipped,
            &format!(
                "{}'s quiet hours last until {}, after the decision expires",
                person.name,
                iso(end)
            ),
        ));
    }
    Some(MessageResult {
        status: MessageStatus::Pending,
        retry_at: Some(end),
        detail: Some(format!("held for quiet hours until {}", iso(end))),
    })
}

/// When `person`'s quiet hours end, if `at` is inside them.
fn quiet_until(person: &Person, at: OffsetDateTime) -> Option<OffsetDateTime> {
    person.quiet.as_ref()?.quiet_until(at)
}

/// Where a message to `person` goes: their own address and topic; the webhook stays the
/// inbox's.
pub(super) fn person_channels(person: &Person, inbox: &Inbox) -> InboxChannels {
    InboxChannels {
        email: person.email.clone(),
        ntfy_url: person.ntfy_url.clone(),
        ntfy_token: person.ntfy_token.clone(),
        webhook_secret: inbox.channels.webhook_secret.clone(),
        chats: person.chats.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::domain::outbox::Route;
    use crate::domain::quiet::QuietHours;

    /// In ana's quiet hours, which end at 07:00.
    const NIGHT: OffsetDateTime = datetime!(2026-11-21 23:00 UTC);

    fn decision(body: Value) -> Decision {
        Decision::asked(&body, NIGHT, NIGHT + time::Duration::days(1))
    }

    fn ana() -> Person {
        Person {
            quiet: Some(QuietHours::parse("22:00-07:00", Some("UTC")).unwrap()),
            ..Person::named(Uuid::now_v7(), Uuid::nil(), "ana", NIGHT)
        }
    }

    fn message(purpose: Purpose, payload: Value, give_up_at: OffsetDateTime) -> OutboxMessage {
        OutboxMessage {
            id: Uuid::now_v7(),
            decision_id: Uuid::nil(),
            route: Route::Ntfy,
            purpose,
            payload,
            status: MessageStatus::Pending,
            attempts: 1,
            created_at: NIGHT,
            give_up_at,
            last_error: None,
            person: None,
        }
    }

    #[test]
    fn an_ask_waits_for_the_end_of_quiet_hours() {
        let d = decision(json!({"question": "Q?", "kind": "bool", "approvers": ["ana"]}));
        let ask = message(Purpose::Ask, json!({}), d.expires_at);
        let waits = held_at(&ask, &d, NIGHT).expect("held");
        let end = datetime!(2026-11-22 07:00 UTC);
        assert_eq!(waits.status, MessageStatus::Pending);
        assert_eq!(waits.retry_at, Some(end));
        assert_eq!(
            waits.detail.as_deref(),
            Some("held for quiet hours until 2026-11-22T07:00:00Z")
        );
        // Awake, or with no quiet hours, it goes.
        assert!(held_at(&ask, &d, datetime!(2026-11-22 08:00 UTC)).is_none());
        let always = Person {
            tz: None,
            quiet: None,
            ..ana()
        };
        assert!(held(&ask, &d, Some(&always), NIGHT).is_none());
        assert!(held(&ask, &d, None, NIGHT).is_none());
    }

    fn held_at(m: &OutboxMessage, d: &Decision, at: OffsetDateTime) -> Option<MessageResult> {
        held(m, d, Some(&ana()), at)
    }

    #[test]
    fn an_ask_whose_decision_expires_first_is_skipped() {
        let d = decision(json!({"question": "Q?", "kind": "bool"}));
        let ask = message(
            Purpose::Reminder,
            json!({}),
            NIGHT + time::Duration::hours(1),
        );
        let skipped = held_at(&ask, &d, NIGHT).expect("not sent");
        assert_eq!(skipped.status, MessageStatus::Skipped);
        assert!(
            skipped
                .detail
                .unwrap()
                .starts_with("ana's quiet hours last until")
        );
    }

    #[test]
    fn urgent_asks_resolutions_and_escalations_past_quiet_approvers_go_through() {
        let urgent = decision(json!({"question": "Q?", "kind": "bool", "urgent": true}));
        let plain = decision(json!({"question": "Q?", "kind": "bool"}));
        let later = plain.expires_at;
        for (m, d) in [
            (message(Purpose::Ask, json!({}), later), &urgent),
            (message(Purpose::Resolved, json!({}), later), &plain),
            (
                message(
                    Purpose::Ask,
                    json!({ESCALATION: true, THROUGH_QUIET: true}),
                    later,
                ),
                &plain,
            ),
        ] {
            assert!(held_at(&m, d, NIGHT).is_none(), "{m:?}");
        }
        let escalation = message(Purpose::Ask, json!({ESCALATION: true}), later);
        assert!(held_at(&escalation, &plain, NIGHT).is_some());
    }
}
