//! Which messages a new decision puts into the outbox, and which channels are recorded as
//! skipped (with the reason) because they are not set up.
//!
//! The asks go to people: one message per channel per person asked (the decision's
//! approvers, or everyone in the inbox when it names none), each on the channels that
//! person has. The `notifications` states stay one per channel, for all of them together.

use time::{Duration, OffsetDateTime};

use super::Service;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::domain::outbox::{Channel, MessageStatus, NewMessage, Purpose, Route};
use crate::domain::people::{Person, Routing};
use crate::domain::{Kind, NewDecision, NotificationState, Notify};

/// A message on `route` for `purpose`, due at `at`, given up on an hour later.
pub fn message(route: Route, purpose: Purpose, at: OffsetDateTime) -> NewMessage {
    NewMessage {
        route,
        purpose,
        payload: serde_json::json!({}),
        not_before: at,
        give_up_at: at + time::Duration::hours(1),
        person: None,
    }
}
/// A pending decision re-notifies once this share of its TTL has passed…
const REMINDER_AT: f64 = 0.8;
/// …when its TTL is at least this long.
const REMINDER_MIN_TTL: Duration = Duration::minutes(10);

/// The notification states and outbox messages of a new decision.
pub struct Plan {
    pub states: Vec<NotificationState>,
    pub messages: Vec<NewMessage>,
}

impl Service {
    /// `people` are the inbox's (loaded only when the decision notifies anyone); with none,
    /// the inbox's own person with the inbox's `channels` is asked.
    pub(super) fn plan_notifications(
        &self,
        inbox: &Inbox,
        channels: &InboxChannels,
        people: &[Person],
        new: &NewDecision,
        created_at: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Plan {
        let mut plan = Plan {
            states: Vec::new(),
            messages: Vec::new(),
        };
        // A session's approvals wait a moment for the rest of the burst (worker.rs gathers).
        let ask_at = match &new.spec.approval {
            Some(a) if a.session_id.is_some() => created_at + crate::domain::approval::GATHER,
            _ => created_at,
        };
        let own;
        let people = if people.is_empty() {
            own = [own_person(inbox, channels)];
            &own[..]
        } else {
            people
        };
        let asked = recipients(new.spec.routing.as_ref(), people);
        let email_enabled = self.settings().email_enabled;
        let asks = asks_to(new.spec.notify, email_enabled, &asked, ask_at, expires_at);
        match new.spec.notify {
            Notify::None => {}
            Notify::Email if !email_enabled => {
                plan.states.push(state(
                    Channel::Email,
                    MessageStatus::Skipped,
                    Some("email is not configured on this server (SAYSO_SMTP_URL); share the web_url yourself".into()),
                ));
            }
            Notify::Email if asks.is_empty() => {
                let reason = match asked[..] {
                    [p] if p.is_inbox_own() => format!(
                        "the inbox {:?} has no email address; set one with `sayso inbox set {} --email ADDR`",
                        inbox.name, inbox.name
                    ),
                    _ => format!(
                        "none of the people asked ({}) has an email address",
                        names(&asked)
                    ),
                };
                plan.states
                    .push(state(Channel::Email, MessageStatus::Skipped, Some(reason)));
            }
            // Devices may subscribe until the message goes out: the push channel itself says
            // `skipped` when none has.
            Notify::Email | Notify::Push => {}
        }
        for channel in [Channel::Email, Channel::Push, Channel::Ntfy] {
            if asks.iter().any(|m| m.route == Route::from(channel)) {
                plan.states
                    .push(state(channel, MessageStatus::Pending, None));
            }
        }
        plan.messages = asks;
        let ttl = expires_at - created_at;
        // An approval's agent has stopped waiting long before a reminder would come.
        let reminded = new.spec.kind() != Kind::Todo && new.spec.approval.is_none();
        if !plan.messages.is_empty() && reminded && ttl >= REMINDER_MIN_TTL {
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message(
                    Route::FanOut,
                    Purpose::Reminder,
                    created_at + ttl * REMINDER_AT,
                )
            });
        }
        if let Some(at) = new
            .spec
            .routing
            .as_ref()
            .and_then(|r| r.escalates_at(created_at))
        {
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message(Route::FanOut, Purpose::Escalate, at)
            });
        }
        plan
    }
}

/// The people a decision asks first: its approvers, or everyone when it names none.
pub fn recipients<'a>(routing: Option<&Routing>, people: &'a [Person]) -> Vec<&'a Person> {
    people
        .iter()
        .filter(|p| routing.is_none_or(|r| r.is_approver(&p.name)))
        .collect()
}

/// The asks to `people` for `notify`, due at `at`: by mail to each who has an address (when
/// the server sends mail), or by Web Push to each, by ntfy to each who has a topic and on
/// each chat they are on.
pub(super) fn asks_to(
    notify: Notify,
    email_enabled: bool,
    people: &[&Person],
    at: OffsetDateTime,
    give_up_at: OffsetDateTime,
) -> Vec<NewMessage> {
    let channels: &[Channel] = match notify {
        Notify::None => &[],
        Notify::Email if email_enabled => &[Channel::Email],
        Notify::Email => &[],
        Notify::Push => &[
            Channel::Push,
            Channel::Ntfy,
            Channel::Slack,
            Channel::Matrix,
            Channel::Telegram,
        ],
    };
    let reaches = |p: &Person, channel: Channel| match channel {
        Channel::Email => p.email.is_some(),
        Channel::Ntfy => p.ntfy_url.is_some(),
        Channel::Push => true,
        Channel::Slack | Channel::Matrix | Channel::Telegram => p.chats.on(channel).is_some(),
        Channel::Webhook | Channel::Completion => false,
    };
    channels
        .iter()
        .flat_map(|&channel| {
            people
                .iter()
                .filter(move |p| reaches(p, channel))
                .map(move |p| NewMessage {
                    give_up_at,
                    person: Some(p.id),
                    ..message(channel.into(), Purpose::Ask, at)
                })
        })
        .collect()
}

/// The inbox's own person as the inbox's channels describe it.
fn own_person(inbox: &Inbox, channels: &InboxChannels) -> Person {
    Person {
        id: inbox.id,
        inbox_id: inbox.id,
        name: inbox.name.clone(),
        email: channels.email.clone(),
        ntfy_url: channels.ntfy_url.clone(),
        ntfy_token: channels.ntfy_token.clone(),
        chats: channels.chats.clone(),
        tz: None,
        quiet: None,
        lang: None,
        created_at: inbox.created_at,
    }
}

fn names(people: &[&Person]) -> String {
    people
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn state(channel: Channel, status: MessageStatus, detail: Option<String>) -> NotificationState {
    NotificationState {
        channel,
        status,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;

    const AT: OffsetDateTime = datetime!(2026-11-21 12:00 UTC);

    fn person(name: &str, email: bool, ntfy: bool) -> Person {
        Person {
            email: email.then(|| format!("{name}@example.com")),
            ntfy_url: ntfy.then(|| format!("https://ntfy.example/{name}")),
            ..Person::named(Uuid::now_v7(), Uuid::nil(), name, AT)
        }
    }

    fn sent(messages: &[NewMessage]) -> Vec<(Route, Uuid)> {
        messages
            .iter()
            .map(|m| (m.route, m.person.expect("to a person")))
            .collect()
    }

    #[test]
    fn each_person_asked_gets_the_channels_they_have() {
        let (ana, ben) = (person("ana", true, true), person("ben", false, false));
        let both = [&ana, &ben];
        let later = AT + Duration::hours(1);
        let push = asks_to(Notify::Push, true, &both, AT, later);
        assert_eq!(
            sent(&push),
            [
                (Route::Push, ana.id),
                (Route::Push, ben.id),
                (Route::Ntfy, ana.id)
            ]
        );
        assert!(
            push.iter()
                .all(|m| m.purpose == Purpose::Ask && m.give_up_at == later)
        );
        let email = asks_to(Notify::Email, true, &both, AT, later);
        assert_eq!(sent(&email), [(Route::Email, ana.id)]);
        assert!(asks_to(Notify::Email, false, &both, AT, later).is_empty());
        assert!(asks_to(Notify::None, true, &both, AT, later).is_empty());
    }

    #[test]
    fn the_approvers_are_asked_or_everyone() {
        let people = [person("ana", false, false), person("ben", false, false)];
        let names =
            |asked: Vec<&Person>| -> Vec<String> { asked.iter().map(|p| p.name.clone()).collect() };
        assert_eq!(names(recipients(None, &people)), ["ana", "ben"]);
        let ana_only = Routing {
            approvers: vec!["ana".into()],
            ..Routing::default()
        };
        assert_eq!(names(recipients(Some(&ana_only), &people)), ["ana"]);
        assert_eq!(
            names(recipients(Some(&Routing::default()), &people)),
            ["ana", "ben"]
        );
    }
}
