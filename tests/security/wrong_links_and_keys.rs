//! A wrong link or key cannot be told apart from nothing: not by what comes back, not by
//! database work, not by time.

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::{Client, Method, StatusCode};
use sayso::http::RateLimit;
use sayso::service::Tokens;
use serde_json::json;
use sqlx::{Connection, Executor};
use uuid::Uuid;

use crate::common::db::fresh_pg_url;
use crate::common::server::{TestServer, s, send};
use crate::support::{
    Db, MakeRequest, MakeToken, PNG, all_look_the_same, no_redirects, random_api_key, random_text,
    random_token, tampered, token_of,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_link_looks_exactly_like_a_link_to_nothing() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start(db.url()).await;
    let h = srv
        .create(json!({"question": "Q", "kind": "bool", "context_image_b64": PNG}))
        .await;
    let real = token_of(s(&h, "web_url")).to_string();
    let inbox = srv.default_inbox().await;
    let feed = token_of(&srv.svc.feed_url(&inbox)).to_string();
    let tokens = Tokens::from_key_hex(&db.server_key_hex().await).unwrap();
    let foreign = Tokens::from_key_hex(&Tokens::generate_key_hex()).unwrap();
    let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();

    // Wrong: made without the server key, or for another purpose. Absent: a genuine link to a
    // decision or inbox that does not exist (as after a deletion).
    let answer_cases = vec![
        (
            "absent: genuine link, no such decision",
            tokens.answer_token(Uuid::now_v7()),
        ),
        ("wrong MAC for an existing decision", tampered(&real)),
        (
            "another server's link to the same id",
            foreign.answer_token(id),
        ),
        ("the inbox's feed token", feed.clone()),
        ("random id and MAC", random_token()),
        ("48 letters", "A".repeat(48)),
        ("short", "x".into()),
        ("long", random_text(300)),
        ("percent-encoded junk", "%ff%00abc".into()),
    ];
    let feed_cases = [
        (
            "absent: genuine link, no such inbox",
            tokens.feed_token(Uuid::now_v7()),
        ),
        ("wrong MAC for the existing inbox", tampered(&feed)),
        (
            "another server's link to the same inbox",
            foreign.feed_token(inbox.id),
        ),
        ("an answer token", real.clone()),
        ("random id and MAC", random_token()),
        ("short", "x".into()),
        ("long", random_text(300)),
    ];
    // A usable subscription (the P-256 base point as the browser's key), so that only the
    // link decides the answer.
    let p256_base_point = [
        "04",
        "6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296",
        "4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5",
    ]
    .concat();
    let point: Vec<u8> = (0..65)
        .map(|i| u8::from_str_radix(&p256_base_point[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let subscription = json!({
        "endpoint": "https://push.example.com/x",
        "keys": {"p256dh": URL_SAFE_NO_PAD.encode(point), "auth": URL_SAFE_NO_PAD.encode([7u8; 16])}
    });
    let client = no_redirects();
    let json_answer = json!({"action": "answer", "value": "yes"});
    let requests: Vec<(&str, MakeRequest)> = vec![
        (
            "GET /d/…",
            Box::new(|t: &str| client.get(srv.url(&format!("/d/{t}")))),
        ),
        (
            "POST /d/… (JSON)",
            Box::new(|t: &str| client.post(srv.url(&format!("/d/{t}"))).json(&json_answer)),
        ),
        (
            "POST /d/… (form)",
            Box::new(|t: &str| {
                client
                    .post(srv.url(&format!("/d/{t}")))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body("value=yes")
            }),
        ),
        (
            "GET /d/…/image",
            Box::new(|t: &str| client.get(srv.url(&format!("/d/{t}/image")))),
        ),
    ];
    for (what, request) in &requests {
        let cases = answer_cases
            .iter()
            .map(|(name, t)| (name.to_string(), request(t)))
            .collect();
        let seen = all_look_the_same(what, cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{what}");
    }
    let feed_requests: Vec<(&str, MakeRequest)> = vec![
        (
            "GET /inbox/…",
            Box::new(|t: &str| client.get(srv.url(&format!("/inbox/{t}")))),
        ),
        (
            "POST /inbox/…/push",
            Box::new(|t: &str| {
                client
                    .post(srv.url(&format!("/inbox/{t}/push")))
                    .json(&subscription)
            }),
        ),
    ];
    for (what, request) in &feed_requests {
        let cases = feed_cases
            .iter()
            .map(|(name, t)| (name.to_string(), request(t)))
            .collect();
        let seen = all_look_the_same(what, cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{what}");
    }
    // Nothing of this reached the decision.
    assert_eq!(srv.get(&id.to_string()).await["status"], "pending");
    drop((requests, feed_requests));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_api_key_looks_exactly_like_no_key() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start(db.url()).await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let id = s(&h, "decision_id").to_string();
    let wrong: Vec<(&str, Option<String>)> = vec![
        ("no Authorization", None),
        (
            "a well-formed key no inbox has",
            Some(format!("Bearer {}", random_api_key())),
        ),
        (
            "the key with one character changed",
            Some(format!("Bearer {}", tampered(&srv.key))),
        ),
        (
            "the key cut short",
            Some(format!("Bearer {}", &srv.key[..20])),
        ),
        ("a key that is not sk_", Some("Bearer not-a-key".into())),
        ("an empty bearer", Some("Bearer ".into())),
        (
            "the key in another scheme",
            Some(format!("Basic {}", srv.key)),
        ),
        (
            "a feed token",
            Some(format!("Bearer {}", token_of(&srv.feed_url().await))),
        ),
        (
            "a 10 KB key",
            Some(format!("Bearer sk_{}", random_text(10_000))),
        ),
    ];
    for (method, path) in [
        (Method::GET, "/v1/decisions".to_string()),
        (Method::POST, "/v1/decisions".to_string()),
        (Method::GET, format!("/v1/decisions/{id}")),
        (Method::GET, format!("/v1/decisions/{}", Uuid::now_v7())),
        (Method::GET, format!("/v1/decisions/{id}/await?timeout_s=1")),
        (Method::POST, format!("/v1/decisions/{id}/cancel")),
        (Method::GET, format!("/v1/decisions/{id}/events")),
        (Method::GET, "/v1/events".to_string()),
        (Method::GET, "/v1/usage".to_string()),
    ] {
        let cases = wrong
            .iter()
            .map(|(name, auth)| {
                let mut req = srv.client.request(method.clone(), srv.url(&path));
                if method == Method::POST {
                    req = req.json(&json!({"question": "Q", "kind": "bool"}));
                }
                if let Some(a) = auth {
                    req = req.header("authorization", a);
                }
                (name.to_string(), req)
            })
            .collect();
        let seen = all_look_the_same(&format!("{method} {path}"), cases).await;
        assert_eq!(seen.status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Nothing was created or cancelled.
    assert_eq!(srv.get(&id).await["status"], "pending");
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    srv.stop().await;
}

/// A link is checked by recomputing its MAC before any database work. Shown without timing:
/// with the decisions and inboxes tables locked by another transaction, every request that
/// reaches the database waits, yet every wrong link is still answered 404 at once. The
/// genuine links, sent first, wait for the lock: proof that the lock holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_link_is_refused_before_the_database_is_asked() {
    let Some(db) = fresh_pg_url().await else {
        return;
    };
    let srv = TestServer::start(&db.url).await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let web_url = s(&h, "web_url").to_string();
    let feed_url = srv.feed_url().await;

    let mut locker = sqlx::PgConnection::connect(&db.url).await.unwrap();
    locker.execute("BEGIN").await.unwrap();
    locker
        .execute("LOCK TABLE decisions, inboxes IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();

    let genuine: Vec<_> = [web_url.clone(), feed_url.clone()]
        .into_iter()
        .map(|url| {
            // The feed link answers 303 once it has bound the device.
            let client = crate::support::no_redirects();
            tokio::spawn(async move { client.get(&url).send().await.map(|r| r.status()) })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let blocked = |g: &[tokio::task::JoinHandle<_>]| g.iter().all(|t| !t.is_finished());
    assert!(
        blocked(&genuine),
        "a genuine link was answered while its table was locked"
    );

    let real = token_of(&web_url);
    let feed = token_of(&feed_url);
    let wrong = [
        format!("/d/{}", tampered(real)),
        format!("/d/{}", random_token()),
        format!("/d/{feed}"),
        "/d/garbage".to_string(),
        format!("/inbox/{}", tampered(feed)),
        format!("/inbox/{}", random_token()),
        format!("/inbox/{real}"),
    ];
    for path in &wrong {
        for post in [false, true] {
            let req = if post {
                srv.client
                    .post(srv.url(path))
                    .json(&json!({"action": "answer", "value": "yes"}))
            } else {
                srv.client.get(srv.url(path))
            };
            let resp = tokio::time::timeout(Duration::from_secs(10), req.send())
                .await
                .unwrap_or_else(|_| panic!("{path} waited for the database"))
                .unwrap();
            // POST /inbox/… has no route: 405 before any handler, which is fine too.
            assert!(
                matches!(
                    resp.status(),
                    StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                ),
                "{path}: {}",
                resp.status()
            );
        }
    }
    assert!(
        blocked(&genuine),
        "a genuine link was answered while its table was locked"
    );
    locker.execute("ROLLBACK").await.unwrap();
    for (g, want) in genuine
        .into_iter()
        .zip([StatusCode::OK, StatusCode::SEE_OTHER])
    {
        assert_eq!(g.await.unwrap().unwrap(), want);
    }
    locker.close().await.unwrap();
    srv.stop().await;
}

/// Timing, as a second view of the same property. It protects against a link check whose
/// cost depends on what the link names: a lookup of the id before the MAC check (or an early
/// exit on the first wrong MAC byte at a scale a network could show) would let a guesser learn
/// which decision ids exist. The three kinds of wrong link are sent interleaved, so load on the
/// machine falls on all alike; their medians must agree within a factor of 3, far wider than
/// the noise of this shared machine, so the test does not fail by chance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_links_take_the_same_time_whether_or_not_the_decision_exists() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start_rate_limited(db.url(), RateLimit::OFF).await;
    let mut real = Vec::new();
    for i in 0..20 {
        let h = srv
            .create(json!({"question": format!("Q{i}"), "kind": "bool", "notify": "none"}))
            .await;
        real.push(token_of(s(&h, "web_url")).to_string());
    }
    let client = Client::new();
    let classes: [(&str, MakeToken); 3] = [
        (
            "wrong MAC, existing decision",
            Box::new(|i| tampered(&real[i % real.len()])),
        ),
        ("wrong MAC, no such decision", Box::new(|_| random_token())),
        ("garbage", Box::new(|i| random_text(1 + i % 80))),
    ];
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for round in 0..330 {
        let mut order = [0, 1, 2];
        order.rotate_left(round % 3);
        for c in order {
            let url = srv.url(&format!("/d/{}", (classes[c].1)(round)));
            let start = Instant::now();
            let resp = client.get(&url).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::NOT_FOUND);
            resp.bytes().await.unwrap();
            // The first rounds warm up connections and caches.
            if round >= 30 {
                samples[c].push(start.elapsed());
            }
        }
    }
    let medians: Vec<Duration> = samples
        .iter_mut()
        .map(|s| {
            s.sort();
            s[s.len() / 2]
        })
        .collect();
    for (i, (name, _)) in classes.iter().enumerate() {
        eprintln!("median {name}: {:?}", medians[i]);
    }
    let (lo, hi) = (medians.iter().min().unwrap(), medians.iter().max().unwrap());
    assert!(
        hi.as_secs_f64() <= 3.0 * lo.as_secs_f64(),
        "wrong links differ in cost by what they name: {medians:?}"
    );
    srv.stop().await;
}
