//! Answers from Matrix, read through the bot's own `/sync` on its own homeserver (no push
//! endpoint, nothing another server could post to): a reaction to an ask (`m.reaction`,
//! `m.annotation`) or a reply to it (`m.room.message` with `m.in_reply_to`).
//!
//! Who answers is the event's `sender`, which the homeserver sets from the access token that
//! sent it (never a display name, never anything in the content), and only in that person's
//! own direct room: anyone else there, or a reply in another room, is told "not yours" and
//! nothing is recorded. The sync token is kept after each batch and each event id is taken
//! once (`first_seen`), so a restart neither loses nor replays an answer.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::render::{self, normalize_key};
use super::{Matrix, SINCE, State, keys_key, owner_key, room_key, txn};
use crate::chat::{answer, recorded, settled};
use crate::domain::chat::ChatReply;
use crate::domain::outbox::Channel;
use crate::render::{T, Zone};
use crate::service::{ChatOutcome, Service};

/// How long one `/sync` waits for something to arrive.
const SYNC_WAIT: Duration = Duration::from_secs(30);
/// The longest pause after a failed sync.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What the bot asks `/sync` for: its rooms' messages, reactions and memberships, many at a
/// time (a long outage's answers in one batch), and nothing else (no presence, receipts,
/// typing, account data).
const FILTER: &str = r#"{"presence":{"types":[]},"account_data":{"types":[]},"room":{"timeline":{"types":["m.room.message","m.reaction","m.room.member"],"limit":200},"state":{"types":[]},"ephemeral":{"types":[]},"account_data":{"types":[]}}}"#;

const NOT_YOURS: &str = "This question is not yours to answer: nothing was recorded.";
const NOT_A_QUESTION: &str =
    "That message is not one of sayso's questions here: reply to the question itself.";
const REPLY_TO_ANSWER: &str =
    "To answer a question, react to it or reply to it (your client's Reply on that message).";

/// Reads the bot's sync until the server stops.
pub async fn run_listener(svc: Service, matrix: Arc<Matrix>) {
    let mut backoff = Duration::from_secs(1);
    let me = loop {
        match matrix.api.session().await {
            Ok(s) => break s.user_id,
            Err(e) => {
                tracing::warn!(error = %e, "Matrix: the bot could not log in; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    };
    tracing::info!(user = %me, "Matrix: reading the bot's sync");
    let mut since = match svc.chat_state(SINCE).await {
        Ok(v) => v.filter(|v| !v.is_empty()),
        Err(e) => {
            tracing::warn!(error = %e, "Matrix: could not read where the sync stopped");
            None
        }
    };
    backoff = Duration::from_secs(1);
    loop {
        let batch = match matrix.api.sync(since.as_deref(), FILTER, SYNC_WAIT).await {
            Ok(batch) => batch,
            Err(e) => {
                tracing::warn!(error = %e, "Matrix: sync failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        backoff = Duration::from_secs(1);
        if let Some(rooms) = batch["rooms"]["join"].as_object() {
            for (room, joined) in rooms {
                let timeline = &joined["timeline"];
                if timeline["limited"] == json!(true) && since.is_some() {
                    // More arrived than one batch holds: the gap is read from the room's
                    // history before what the batch holds.
                    for event in gap(&matrix, room, timeline, since.as_deref()).await {
                        handle_event(&svc, &matrix, &me, room, &event).await;
                    }
                }
                for event in timeline["events"].as_array().into_iter().flatten() {
                    handle_event(&svc, &matrix, &me, room, event).await;
                }
            }
        }
        // Kept after the batch is handled: a crash in between repeats the batch, and
        // `first_seen` drops what was taken.
        if let Some(next) = batch["next_batch"].as_str() {
            if since.as_deref() != Some(next)
                && let Err(e) = svc.set_chat_state(SINCE, next).await
            {
                tracing::warn!(error = %e, "Matrix: could not keep where the sync stopped");
            }
            since = Some(next.to_string());
        }
    }
}

/// The events of `room` between `since` and the start of a limited timeline, oldest first.
async fn gap(matrix: &Matrix, room: &str, timeline: &Value, since: Option<&str>) -> Vec<Value> {
    let (Some(mut from), Some(to)) = (timeline["prev_batch"].as_str().map(str::to_owned), since)
    else {
        return Vec::new();
    };
    let mut events = Vec::new();
    // A bound, so a room flooded by someone cannot hold the listener forever.
    for _ in 0..20 {
        let page = match matrix
            .api
            .messages(room, &from, to, FILTER_ROOM_EVENTS)
            .await
        {
            Ok(page) => page,
            Err(e) => {
                tracing::warn!(error = %e, room, "Matrix: could not read a room's missed events");
                break;
            }
        };
        let chunk = page["chunk"].as_array().cloned().unwrap_or_default();
        events.extend(chunk.iter().cloned());
        match page["end"].as_str() {
            Some(end) if !chunk.is_empty() && end != from => from = end.to_string(),
            _ => break,
        }
    }
    events.reverse();
    events
}

/// The room-event filter for `/messages`: the same types the sync takes.
const FILTER_ROOM_EVENTS: &str = r#"{"types":["m.room.message","m.reaction","m.room.member"]}"#;

/// Handles one timeline event; anything not an answer, the bot's own, or seen before, is
/// left alone.
async fn handle_event(svc: &Service, matrix: &Matrix, me: &str, room: &str, event: &Value) {
    let (Some(sender), Some(id), Some(kind)) = (
        event["sender"].as_str(),
        event["event_id"].as_str(),
        event["type"].as_str(),
    ) else {
        return;
    };
    if sender == me {
        return;
    }
    let content = &event["content"];
    let answer = match kind {
        "m.reaction" => Inbound::Reaction,
        "m.room.message" => Inbound::Message,
        "m.room.member" => {
            left(svc, matrix, room, event).await;
            return;
        }
        _ => return,
    };
    match svc.first_seen(&format!("matrix:{id}")).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::warn!(error = %e, event = id, "Matrix: could not check an event; ignored");
            return;
        }
    }
    let owner = match svc.chat_state(&owner_key(room)).await {
        Ok(owner) => owner,
        Err(e) => {
            tracing::warn!(error = %e, "Matrix: could not read whose room this is");
            return;
        }
    };
    let said = match answer {
        Inbound::Reaction => reaction(svc, room, sender, owner.as_deref(), content).await,
        Inbound::Message => message(svc, room, sender, owner.as_deref(), id, content).await,
    };
    let Some((text, link, reply_to)) = said else {
        return;
    };
    let body = render::notice(&text, link.as_deref(), Some(&reply_to));
    if let Err(e) = matrix
        .api
        .send(room, "m.room.message", &txn(&[id, "said"]), &body)
        .await
    {
        tracing::warn!(error = %e, room, "Matrix: could not answer an event");
    }
}

enum Inbound {
    Reaction,
    Message,
}

/// What the bot says back: the text, a link, and the event it replies to.
type Said = Option<(String, Option<String>, String)>;

/// A reaction: an answer when it is on one of our asks, by the room's person, with a key the
/// ask offered.
async fn reaction(svc: &Service, room: &str, sender: &str, owner: Option<&str>, c: &Value) -> Said {
    let rel = &c["m.relates_to"];
    let (Some("m.annotation"), Some(target), Some(key)) = (
        rel["rel_type"].as_str(),
        rel["event_id"].as_str(),
        rel["key"].as_str(),
    ) else {
        return None;
    };
    // A reaction to anything else (a notice, someone's message) is just a reaction.
    let post = svc.chat_post(Channel::Matrix, room, target).await.ok()??;
    let reply_to = target.to_string();
    if owner != Some(sender) {
        tracing::warn!(
            sender,
            room,
            "Matrix: a reaction from someone whose room it is not"
        );
        return Some((NOT_YOURS.into(), None, reply_to));
    }
    let table = svc
        .chat_state(&keys_key(target))
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    let offered: Vec<(&str, &str)> = table.lines().filter_map(|l| l.split_once(' ')).collect();
    let code = offered
        .iter()
        .find(|(k, _)| normalize_key(k) == normalize_key(key))
        .map(|(_, code)| code.to_string());
    let Some(code) = code else {
        if offered.is_empty() {
            return Some((
                "This question is answered by a reply, or on the page.".into(),
                None,
                reply_to,
            ));
        }
        let keys: Vec<&str> = offered.iter().map(|(k, _)| *k).collect();
        // A key is any text the sender chose: shown short.
        let key: String = key.chars().take(16).collect();
        return Some((
            format!(
                "{key} is not one of the answers: react with {}, or reply.",
                keys.join(" or ")
            ),
            None,
            reply_to,
        ));
    };
    let (t, outcome, zone) = answer(
        svc,
        Channel::Matrix,
        sender,
        post.decision,
        &ChatReply::Button(code),
    )
    .await;
    Some(said(&t, outcome, reply_to, &zone))
}

/// A message: an answer when it replies to one of our asks, by the room's person.
async fn message(
    svc: &Service,
    room: &str,
    sender: &str,
    owner: Option<&str>,
    id: &str,
    c: &Value,
) -> Said {
    // Edits, notices (other bots) and anything not text are not answers.
    if c["m.relates_to"]["rel_type"] == json!("m.replace")
        || !matches!(c["msgtype"].as_str(), Some("m.text" | "m.emote"))
    {
        return None;
    }
    let target = c["m.relates_to"]["m.in_reply_to"]["event_id"].as_str();
    let text = strip_reply_fallback(c["body"].as_str().unwrap_or_default());
    let Some(target) = target else {
        // Only the room's person is told how to answer; the bot does not chat with others.
        return (owner == Some(sender)).then(|| (REPLY_TO_ANSWER.into(), None, id.to_string()));
    };
    let reply_to = target.to_string();
    let Some(post) = svc
        .chat_post(Channel::Matrix, room, target)
        .await
        .ok()
        .flatten()
    else {
        return Some((NOT_A_QUESTION.into(), None, reply_to));
    };
    if owner != Some(sender) {
        tracing::warn!(
            sender,
            room,
            "Matrix: a reply from someone whose room it is not"
        );
        return Some((NOT_YOURS.into(), None, reply_to));
    }
    let (t, outcome, zone) = answer(
        svc,
        Channel::Matrix,
        sender,
        post.decision,
        &ChatReply::Text(text),
    )
    .await;
    Some(said(&t, outcome, reply_to, &zone))
}

/// What the sender is told about their answer, in their language, its times in their
/// `zone`.
fn said(
    t: &T,
    outcome: ChatOutcome,
    reply_to: String,
    zone: &Zone,
) -> (String, Option<String>, String) {
    match outcome {
        ChatOutcome::Recorded(d) => (recorded(t, &d, zone), None, reply_to),
        ChatOutcome::NotYours => (t.tr("chat-not-yours"), None, reply_to),
        ChatOutcome::Settled(d) => (
            t.tr1("chat-already-settled", "settled", settled(t, &d, zone)),
            None,
            reply_to,
        ),
        ChatOutcome::OpenPage(link) => (t.tr("chat-on-the-page"), Some(link), reply_to),
        ChatOutcome::Refused(why) => (why, None, reply_to),
    }
}

/// A room's person left it (or was banned): it is forgotten, so their next ask makes a new
/// one they are in.
async fn left(svc: &Service, matrix: &Matrix, room: &str, event: &Value) {
    let membership = event["content"]["membership"].as_str();
    let (Some(user), Some("leave" | "ban")) = (event["state_key"].as_str(), membership) else {
        return;
    };
    if let Ok(Some(owner)) = svc.chat_state(&owner_key(room)).await
        && owner == user
        && let Ok(Some(current)) = svc.get(&room_key(user)).await
        && current == room
    {
        tracing::info!(
            room,
            user,
            "Matrix: the person left their room; a new one comes next"
        );
        matrix.forget_room(svc, user, room).await;
    }
}

/// The reply's own words, without the quoted lines older clients put before them
/// ("> <@ana:m.example> Deploy?\n\nallow").
fn strip_reply_fallback(body: &str) -> String {
    if !body.starts_with("> ") {
        return body.trim().to_string();
    }
    let rest: Vec<&str> = body.lines().skip_while(|l| l.starts_with('>')).collect();
    rest.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_fallback_is_dropped() {
        assert_eq!(
            strip_reply_fallback("> <@bot:m.example> Deploy?\n> more\n\ndeny: not today"),
            "deny: not today"
        );
        assert_eq!(strip_reply_fallback("  allow \n"), "allow");
        assert_eq!(strip_reply_fallback(">not a quote"), ">not a quote");
    }

    #[test]
    fn the_filter_is_json() {
        let f: Value = serde_json::from_str(FILTER).unwrap();
        assert_eq!(f["room"]["timeline"]["limit"], 200);
        let _: Value = serde_json::from_str(FILTER_ROOM_EVENTS).unwrap();
    }
}
