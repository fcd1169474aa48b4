//! Stored subscriptions: every new decision reaches them, gone ones are forgotten, busy
//! services are tried again, inner addresses are refused unless allowed.

use reqwest::StatusCode;
use sayso::courier::Delivery;
use sayso::notify::push::{PushOutcome, WebPushChannel};
use serde_json::{Value, json};

use crate::browser::Browser;
use crate::common;
use crate::common::people::stored;
use crate::common::server::{TestServer, fresh_server, s};
use crate::push_service::{PushService, check_vapid, header};
use crate::support::{
    SUBJECT, deliver, feed_token, new_question, notice, server_keeping_subscriptions,
    stored_subscriptions, subscribe,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_from_the_feed_gets_every_new_decision() {
    let Some((_db, srv)) =
        server_keeping_subscriptions("a_subscription_from_the_feed_gets_every_new_decision").await
    else {
        return;
    };
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let token = feed_token(&srv).await;
    let (status, body) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Subscribing again (the page does so on every visit) keeps one subscription.
    let (status, _) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        stored_subscriptions(&srv).await,
        vec![browser.subscription(&push.endpoint)]
    );

    let h = srv
        .create(json!({"question": "Merge the PR?", "kind": "bool"}))
        .await;
    let d = stored(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    let got = push.next().await;
    let server_key = srv.svc.vapid_public_key().await.unwrap();
    check_vapid(&got.headers, &server_key, &push.origin(), SUBJECT);
    assert_eq!(header(&got.headers, "content-encoding"), "aes128gcm");
    assert!(got.headers.contains_key("ttl"));
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload["type"], "show");
    assert_eq!(payload["tag"], d.id.to_string());
    assert_eq!(
        crate::common::question_and_expiry(&payload["body"]).0,
        "Merge the PR?"
    );
    assert_eq!(payload["url"], s(&h, "web_url"));

    srv.answer_ok(s(&h, "web_url"), json!({"action": "answer", "value": "no"}))
        .await;
    let d = stored(&srv, s(&h, "decision_id")).await;
    let out = deliver(&srv, &channel, &d, "resolved").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    let got = push.next().await;
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload, json!({"type": "close", "tag": d.id.to_string()}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_the_push_service_calls_gone_is_forgotten() {
    let Some((_db, srv)) =
        server_keeping_subscriptions("a_subscription_the_push_service_calls_gone_is_forgotten")
            .await
    else {
        return;
    };
    let mut push = PushService::start().await;
    let mut kept = PushService::start().await;
    let token = feed_token(&srv).await;
    let (gone_browser, kept_browser) = (Browser::new(), Browser::new());
    for (b, ep) in [
        (&gone_browser, &push.endpoint),
        (&kept_browser, &kept.endpoint),
    ] {
        let (status, body) = subscribe(&srv, &token, &b.subscription_json(ep)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    push.answer_with(410);
    let d = new_question(&srv).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);

    // One device still reached: sent; the gone one is removed.
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    push.next().await;
    kept.next().await;
    assert_eq!(
        stored_subscriptions(&srv).await,
        vec![kept_browser.subscription(&kept.endpoint)]
    );

    // The last device gone too: failed, and nothing left to send to.
    kept.answer_with(404);
    let out = deliver(&srv, &channel, &d, "reminder").await;
    assert!(matches!(out, Delivery::Failed(_)), "{out:?}");
    kept.next().await;
    assert!(stored_subscriptions(&srv).await.is_empty());
    let out = deliver(&srv, &channel, &d, "reminder").await;
    assert_eq!(
        out,
        Delivery::Skipped("no device has subscribed to push for this inbox".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_push_service_is_tried_again() {
    let Some((_db, srv)) = server_keeping_subscriptions("a_busy_push_service_is_tried_again").await
    else {
        return;
    };
    let mut push = PushService::start().await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    let (status, _) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED);
    push.answer_with(503);
    let d = new_question(&srv).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Retry(_)), "{out:?}");
    push.next().await;
    assert_eq!(stored_subscriptions(&srv).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_on_an_inner_address_is_not_called_unless_allowed() {
    let (_db, srv) = fresh_server().await;
    let push = PushService::start().await;
    let browser = Browser::new();
    let d = new_question(&srv).await;
    let notice = notice(&srv, &d, "ask").await;
    let key = srv.svc.vapid_key().await.unwrap();
    let public_only = WebPushChannel::new(SUBJECT.into(), false);
    // The push service listens on 127.0.0.1, however the endpoint spells it.
    let port = url::Url::parse(&push.endpoint).unwrap().port().unwrap();
    for host in ["127.0.0.1", "127.1", "localhost", "[::ffff:7f00:1]"] {
        let sub = browser.subscription(&format!("https://{host}:{port}/push/x"));
        let PushOutcome::Refused(why) = public_only.push(key, &sub, &notice).await else {
            panic!("{host} was called");
        };
        assert!(why.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"), "{why}");
    }
    assert!(
        push.receiver.requests().is_empty(),
        "the push service was called"
    );
    // Allowed, the same endpoint is called.
    let sub = browser.subscription(&push.endpoint);
    let allowing = WebPushChannel::new(SUBJECT.into(), true);
    assert_eq!(
        allowing.push(key, &sub, &notice).await,
        PushOutcome::Accepted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_naming_an_inner_address_is_refused_unless_allowed() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start_public_only(&db.url).await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    for endpoint in [
        "https://127.1/push/x",
        "https://[::ffff:7f00:1]/push/x",
        "https://10.0.0.7/push/x",
        "https://0.0.0.0/push/x",
    ] {
        let (status, err) = subscribe(&srv, &token, &browser.subscription_json(endpoint)).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{endpoint}: {err}"
        );
        assert_eq!(err["error"]["details"][0]["path"], "endpoint", "{err}");
        let message = err["error"]["details"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"),
            "{message}"
        );
    }
    let (status, err) = subscribe(
        &srv,
        &token,
        &browser.subscription_json("https://push.example.com/x"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{err}");
    srv.stop().await;
}
