//! ntfy notifications against a local receiver playing the ntfy server: it records each
//! publish and answers like ntfy does (200, or the status a case asks for). No real ntfy
//! server runs on this machine, so the receiver stands in for it; the answer buttons it
//! receives are pressed for real, against the real sayso server.

mod common;

use axum::http::{HeaderMap, Method};
use common::outbox::{Fixture, assert_retried_or_failed, first_try};
use common::receiver::Receiver;
use common::server::{s, send};
use sayso::courier::{Courier, Delivery};
use sayso::domain::Decision;
use sayso::domain::answer_text::answer_text;
use sayso::domain::inbox::InboxChannels;
use sayso::domain::outbox::{Channel, Purpose, Route};
use sayso::notify::ntfy::NtfyChannel;
use serde_json::{Value, json};
use time::OffsetDateTime;
use tokio::net::TcpListener;
use uuid::Uuid;

// ---- the stand-in ntfy server ----

/// A publish as the stand-in server got it, its body read as JSON.
#[derive(Debug, Clone)]
struct Published {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Value,
}

struct FakeNtfy {
    base: String,
    receiver: Receiver,
}

impl FakeNtfy {
    async fn start() -> FakeNtfy {
        let receiver = Receiver::ntfy().await;
        FakeNtfy {
            base: receiver.base.clone(),
            receiver,
        }
    }

    fn answer_with(&self, statuses: &[u16]) {
        self.receiver.answer_with(statuses);
    }

    fn published(&self) -> Vec<Published> {
        self.receiver
            .requests()
            .into_iter()
            .map(|r| Published {
                body: r.json(),
                method: r.method,
                path: r.path,
                headers: r.headers,
            })
            .collect()
    }

    fn last(&self) -> Published {
        self.published().pop().expect("something was published")
    }
}

// ---- decisions to notify about ----

/// What the ntfy tests ask of the fixture.
impl Fixture {
    /// Creates a decision and returns it as stored, with its answer link.
    async fn create(&self, body: Value) -> (Decision, String) {
        let handle = self.srv.create(body).await;
        let id: Uuid = s(&handle, "decision_id").parse().unwrap();
        (self.decision(id).await, s(&handle, "web_url").to_owned())
    }

    /// Publishes the message for `purpose` about `d` to the inbox's ntfy `channels`.
    async fn publish(&self, purpose: &str, d: &Decision, channels: &InboxChannels) -> Delivery {
        let now = OffsetDateTime::now_utc();
        let message = first_try(
            d.id,
            Route::Ntfy,
            Purpose::parse(purpose).expect("a purpose"),
            now,
            now + time::Duration::hours(1),
        );
        let view = self.srv.svc.view(d).await.unwrap();
        self.deliver(&NtfyChannel::new(), &message, d, &view, channels)
            .await
    }
}

fn topic(ntfy: &FakeNtfy, path: &str, token: Option<&str>) -> InboxChannels {
    InboxChannels {
        ntfy_url: Some(format!("{}{path}", ntfy.base)),
        ntfy_token: token.map(str::to_owned),
        ..InboxChannels::default()
    }
}

fn header<'a>(p: &'a Published, name: &str) -> Option<&'a str> {
    p.headers.get(name).map(|v| v.to_str().unwrap())
}

/// Presses an ntfy `http` action button as the ntfy app does: its method, URL, headers, body.
async fn press(action: &Value) -> (reqwest::StatusCode, Value) {
    assert_eq!(action["action"], "http");
    let client = reqwest::Client::new();
    let mut req = client.request(
        action["method"].as_str().unwrap().parse().unwrap(),
        action["url"].as_str().unwrap(),
    );
    for (name, value) in action["headers"].as_object().unwrap() {
        req = req.header(name, value.as_str().unwrap());
    }
    send(req.body(action["body"].as_str().unwrap().to_owned())).await
}

// ---- the cases ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bool_question_is_published_with_buttons_that_answer_it() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let channels = topic(&ntfy, "/sayso-alerts", Some("tk_topic_token"));
    let (d, web_url) = f
        .create(json!({
            "question": "Deploy to production?", "kind": "bool", "project": "billing",
            "yes_label": "Ship it", "no_label": "Hold",
        }))
        .await;

    let result = f.publish("ask", &d, &channels).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(p.method, Method::POST);
    assert_eq!(p.path, "/", "published as JSON to the server root");
    assert_eq!(header(&p, "authorization"), Some("Bearer tk_topic_token"));
    assert_eq!(header(&p, "content-type"), Some("application/json"));
    let body = &p.body;
    assert_eq!(body["topic"], "sayso-alerts");
    assert_eq!(body["title"], "billing");
    let (question, expiry) = common::question_and_expiry(&body["message"]);
    assert_eq!(question, "Deploy to production?");
    assert!(expiry.ends_with(" UTC"), "{expiry}");
    assert_eq!(body["click"], web_url);
    assert_eq!(body["priority"], 3);
    assert_eq!(body["tags"], json!(["question"]));
    let sequence_id = d.id.simple().to_string();
    assert_eq!(body["sequence_id"], sequence_id);

    let actions = body["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 2);
    for (action, label, value) in [(&actions[0], "Ship it", "yes"), (&actions[1], "Hold", "no")] {
        assert_eq!(action["action"], "http");
        assert_eq!(action["label"], label);
        assert_eq!(action["url"], web_url);
        assert_eq!(action["method"], "POST");
        assert_eq!(
            action["headers"],
            json!({"content-type": "application/json"})
        );
        assert_eq!(
            serde_json::from_str::<Value>(action["body"].as_str().unwrap()).unwrap(),
            json!({"value": value})
        );
        assert_eq!(action["clear"], true);
    }

    // Pressing "Ship it" answers the decision.
    let (status, answered) = press(&actions[0]).await;
    assert_eq!(status, 200, "{answered}");
    let api = f.srv.get(&d.id.to_string()).await;
    assert_eq!(api["status"], "answered");
    assert_eq!(api["outcome"], true);

    // The resolution replaces the same notification, quietly and without buttons.
    let d = f.decision(d.id).await;
    let result = f.publish("resolved", &d, &channels).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(p.path, "/");
    assert_eq!(header(&p, "authorization"), Some("Bearer tk_topic_token"));
    assert_eq!(p.body["topic"], "sayso-alerts");
    assert_eq!(p.body["sequence_id"], sequence_id);
    assert_eq!(p.body["title"], "Answered · billing");
    assert_eq!(p.body["message"], answer_text(&d));
    assert!(p.body["message"].as_str().unwrap().contains("yes"));
    assert_eq!(p.body["priority"], 2);
    assert!(p.body.get("actions").is_none());
    assert_eq!(ntfy.published().len(), 2);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_no_button_answers_false() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let (d, _) = f
        .create(json!({"question": "Delete the branch?", "kind": "bool"}))
        .await;
    let result = f.publish("ask", &d, &topic(&ntfy, "/t", None)).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(header(&p, "authorization"), None);
    assert_eq!(p.body["title"], "sayso");
    let no = &p.body["actions"][1];
    assert_eq!(no["label"], "No");
    let (status, _) = press(no).await;
    assert_eq!(status, 200);
    let api = f.srv.get(&d.id.to_string()).await;
    assert_eq!(api["status"], "answered");
    assert_eq!(api["outcome"], false);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reminder_is_urgent_and_other_kinds_get_no_buttons() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let (d, web_url) = f
        .create(json!({"question": "Which region?", "kind": "choose", "options": ["eu", "us"]}))
        .await;
    let result = f.publish("reminder", &d, &topic(&ntfy, "/t", None)).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(p.body["title"], "sayso");
    assert_eq!(
        common::question_and_expiry(&p.body["message"]).0,
        "Which region?"
    );
    assert_eq!(p.body["click"], web_url);
    assert_eq!(p.body["priority"], 4);
    assert_eq!(p.body["tags"], json!(["alarm_clock"]));
    assert_eq!(p.body["sequence_id"], d.id.simple().to_string());
    assert!(p.body.get("actions").is_none());
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_decision_replaces_the_notification_with_expired() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let (d, _) = f
        .create(json!({"question": "Rotate keys?", "kind": "bool"}))
        .await;
    // Expire it as the expiry sweep would, an hour and a minute from now.
    let later = OffsetDateTime::now_utc() + time::Duration::minutes(61);
    f.srv.svc.store().expire(d.id, later).await.unwrap();
    let d = f.decision(d.id).await;
    assert_eq!(d.status, sayso::domain::Status::Expired);
    let result = f.publish("resolved", &d, &topic(&ntfy, "/t", None)).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(p.body["title"], "Expired · sayso");
    assert_eq!(p.body["message"], answer_text(&d));
    assert_eq!(p.body["sequence_id"], d.id.simple().to_string());
    assert_eq!(p.body["priority"], 2);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_under_a_path_prefix_is_published_to_that_prefix() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let (d, _) = f.create(json!({"question": "Ok?", "kind": "text"})).await;
    let result = f
        .publish("ask", &d, &topic(&ntfy, "/ntfy/phone", None))
        .await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let p = ntfy.last();
    assert_eq!(p.path, "/ntfy/");
    assert_eq!(p.body["topic"], "phone");
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_answers_decide_between_retry_and_failure() {
    let f = Fixture::start().await;
    let ntfy = FakeNtfy::start().await;
    let (d, _) = f.create(json!({"question": "Ok?", "kind": "text"})).await;
    let channels = topic(&ntfy, "/t", None);
    for (status, retried) in [
        (500, true),
        (429, true),
        (408, true),
        (403, false),
        (400, false),
    ] {
        ntfy.answer_with(&[status]);
        let result = f.publish("ask", &d, &channels).await;
        assert_retried_or_failed(status, retried, &result);
    }
    ntfy.answer_with(&[410]);
    let gone = f.publish("ask", &d, &channels).await;
    assert_eq!(
        gone,
        Delivery::Failed("ntfy answered 410 Gone: stopped".into())
    );

    // Nothing listening: retried.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    let unreachable = InboxChannels {
        ntfy_url: Some(format!("http://127.0.0.1:{port}/t")),
        ..InboxChannels::default()
    };
    let result = f.publish("ask", &d, &unreachable).await;
    assert!(matches!(result, Delivery::Retry(_)), "{result:?}");
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbox_without_a_topic_is_skipped() {
    let f = Fixture::start().await;
    let (d, _) = f.create(json!({"question": "Ok?", "kind": "text"})).await;
    let result = f.publish("ask", &d, &InboxChannels::default()).await;
    assert!(matches!(result, Delivery::Skipped(_)), "{result:?}");
    assert_eq!(NtfyChannel::new().channel(), Channel::Ntfy);
    f.srv.stop().await;
}
