//! Notices to a person that are about no decision: "a passkey was added to your sayso". The
//! worker hands each to its channel's courier (`Courier::notify_person`), which sends the
//! words made here to the person's own address, topic or devices.

use std::sync::Arc;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{Worker, done};
use crate::courier::{Courier, Delivery, Notice};
use crate::domain::outbox::{MessageResult, MessageStatus, OutboxMessage, Purpose};
use crate::domain::people::Person;
use crate::domain::webauthn::ID_PREFIX_CHARS;
use crate::render::Zone;
use crate::service::Outbox;

/// Delivers the notice `m` through `courier` (none when its channel is not configured) and
/// says how it went.
pub(super) async fn deliver(
    worker: &Worker,
    outbox: &Outbox,
    m: &OutboxMessage,
    courier: Option<&Arc<dyn Courier>>,
) -> MessageResult {
    if m.purpose != Purpose::PasskeyAdded {
        return done(
            MessageStatus::Skipped,
            &format!("a {} message must be about a decision", m.purpose.as_str()),
        );
    }
    let Some(courier) = courier else {
        return done(
            MessageStatus::Skipped,
            &format!("{} is not configured on this server", m.route.as_str()),
        );
    };
    let Some(person_id) = m.person else {
        return done(MessageStatus::Skipped, "the notice names no person");
    };
    let person = match outbox.person(person_id).await {
        Ok(Some(p)) => p,
        Ok(None) => return done(MessageStatus::Skipped, "the person no longer exists"),
        Err(e) => return worker.retry(m, format!("database: {e}")),
    };
    let zone = match outbox.person_zone(Some(&person), person.inbox_id).await {
        Ok(tz) => Zone::of(tz.as_deref()),
        Err(e) => return worker.retry(m, format!("database: {e}")),
    };
    let (title, body) = passkey_added_words(m, &person, &zone);
    let notice = Notice {
        message: m,
        person: &person,
        title,
        body,
        url: format!("{}/inbox", outbox.public_url()),
        outbox,
    };
    match courier.notify_person(&notice).await {
        Delivery::Sent(detail) => MessageResult {
            status: MessageStatus::Sent,
            retry_at: None,
            detail,
        },
        Delivery::Retry(e) => worker.retry(m, e),
        Delivery::Failed(e) => done(MessageStatus::Failed, &e),
        Delivery::Skipped(why) => done(MessageStatus::Skipped, &why),
    }
}

/// The title and text of a passkey notice, from its payload (`service/passkey_notices.rs`),
/// its time in the person's `zone`.
fn passkey_added_words(m: &OutboxMessage, person: &Person, zone: &Zone) -> (String, String) {
    let p = &m.payload;
    let text = |key: &str| p[key].as_str().unwrap_or_default().to_string();
    let browser = p["user_agent"]
        .as_str()
        .filter(|ua| !ua.is_empty())
        .map_or("a browser that did not say which".to_string(), |ua| {
            format!("\"{ua}\"")
        });
    let when = OffsetDateTime::parse(&text("added_at"), &Rfc3339)
        .map(|t| zone.date_time(t))
        .unwrap_or_else(|_| "an unknown time".into());
    let id = text("passkey");
    let prefix: String = id.chars().take(ID_PREFIX_CHARS).collect();
    let inbox = text("inbox");
    let body = format!(
        "A passkey was added to your sayso on {browser} at {when}. With it, your Allow counts \
         where an approval needs your passkey. If this wasn't you, have it removed on the \
         sayso server: sayso person passkeys {} --inbox {inbox} --remove {prefix}",
        person.name
    );
    ("A passkey was added to your sayso".to_string(), body)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::domain::outbox::Route;

    #[test]
    fn the_notice_says_where_when_and_how_to_remove_it() {
        let id = Uuid::now_v7();
        let person = Person::named(id, id, "ana", datetime!(2026-11-21 10:00 UTC));
        let m = OutboxMessage {
            id: Uuid::now_v7(),
            decision_id: Uuid::nil(),
            route: Route::Ntfy,
            purpose: Purpose::PasskeyAdded,
            payload: json!({
                "person": "ana", "inbox": "ops", "passkey": "AbCdEfGhIjKlMnOp",
                "added_at": "2026-11-21T15:04:05Z", "user_agent": "Firefox on Linux",
            }),
            status: MessageStatus::Pending,
            attempts: 1,
            created_at: datetime!(2026-11-21 15:04 UTC),
            give_up_at: datetime!(2026-11-22 15:04 UTC),
            last_error: None,
            person: Some(id),
        };
        let (title, body) = passkey_added_words(&m, &person, &Zone::utc());
        assert_eq!(title, "A passkey was added to your sayso");
        assert!(
            body.starts_with(
                "A passkey was added to your sayso on \"Firefox on Linux\" at 2026-11-21 15:04 UTC."
            ),
            "{body}"
        );
        let (_, body) = passkey_added_words(&m, &person, &Zone::named("Asia/Kolkata"));
        assert!(body.contains(" at 2026-11-21 20:34 IST."), "{body}");
        assert!(
            body.ends_with("sayso person passkeys ana --inbox ops --remove AbCdEfGhIjKl"),
            "{body}"
        );
    }
}
