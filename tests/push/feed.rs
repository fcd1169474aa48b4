//! What the feed offers: the push button, the service worker, and the subscribe endpoint's
//! refusals.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use reqwest::StatusCode;
use serde_json::json;

use crate::browser::Browser;
use crate::common::server::fresh_server;
use crate::support::{feed_token, subscribe};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_offers_push_with_the_servers_key_and_no_inline_script() {
    let (_db, srv) = fresh_server().await;
    let token = feed_token(&srv).await;
    let (resp, _) = crate::common::server::open_feed(&srv.url(&format!("/inbox/{token}"))).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    for directive in [
        "script-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let html = resp.text().await.unwrap();
    let key = srv.svc.vapid_public_key().await.unwrap();
    assert_eq!(B64.decode(&key).unwrap().len(), 65);
    assert!(
        html.contains(r#"<section id="push" hidden>"#),
        "hidden without JS"
    );
    assert!(html.contains(&format!(r#"data-key="{key}""#)), "{html}");
    // The bound device's address: the page never carries the feed link.
    assert!(html.contains(r#"data-url="/inbox/push""#), "{html}");
    assert!(!html.contains(&token));
    assert!(html.contains(">Notify me on this device</button>"));
    assert!(html.contains(r#"<script src="/static/feed.js" defer></script>"#));
    // Adding a passkey on this device is the only other script.
    assert!(html.contains(r#"<script src="/static/passkey.js" defer></script>"#));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "no other script, none inline"
    );
    // The key is made once and kept.
    assert_eq!(srv.svc.vapid_public_key().await.unwrap(), key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_worker_is_served_from_the_root() {
    let (_db, srv) = fresh_server().await;
    for (path, ty) in [
        ("/sw.js", "text/javascript"),
        ("/static/feed.js", "text/javascript"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let resp = srv.client.get(srv.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let got = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(got.starts_with(ty), "{path}: {got}");
        assert!(!resp.text().await.unwrap().is_empty());
    }
    let sw = srv.client.get(srv.url("/sw.js")).send().await.unwrap();
    assert_eq!(sw.headers()["cache-control"], "no-cache");
    let js = sw.text().await.unwrap();
    for event in [
        "\"push\"",
        "\"notificationclick\"",
        "getNotifications",
        "showNotification",
    ] {
        assert!(js.contains(event), "{event}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_subscription_gets_422_naming_each_problem() {
    let (_db, srv) = fresh_server().await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    let cases = [
        (
            browser.subscription_json("http://push.example.com/x"),
            vec!["endpoint"],
        ),
        (
            json!({"endpoint": "https://push.example.com/x",
                   "keys": {"p256dh": B64.encode([4u8; 64]), "auth": B64.encode([1u8; 15])}}),
            vec!["keys.p256dh", "keys.auth"],
        ),
        (
            json!({"endpoint": "https://push.example.com/x"}),
            vec!["keys.p256dh", "keys.auth"],
        ),
        (json!("https://push.example.com/x"), vec![""]),
    ];
    for (body, paths) in cases {
        let (status, err) = subscribe(&srv, &token, &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {err}");
        assert_eq!(err["error"]["code"], "validation_failed");
        let got: Vec<&str> = err["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        assert_eq!(got, paths, "{body}");
    }
    let resp = srv
        .client
        .post(srv.url(&format!("/inbox/{token}/push")))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_feed_link_gets_404_and_another_site_gets_403() {
    let (_db, srv) = fresh_server().await;
    let body = Browser::new().subscription_json("https://push.example.com/x");
    let (status, err) = subscribe(&srv, &"A".repeat(48), &body).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(err["error"]["code"], "not_found");

    let token = feed_token(&srv).await;
    let resp = srv
        .client
        .post(srv.url(&format!("/inbox/{token}/push")))
        .header("sec-fetch-site", "cross-site")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}
