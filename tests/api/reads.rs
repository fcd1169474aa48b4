//! A decision read again and again, as an agent polls it: each read shows the decision as it
//! is now, however many reads of it came before (the server keeps the view of an unchanged
//! row; nothing it keeps may outlive a change, an expiry or a key).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::common::server::{TestServer, s, send};

pub async fn each_read_shows_the_decision_as_it_is_now(srv: &TestServer) {
    // An answer after many reads shows at once, and stays shown.
    let h = srv
        .create(json!({"question": "Ship it?", "kind": "bool"}))
        .await;
    let id = s(&h, "decision_id");
    let first = srv.get(id).await;
    assert_eq!(first["status"], "pending", "{first}");
    for _ in 0..3 {
        assert_eq!(
            srv.get(id).await,
            first,
            "an unchanged decision reads the same"
        );
    }
    srv.answer_ok(s(&h, "web_url"), json!({"value": true}))
        .await;
    for _ in 0..2 {
        let now = srv.get(id).await;
        assert_eq!(now["status"], "answered", "{now}");
        assert_eq!(now["outcome"], true, "{now}");
        assert_eq!(now["web_url"], first["web_url"]);
    }

    // A cancel, the same.
    let h = srv
        .create(json!({"question": "Name it?", "kind": "text"}))
        .await;
    let id = s(&h, "decision_id");
    assert_eq!(srv.get(id).await["status"], "pending");
    let (status, body) = send(srv.req(Method::POST, &format!("/v1/decisions/{id}/cancel"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(srv.get(id).await["status"], "cancelled");

    // Another inbox's key finds nothing, however often the decision was read.
    let other = srv.other_inbox_key("elsewhere").await;
    let (status, err) = send(
        srv.client
            .get(srv.url(&format!("/v1/decisions/{id}")))
            .bearer_auth(&other),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
}

pub async fn a_decision_read_past_its_expiry_is_never_pending(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Deploy?", "kind": "bool", "ttl_seconds": 10, "default_outcome": false}))
        .await;
    let id = s(&h, "decision_id");
    let expires_at = OffsetDateTime::parse(s(&h, "expires_at"), &Rfc3339).unwrap();
    // Read it as a poller does until its time is up: a read made wholly before it is
    // pending, and every read begun after it is expired, whether the sweeper got there first
    // or the read itself settles it.
    let mut after_expiry = 0;
    while after_expiry < 3 {
        let asked = OffsetDateTime::now_utc();
        let d = srv.get(id).await;
        let answered = OffsetDateTime::now_utc();
        if asked > expires_at {
            assert_eq!(d["status"], "expired", "{d}");
            assert_eq!(d["outcome"], false, "{d}");
            assert_eq!(d["outcome_source"], "default", "{d}");
            after_expiry += 1;
        } else if answered < expires_at {
            assert_eq!(d["status"], "pending", "{d}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
