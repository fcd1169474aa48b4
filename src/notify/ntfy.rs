//! ntfy notifications to the inbox's topic (docs/NOTIFICATIONS.md).
//!
//! Messages are published as JSON to the server's root (ntfy's "Publish as JSON":
//! `POST https://ntfy.example/` with `{"topic": …, "message": …, …}`); a topic URL under a path
//! prefix (`https://example.com/ntfy/topic`) is published to that prefix. Every message of a
//! decision carries the same `sequence_id` (the decision id, 32 hex digits), so ntfy 2.16 and
//! later show one notification per decision that each message updates in place.
//!
//! - `ask` and `reminder`: the question, titled with the project (or "sayso"), opening the
//!   answer page when tapped; a reminder comes at high priority. A `bool` decision gets two
//!   buttons that answer from the notification itself: HTTP actions posting
//!   `{"value": "yes"}` / `{"value": "no"}` as JSON to the answer link, and then clearing it.
//!   A tool approval says what runs (render/what_runs.rs) and gets Allow and Deny buttons the
//!   same way (`{"value": "Allow"}`, …), except that Allow opens the page when the message
//!   cannot show all that runs, or the rule wants a passkey.
//! - `resolved`: the notification is replaced (same sequence id), not deleted: a short
//!   "Answered" / "Declined" / "Expired" / "Cancelled" note at low priority, with no buttons, so
//!   the person sees that it is settled without being alerted again. On a server older than
//!   2.16 this arrives as a second, quiet notification.
//!
//! No private-address rule here: people host ntfy at home, on their own network.

use crate::render::project::short_project;
use async_trait::async_trait;
use serde_json::{Value, json};
use time::OffsetDateTime;
use url::Url;

use super::people::feed_link;
use crate::courier::http_client::{client_builder, delivery_for_error, delivery_for_status};
use crate::courier::{
    Courier, Delivering, Delivery, ESCALATE_SKIPPED, NOTICE_SKIPPED, Notice, PROGRESS_SKIPPED,
};
use crate::domain::answer_text::answer_text;
use crate::domain::approval::{ALLOW, DENY};
use crate::domain::outbox::{Channel, Purpose};
use crate::domain::spec::KindSpec;
use crate::domain::{Decision, Status};
use crate::render::T;
use crate::render::visible::{self, Lines};
use crate::render::what_runs;

/// ntfy's priorities, 1 (min) to 5 (max).
const PRIORITY_LOW: u8 = 2;
const PRIORITY_DEFAULT: u8 = 3;
const PRIORITY_HIGH: u8 = 4;
/// The most characters of an approval's command (or file, or URL) in a message.
const SUBJECT_CHARS: usize = 400;
/// The most characters of the note that replaces a settled question.
const RESOLVED_CHARS: usize = 1000;

/// Publishes a decision's notifications to the inbox's ntfy topic.
pub struct NtfyChannel {
    client: reqwest::Client,
}

impl NtfyChannel {
    pub fn new() -> Self {
        NtfyChannel {
            client: client_builder().build().expect("the HTTP client builds"),
        }
    }
}

impl Default for NtfyChannel {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Courier for NtfyChannel {
    fn channel(&self) -> Channel {
        Channel::Ntfy
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let Some(topic_url) = d.channels.ntfy_url.as_deref() else {
            return Delivery::Skipped("the inbox has no ntfy topic".into());
        };
        let t = d.t();
        let now = crate::service::now();
        let mut body = match d.message.purpose {
            Purpose::Ask => ask_message(&t, d, false, d.gathered(), now),
            Purpose::Reminder => ask_message(&t, d, true, 0, now),
            Purpose::Resolved => resolved_message(&t, d.decision, d.web_url),
            Purpose::Escalate => return Delivery::Skipped(ESCALATE_SKIPPED.into()),
            Purpose::PasskeyAdded => return Delivery::Skipped(NOTICE_SKIPPED.into()),
            Purpose::Progress => return Delivery::Skipped(PROGRESS_SKIPPED.into()),
        };
        // A message that stands for asks the person's budget held says so, and opens the feed.
        let waiting = d.waiting();
        if waiting > 0 && matches!(d.message.purpose, Purpose::Ask | Purpose::Reminder) {
            stand_for_waiting(&t, &mut body, waiting, &feed_link(d.public_url));
        }
        self.publish(topic_url, d.channels.ntfy_token.as_deref(), body)
            .await
    }

    /// A notice to the person's own topic: high priority, with no buttons; a tap opens
    /// their feed.
    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let Some(topic_url) = n.person.ntfy_url.as_deref() else {
            return Delivery::Skipped(format!("{} has no ntfy topic", n.person.name));
        };
        let body = json!({
            "title": n.title,
            "message": n.body,
            "click": n.url,
            "priority": PRIORITY_HIGH,
            "tags": ["key"],
        });
        self.publish(topic_url, n.person.ntfy_token.as_deref(), body)
            .await
    }
}

impl NtfyChannel {
    /// Publishes `body` (a message without its topic) to the topic at `topic_url`.
    async fn publish(&self, topic_url: &str, token: Option<&str>, mut body: Value) -> Delivery {
        let (root, topic) = match split_topic_url(topic_url) {
            Ok(parts) => parts,
            Err(why) => return Delivery::Failed(why),
        };
        body["topic"] = Value::String(topic);
        let mut req = self.client.post(root).json(&body);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        match req.send().await {
            Ok(resp) => delivery_for_status("ntfy", resp.status()),
            Err(e) => delivery_for_error("ntfy", e),
        }
    }
}

/// The URL to publish JSON to (the server root, or the path prefix ntfy is served under) and
/// the topic, from a topic URL such as `https://ntfy.sh/mytopic`.
pub fn split_topic_url(topic_url: &str) -> Result<(Url, String), String> {
    let mut url =
        Url::parse(topic_url).map_err(|e| format!("the ntfy topic URL is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the ntfy topic URL has the scheme {:?}; only http and https work",
            url.scheme()
        ));
    }
    let mut segments: Vec<String> = url
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default();
    let Some(topic) = segments.pop() else {
        return Err("the ntfy topic URL names no topic (https://ntfy.sh/TOPIC)".into());
    };
    let prefix: String = segments.iter().map(|s| format!("{s}/")).collect();
    url.set_path(&format!("/{prefix}"));
    url.set_query(None);
    url.set_fragment(None);
    Ok((url, topic))
}

/// The stable id of a decision's notification.
pub fn sequence_id(decision: &Decision) -> String {
    decision.id.simple().to_string()
}

fn title(decision: &Decision) -> String {
    decision
        .spec
        .project
        .as_deref()
        .map_or_else(|| "sayso".to_owned(), short_project)
}

/// A new question, or the reminder of one still open, saying when it expires in the person's
/// zone; `gathered`: how many more of the same agent session it stands for.
fn ask_message(
    t: &T,
    d: &Delivering<'_>,
    reminder: bool,
    gathered: u64,
    now: OffsetDateTime,
) -> Value {
    let (decision, web_url) = (d.decision, d.web_url);
    // A tool approval says what runs, built from the approval itself (render/what_runs.rs).
    let shown = decision
        .spec
        .approval
        .as_ref()
        .map(|a| what_runs::shown(t, a, SUBJECT_CHARS));
    let first = match &shown {
        Some(s) => s.lines(),
        None => decision.spec.question.clone(),
    };
    let mut message = match gathered {
        0 => first,
        n => format!("{first}\n{}", t.tr1("notify-gathered", "count", n)),
    };
    message = format!("{message}\n{}", d.zone.expires(t, decision.expires_at, now));
    let mut msg = json!({
        "title": title(decision),
        "message": message,
        "click": web_url,
        "priority": if reminder { PRIORITY_HIGH } else { PRIORITY_DEFAULT },
        "tags": [if reminder { "alarm_clock" } else { "question" }],
        "sequence_id": sequence_id(decision),
    });
    if let KindSpec::Bool {
        yes_label,
        no_label,
    } = &decision.spec.body
    {
        msg["actions"] = json!([
            answer_action(yes_label, web_url, "yes"),
            answer_action(no_label, web_url, "no"),
        ]);
    }
    // A tool approval: Allow and Deny right from the notification ("for this session"
    // and a reason need the page).
    // (A gathered one has none: a tap there would answer only the newest of them.)
    if let Some(shown) = shown.filter(|_| gathered == 0) {
        // An Allow whose notification cannot show all that runs (cut, hidden characters, a
        // file's content), or that needs the person's passkey, is given on the page, which
        // the button opens; Deny still answers from here.
        let allow_label = t.tr("approval-allow");
        let allow = if shown.one_tap_allow {
            answer_action(&allow_label, web_url, ALLOW)
        } else {
            json!({"action": "view", "label": allow_label, "url": web_url, "clear": true})
        };
        msg["actions"] = json!([allow, answer_action(&t.tr("approval-deny"), web_url, DENY)]);
    }
    msg
}

/// A question that also stands for `waiting` more the person's notification budget held:
/// it says how many, opens the feed where they all are, and has no buttons (a tap there
/// would answer only this one).
fn stand_for_waiting(t: &T, msg: &mut Value, waiting: u64, feed: &str) {
    let question = msg["message"].as_str().unwrap_or_default().to_string();
    msg["message"] = json!(format!(
        "{question}\n{}",
        t.tr1("notify-waiting", "count", waiting)
    ));
    msg["click"] = json!(feed);
    if let Some(m) = msg.as_object_mut() {
        m.remove("actions");
    }
}

/// A button that answers the decision from the notification.
fn answer_action(label: &str, web_url: &str, value: &str) -> Value {
    json!({
        "action": "http",
        "label": label,
        "url": web_url,
        "method": "POST",
        "headers": {"content-type": "application/json"},
        "body": json!({"value": value}).to_string(),
        "clear": true,
    })
}

/// The settled note that replaces the question.
fn resolved_message(t: &T, decision: &Decision, web_url: &str) -> Value {
    let (heading, tag) = match decision.status {
        Status::Answered => ("status-answered", "white_check_mark"),
        Status::Declined => ("status-declined", "no_entry_sign"),
        Status::Expired => ("status-expired", "hourglass"),
        Status::Cancelled => ("status-cancelled", "x"),
        // Not resolved after all: say where it stands, quietly.
        Status::Pending => ("status-waiting", "question"),
    };
    json!({
        "title": format!("{} · {}", t.tr(heading), title(decision)),
        // The sentence quotes the question, which an approval's asker wrote: made visible.
        "message": visible::clip(&answer_text(decision), RESOLVED_CHARS, Lines::Kept).with_note(),
        "click": web_url,
        "priority": PRIORITY_LOW,
        "tags": [tag],
        "sequence_id": sequence_id(decision),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> (String, String) {
        let (root, topic) = split_topic_url(url).unwrap();
        (root.to_string(), topic)
    }

    #[test]
    fn topic_url_splits_into_root_and_topic() {
        assert_eq!(
            split("https://ntfy.sh/mytopic"),
            ("https://ntfy.sh/".into(), "mytopic".into())
        );
        assert_eq!(
            split("http://10.0.0.5:8080/alerts/?x=1"),
            ("http://10.0.0.5:8080/".into(), "alerts".into())
        );
        assert_eq!(
            split("https://example.com/ntfy/phone"),
            ("https://example.com/ntfy/".into(), "phone".into())
        );
    }

    #[test]
    fn a_message_standing_for_held_ones_opens_the_feed_and_answers_none() {
        let mut msg = json!({"message": "Deploy?", "click": "https://s/d/tok",
            "actions": [{"action": "http"}]});
        stand_for_waiting(&T::default(), &mut msg, 12, "https://s/inbox");
        assert_eq!(
            msg["message"],
            "Deploy?\n12 more questions are waiting in your sayso feed."
        );
        assert_eq!(msg["click"], "https://s/inbox");
        assert!(msg.get("actions").is_none());
    }

    #[test]
    fn topic_url_without_topic_is_refused() {
        assert!(split_topic_url("https://ntfy.sh/").is_err());
        assert!(split_topic_url("ftp://ntfy.sh/x").is_err());
        assert!(split_topic_url("not a url").is_err());
    }
}
