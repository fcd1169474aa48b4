//! What the push channel sends: an encrypted, VAPID-signed push, the closing one, and what
//! the push service's answer means.

use sayso::courier::{Courier, Delivery};
use sayso::notify::push::{PushNotice, PushOutcome, WebPushChannel};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::browser::Browser;
use crate::common::people::stored;
use crate::common::receiver::Recorded;
use crate::common::server::{TestServer, fresh_server, s};
use crate::push_service::{PushService, check_vapid, header};
use crate::support::{Parts, SUBJECT, new_question, notice};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_decrypts_for_the_browser_and_carries_a_valid_vapid_token() {
    let (_db, srv) = fresh_server().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let h = srv
        .create(json!({"question": "Deploy to production?", "kind": "bool", "project": "api", "ttl_seconds": 3600}))
        .await;
    let d = stored(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let notice = notice(&srv, &d, "ask").await;

    let got = push_accepted(&srv, &channel, &browser, &mut push, &notice).await;
    assert_eq!(header(&got.headers, "content-encoding"), "aes128gcm");
    assert_eq!(header(&got.headers, "urgency"), "high");
    assert_eq!(header(&got.headers, "topic"), d.id.simple().to_string());
    let ttl: u64 = header(&got.headers, "ttl").parse().unwrap();
    assert!((3500..=3600).contains(&ttl), "TTL is the time left: {ttl}");
    let server_key = srv.svc.vapid_public_key().await.unwrap();
    check_vapid(&got.headers, &server_key, &push.origin(), SUBJECT);

    let mut payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    // The body ends saying when the question expires, in the person's zone (UTC here).
    let (question, expiry) = crate::common::question_and_expiry(&payload["body"]);
    assert!(expiry.ends_with(" UTC"), "{expiry}");
    payload["body"] = json!(question);
    assert_eq!(
        payload,
        json!({
            "type": "show",
            "tag": d.id.to_string(),
            "title": "api",
            "body": "Deploy to production?",
            "url": s(&h, "web_url"),
        })
    );

    // Another browser cannot read it.
    let stranger = Browser::new();
    assert!(
        stranger.try_decrypt(&got.body).is_none(),
        "only the subscribed browser decrypts"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolved_decision_closes_the_notification_with_the_same_tag() {
    let (_db, srv) = fresh_server().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"action": "answer", "value": "yes"}),
    )
    .await;
    let d = stored(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);

    // A reminder for a resolved decision sends nothing.
    let parts = Parts::gather(&srv, &d, "reminder").await;
    let delivering = parts.delivering(&d);
    assert!(PushNotice::for_delivery(&delivering, OffsetDateTime::now_utc()).is_err());
    assert!(matches!(
        channel.deliver(&delivering).await,
        Delivery::Skipped(_)
    ));

    let notice = notice(&srv, &d, "resolved").await;
    let got = push_accepted(&srv, &channel, &browser, &mut push, &notice).await;
    assert_eq!(header(&got.headers, "urgency"), "normal");
    assert_eq!(header(&got.headers, "topic"), d.id.simple().to_string());
    assert!(header(&got.headers, "ttl").parse::<u64>().unwrap() > 0);
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload, json!({"type": "close", "tag": d.id.to_string()}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_services_answer_decides_gone_retry_or_refused() {
    let (_db, srv) = fresh_server().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let d = new_question(&srv).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let notice = notice(&srv, &d, "ask").await;
    let sub = browser.subscription(&push.endpoint);
    let key = srv.svc.vapid_key().await.unwrap();
    for (status, expect) in [
        (410, "gone"),
        (404, "gone"),
        (429, "retry"),
        (503, "retry"),
        (400, "refused"),
        (200, "accepted"),
    ] {
        push.answer_with(status);
        let got = match channel.push(key, &sub, &notice).await {
            PushOutcome::Accepted => "accepted",
            PushOutcome::Gone(_) => "gone",
            PushOutcome::Retry(_) => "retry",
            PushOutcome::Refused(_) => "refused",
        };
        assert_eq!(got, expect, "{status}");
        push.next().await;
    }
    // Nothing listening: try again later.
    let closed = browser.subscription("http://127.0.0.1:9/push/x");
    assert!(matches!(
        channel.push(key, &closed, &notice).await,
        PushOutcome::Retry(_)
    ));
}

/// Pushes `notice` to `browser`'s subscription at `push`, checks the push service accepted
/// it, and returns what the push service received.
async fn push_accepted(
    srv: &TestServer,
    channel: &WebPushChannel,
    browser: &Browser,
    push: &mut PushService,
    notice: &PushNotice,
) -> Recorded {
    let out = channel
        .push(
            srv.svc.vapid_key().await.unwrap(),
            &browser.subscription(&push.endpoint),
            notice,
        )
        .await;
    assert_eq!(out, PushOutcome::Accepted);
    push.next().await
}
