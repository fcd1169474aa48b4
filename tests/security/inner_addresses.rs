//! A callback or completion URL naming an inner address is refused when the decision is made.

use crate::common::db::fresh_sqlite_url;
use crate::common::server::{TestServer, send};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_url_naming_an_inner_address_is_refused_at_create() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start_public_only(&db.url).await;
    for url in [
        "http://0/hook",
        "http://0.0.0.0:8080/hook",
        "http://[::]/hook",
        "http://127.1/hook",
        "http://[::ffff:7f00:1]/hook",
        "https://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let (status, body) = send(srv.req(reqwest::Method::POST, "/v1/decisions").json(
            &serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none", "callback_url": url}),
        ))
        .await;
        assert_eq!(
            status,
            reqwest::StatusCode::UNPROCESSABLE_ENTITY,
            "{url}: {body}"
        );
        let details = body["error"]["details"].to_string();
        assert!(
            details.contains("callback_url") && details.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"),
            "{url}: {body}"
        );
    }
    // A name that leads inward is accepted with a warning: it is checked again when sent.
    let h = srv
        .create(
            serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
            "callback_url": "http://localhost:9/hook"}),
        )
        .await;
    let warnings = h["warnings"].to_string();
    assert!(
        warnings.contains("localhost resolves to the inner address"),
        "{h}"
    );
    // A public one passes without a word.
    let h = srv
        .create(
            serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
            "callback_url": "https://8.8.8.8/hook"}),
        )
        .await;
    assert_eq!(h["warnings"], serde_json::json!([]), "{h}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_url_naming_an_inner_address_is_refused_at_create() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start_public_only(&db.url).await;
    for url in [
        "http://127.0.0.1:8080/restate/awakeables/a/resolve",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let (status, body) = send(srv.req(reqwest::Method::POST, "/v1/decisions").json(
            &serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
                "completion": {"url": url}}),
        ))
        .await;
        assert_eq!(
            status,
            reqwest::StatusCode::UNPROCESSABLE_ENTITY,
            "{url}: {body}"
        );
        assert_eq!(
            body["error"]["details"][0]["path"], "completion.url",
            "{body}"
        );
    }
    let h = srv
        .create(
            serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
            "completion": {"url": "http://localhost:9/resolve"}}),
        )
        .await;
    assert!(
        h["warnings"]
            .to_string()
            .contains("completion.url: localhost resolves to the inner address"),
        "{h}"
    );
    srv.stop().await;
}
