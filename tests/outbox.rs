//! The outbox end to end, through a real server and its worker: mail to a real SMTP server,
//! signed webhooks to a local receiver, skipped channels with their reasons, reminders.

mod common;

use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use base64::Engine;
use common::receiver::{Receiver, Reply};
use common::server::{TestServer, fresh_notifying_server, fresh_server, s};
use common::smtp::mailing_server;
use hmac::{Hmac, Mac};
use sayso::domain::outbox::{Purpose, Route};
use serde_json::{Value, json};
use sha2::Sha256;
use uuid::Uuid;

/// Polls the decision until `check` holds (or panics after 20 s).
async fn until(srv: &TestServer, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let d = srv.get(id).await;
        if check(&d) {
            return d;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}: {d}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn channel_status(d: &Value, channel: &str) -> Option<String> {
    d["notifications"]
        .as_array()?
        .iter()
        .find(|n| n["channel"] == channel)
        .and_then(|n| n["status"].as_str().map(str::to_string))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_email_decision_is_mailed_and_its_thread_gets_the_resolution() {
    let Some((sink, _db, srv)) = mailing_server("person@example.com").await else {
        return;
    };
    let h = srv
        .create(
            json!({"question": "Rotate the API keys tonight?", "kind": "bool", "notify": "email"}),
        )
        .await;
    let id = s(&h, "decision_id");
    let mails = sink.wait_for(1).await;
    let ask = &mails[0];
    assert_eq!(ask.rcpt_tos, ["person@example.com"]);
    assert!(ask.part("text/plain").unwrap().contains(s(&h, "web_url")));
    assert!(ask.part("text/html").unwrap().contains(s(&h, "web_url")));
    let ask_id = ask.header("Message-ID").unwrap().to_string();
    until(&srv, id, "email sent", |d| {
        channel_status(d, "email").as_deref() == Some("sent")
    })
    .await;

    let (status, _) = srv.answer(s(&h, "web_url"), json!({"value": "no"})).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let mails = sink.wait_for(2).await;
    let note = &mails[1];
    assert_eq!(note.header("In-Reply-To"), Some(ask_id.as_str()));
    assert!(
        note.part("text/plain").unwrap().contains("\"no\""),
        "{:?}",
        note.parts
    );
    // Nothing more: one ask, one note.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(sink.received().len(), 2);

    let (_, events) =
        common::server::send(srv.req(reqwest::Method::GET, &format!("/v1/decisions/{id}/events")))
            .await;
    let notified: Vec<&Value> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "notified")
        .collect();
    assert!(
        notified
            .iter()
            .any(|e| e["detail"]["channel"] == "email" && e["detail"]["purpose"] == "ask")
    );
    assert!(
        notified
            .iter()
            .any(|e| e["detail"]["channel"] == "email" && e["detail"]["purpose"] == "resolved")
    );
    srv.stop().await;
}

/// A webhook receiver that answers 500 to the first `failures` requests, then 200.
async fn start_receiver(failures: usize) -> (Receiver, String) {
    let r = Receiver::start(Reply::Text).await;
    r.answer_with(&vec![500; failures]);
    let url = format!("{}/hook", r.base);
    (r, url)
}

/// Standard Webhooks verification, written here from the spec (not sayso's signing code).
fn signature_ok(secret: &str, headers: &HeaderMap, body: &[u8]) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let id = headers["webhook-id"].to_str().unwrap();
    let ts = headers["webhook-timestamp"].to_str().unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    headers["webhook-signature"]
        .to_str()
        .unwrap()
        .split(' ')
        .any(|sig| sig == format!("v1,{expected}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_url_gets_one_signed_webhook_after_three_failures() {
    let (_db, srv) = fresh_notifying_server().await;
    let (receiver, url) = start_receiver(3).await;
    let h = srv
        .create(json!({"question": "Merge the release branch?", "kind": "bool", "notify": "none", "callback_url": url}))
        .await;
    let id = s(&h, "decision_id");
    srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    let d = until(&srv, id, "webhook delivered", |d| {
        channel_status(d, "webhook").as_deref() == Some("sent")
    })
    .await;
    let seen = receiver.requests();
    assert_eq!(seen.len(), 4, "three failures, then one accepted delivery");
    assert_eq!(seen.iter().filter(|r| r.status == 200).count(), 1);
    let ids: std::collections::HashSet<_> = seen
        .iter()
        .map(|r| r.headers["webhook-id"].clone())
        .collect();
    assert_eq!(ids.len(), 1, "every attempt carries the same webhook-id");
    let inbox = srv.default_inbox().await;
    let secret = srv
        .svc
        .store()
        .inbox_channels(inbox.id)
        .await
        .unwrap()
        .webhook_secret
        .unwrap();
    let (headers, body) = (&seen[3].headers, &seen[3].body);
    assert!(signature_ok(&secret, headers, body));
    assert!(!signature_ok(&secret, headers, b"{\"tampered\":true}"));
    let sent: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(sent["decision_id"], d["decision_id"]);
    assert_eq!(sent["status"], "answered");
    assert_eq!(sent["outcome"], true);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_that_are_not_set_up_are_skipped_with_the_reason() {
    let (_db, srv) = fresh_notifying_server().await;
    let email = srv
        .create(json!({"question": "Q", "kind": "bool", "notify": "email"}))
        .await;
    let d = srv.get(s(&email, "decision_id")).await;
    assert_eq!(channel_status(&d, "email").as_deref(), Some("skipped"));
    assert!(
        d["notifications"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("SAYSO_SMTP_URL")
    );

    let push = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let d = until(&srv, s(&push, "decision_id"), "push skipped", |d| {
        channel_status(d, "push").as_deref() == Some("skipped")
    })
    .await;
    let detail = d["notifications"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("no device"), "{detail}");

    let none = srv
        .create(json!({"question": "Q", "kind": "bool", "notify": "none"}))
        .await;
    assert_eq!(
        srv.get(s(&none, "decision_id")).await["notifications"],
        json!([])
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_is_scheduled_once_for_long_decisions_but_not_for_todos() {
    let (_db, srv) = fresh_server().await;
    let reminders = |id: String| {
        let store = srv.svc.store().clone();
        async move {
            store
                .messages(Uuid::parse_str(&id).unwrap())
                .await
                .unwrap()
                .into_iter()
                .filter(|m| m.purpose == Purpose::Reminder)
                .count()
        }
    };
    let long = srv
        .create(json!({"question": "Q", "kind": "bool", "ttl_minutes": 60}))
        .await;
    assert_eq!(reminders(s(&long, "decision_id").into()).await, 1);
    let short = srv
        .create(json!({"question": "Q", "kind": "bool", "ttl_minutes": 5}))
        .await;
    assert_eq!(reminders(s(&short, "decision_id").into()).await, 0);
    let todo = srv
        .create(json!({"question": "Q", "kind": "todo", "ttl_minutes": 600}))
        .await;
    assert_eq!(reminders(s(&todo, "decision_id").into()).await, 0);
    let silent = srv
        .create(json!({"question": "Q", "kind": "bool", "ttl_minutes": 60, "notify": "none"}))
        .await;
    assert_eq!(reminders(s(&silent, "decision_id").into()).await, 0);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_reminder_re_sends_on_the_channels_that_reached_the_person() {
    let Some((sink, _db, srv)) = mailing_server("person@example.com").await else {
        return;
    };
    // Five minutes: too short for a scheduled reminder, so the one below is the only one.
    let h = srv
        .create(json!({"question": "Approve the budget?", "kind": "bool", "notify": "email", "ttl_minutes": 5}))
        .await;
    let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();
    let ask = sink.wait_for(1).await[0].clone();
    until(&srv, s(&h, "decision_id"), "email sent", |d| {
        channel_status(d, "email").as_deref() == Some("sent")
    })
    .await;
    // The reminder fan-out falls due now (as it would at 80 % of a longer TTL).
    let due = sayso::service::message(Route::FanOut, Purpose::Reminder, sayso::service::now());
    srv.svc
        .store()
        .enqueue(id, &[due], sayso::service::now())
        .await
        .unwrap();
    srv.svc.kick_outbox();
    let mails = sink.wait_for(2).await;
    let reminder = &mails[1];
    assert!(
        reminder.header("Subject").unwrap().starts_with("Reminder:"),
        "{:?}",
        reminder.headers
    );
    assert_eq!(reminder.header("In-Reply-To"), ask.header("Message-ID"));
    // Enqueued again, it is the same message: no second reminder.
    let again = sayso::service::message(Route::FanOut, Purpose::Reminder, sayso::service::now());
    srv.svc
        .store()
        .enqueue(id, &[again], sayso::service::now())
        .await
        .unwrap();
    srv.svc.kick_outbox();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(sink.received().len(), 2);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_holds_up_no_other_delivery() {
    let (_db, srv) = fresh_notifying_server().await;
    // Takes connections and never answers: the delivery waits for its 10 s timeout.
    let hanging = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hanging_url = format!("http://{}/hook", hanging.local_addr().unwrap());
    let (reached, mut reached_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = hanging.accept().await {
            held.push(conn);
            let _ = reached.send(());
        }
    });
    let h = srv
        .create(json!({"question": "Hang?", "kind": "bool", "notify": "none", "callback_url": hanging_url}))
        .await;
    let stuck = s(&h, "decision_id").to_string();
    srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    tokio::time::timeout(Duration::from_secs(20), reached_rx.recv())
        .await
        .expect("the hanging receiver is reached");

    // While that one hangs, others are delivered.
    let (good, url) = start_receiver(0).await;
    for i in 0..20 {
        let h = srv
            .create(json!({"question": format!("Go {i}?"), "kind": "bool", "notify": "none", "callback_url": url}))
            .await;
        srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    }
    let started = Instant::now();
    while good.requests().len() < 20 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "only {} of 20 webhooks arrived",
            good.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...all before the hanging delivery gave up.
    let messages = srv
        .svc
        .store()
        .messages(stuck.parse().unwrap())
        .await
        .unwrap();
    let webhook = messages
        .iter()
        .find(|m| m.route == Route::Webhook)
        .expect("the stuck decision's webhook message");
    assert_eq!(
        (
            webhook.status,
            webhook.attempts,
            webhook.last_error.as_deref()
        ),
        (sayso::domain::outbox::MessageStatus::Pending, 1, None),
        "the hanging delivery is still in its first attempt"
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_gets_the_settled_decision_once_in_its_envelope_beside_the_webhook() {
    let (_db, srv) = fresh_notifying_server().await;
    let (hook, hook_url) = start_receiver(0).await;
    let (token, token_url) = start_receiver(2).await;
    let h = srv
        .create(
            json!({"question": "Ship the migration?", "kind": "bool", "notify": "none",
            "callback_url": hook_url,
            "completion": {"url": token_url, "wrap_in": "data"},
            "metadata": {"outcome": "allow"}}),
        )
        .await;
    let id = s(&h, "decision_id");
    srv.answer(
        s(&h, "web_url"),
        json!({"value": "no", "remark": "not on a Friday"}),
    )
    .await;
    let d = until(&srv, id, "completion delivered", |d| {
        channel_status(d, "completion").as_deref() == Some("sent")
            && channel_status(d, "webhook").as_deref() == Some("sent")
    })
    .await;
    let seen = token.requests();
    assert_eq!(seen.len(), 3, "two failures, then one accepted completion");
    let ids: std::collections::HashSet<_> = seen
        .iter()
        .map(|r| r.headers["webhook-id"].clone())
        .collect();
    assert_eq!(ids.len(), 1, "every attempt carries the same webhook-id");
    let secret = srv
        .svc
        .store()
        .inbox_channels(srv.default_inbox().await.id)
        .await
        .unwrap()
        .webhook_secret
        .unwrap();
    let last = &seen[2];
    assert_eq!(last.path, "/hook");
    assert!(signature_ok(&secret, &last.headers, &last.body));
    // The envelope is the asker's; what is in it is the settled decision, whatever the
    // asker's metadata says.
    let body = last.json();
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["data"]);
    assert_eq!(body["data"]["decision_id"], d["decision_id"]);
    assert_eq!(body["data"]["status"], "answered");
    assert_eq!(body["data"]["outcome"], false);
    assert_eq!(body["data"]["remark"], "not on a Friday");
    // The webhook went on its own, with the Decision as the body and its own id.
    let webhook = hook.requests();
    assert_eq!(webhook.len(), 1);
    assert_eq!(webhook[0].json()["decision_id"], d["decision_id"]);
    assert_ne!(webhook[0].headers["webhook-id"], last.headers["webhook-id"]);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_decision_completes_as_cancelled_never_as_an_answer() {
    let (_db, srv) = fresh_notifying_server().await;
    let (token, url) = start_receiver(0).await;
    let h = srv
        .create(
            json!({"question": "Rotate the keys?", "kind": "bool", "notify": "none",
            "completion": {"url": url}}),
        )
        .await;
    let id = s(&h, "decision_id");
    let (status, _) = common::server::send(
        srv.req(reqwest::Method::POST, &format!("/v1/decisions/{id}/cancel"))
            .json(&json!({"reason": "the run was stopped"})),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    until(&srv, id, "completion delivered", |d| {
        channel_status(d, "completion").as_deref() == Some("sent")
    })
    .await;
    let seen = token.requests();
    assert_eq!(seen.len(), 1);
    let body = seen[0].json();
    assert_eq!(body["decision_id"], id);
    assert_eq!(body["status"], "cancelled");
    assert_eq!(body["outcome"], Value::Null);
    assert_eq!(body["outcome_source"], Value::Null);
    assert_eq!(
        body["answer_text"],
        "The question \"Rotate the keys?\" was cancelled before anyone answered."
    );
    srv.stop().await;
}
