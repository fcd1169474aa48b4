//! No input, however malformed, gets a 500 or a dropped connection: a corpus thrown at
//! create, at answer and at the query strings.

mod common;

use common::server::{TestServer, fresh_server, s};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut c: Vec<(String, Vec<u8>)> = Vec::new();
    let mut raw = |name: &str, body: Vec<u8>| c.push((name.to_string(), body));
    raw("empty", b"".to_vec());
    raw("whitespace", b"   \n".to_vec());
    raw("not json", b"deploy please".to_vec());
    raw("truncated", br#"{"question": "Q", "kind": "bo"#.to_vec());
    raw(
        "trailing garbage",
        br#"{"question": "Q", "kind": "bool"} x"#.to_vec(),
    );
    raw(
        "invalid utf-8",
        b"{\"question\": \"\xff\xfe\", \"kind\": \"bool\"}".to_vec(),
    );
    raw(
        "lone surrogate",
        br#"{"question": "\ud800", "kind": "bool"}"#.to_vec(),
    );
    raw(
        "nul bytes",
        b"{\"question\": \"a\0b\", \"kind\": \"bool\"}".to_vec(),
    );
    raw("array", b"[1,2,3]".to_vec());
    raw("string", br#""question""#.to_vec());
    raw("null", b"null".to_vec());
    raw("number", b"1e999".to_vec());
    raw("deep arrays", "[".repeat(100_000).into_bytes());
    raw(
        "deep objects",
        format!("{}1{}", "{\"a\":".repeat(5000), "}".repeat(5000)).into_bytes(),
    );
    raw(
        "deep metadata within the parser's limit",
        format!(
            r#"{{"question":"Q","kind":"bool","metadata":{{"m":{}1{}}}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        )
        .into_bytes(),
    );
    let mut structured = vec![
        (
            "wrong types everywhere",
            json!({"question": [], "kind": 1, "options": "a,b", "multi": "yes", "ttl_minutes": "60", "metadata": "x", "attachments": {"name": 1}}),
        ),
        (
            "huge question",
            json!({"question": "q".repeat(1_000_000), "kind": "bool"}),
        ),
        (
            "huge option list",
            json!({"question": "Q", "kind": "choose", "options": (0..10_000).map(|i| format!("o{i}")).collect::<Vec<_>>()}),
        ),
        (
            "huge numbers",
            json!({"question": "Q", "kind": "bool", "ttl_minutes": 1e300, "ttl_seconds": -9.2e18}),
        ),
        (
            "u64 max",
            json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "recommended": u64::MAX}),
        ),
        (
            "negative index",
            json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "recommended": -1}),
        ),
        (
            "bad base64",
            json!({"question": "Q", "kind": "bool", "context_image_b64": "@@@@"}),
        ),
        (
            "base64 of text",
            json!({"question": "Q", "kind": "bool", "context_image_b64": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"}),
        ),
        (
            "truncated png",
            json!({"question": "Q", "kind": "bool", "context_image_b64": "iVBORw0KGgo="}),
        ),
        (
            "data url of svg",
            json!({"question": "Q", "kind": "bool", "context_image_b64": "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="}),
        ),
        (
            "form of objects",
            json!({"question": "Q", "kind": "form", "schema": {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}}}),
        ),
        (
            "form schema not an object",
            json!({"question": "Q", "kind": "form", "schema": "object"}),
        ),
        (
            "form with 1000 fields",
            json!({"question": "Q", "kind": "form", "schema": {"type": "object", "properties": (0..1000).map(|i| (format!("f{i}"), json!({"type": "string"}))).collect::<serde_json::Map<_, _>>()}}),
        ),
        (
            "questions not a list",
            json!({"question": "Q", "kind": "form", "questions": {"q": 1}}),
        ),
        (
            "questions of nulls",
            json!({"question": "Q", "kind": "form", "questions": [null, null]}),
        ),
        (
            "all nulls",
            json!({"question": null, "kind": null, "options": null, "schema": null, "ttl_minutes": null}),
        ),
        (
            "attachment urls",
            json!({"question": "Q", "kind": "bool", "attachments": [{"name": "a", "url": "http://"}, {"name": "b", "url": "data:text/html,hi"}, {"url": 3}]}),
        ),
        (
            "control characters",
            json!({"question": "\u{0}\u{1b}[31m\u{202e}", "kind": "bool"}),
        ),
        (
            "default outcome of the wrong shape",
            json!({"question": "Q", "kind": "form", "schema": {"properties": {"a": {"type": "string"}}}, "default_outcome": [1, {"a": []}]}),
        ),
    ];
    for (name, v) in structured.drain(..) {
        c.push((name.to_string(), serde_json::to_vec(&v).unwrap()));
    }
    c
}

async fn expect_clean_refusal(name: &str, status: StatusCode, body: &Value) {
    assert!(
        status.is_success() || status.is_client_error(),
        "{name}: got {status} {body}"
    );
    if status.is_client_error() {
        assert!(
            body["error"]["code"].is_string() && body["error"]["message"].is_string(),
            "{name}: not the error shape: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_malformed_create_gets_a_500_or_a_dropped_connection_on_sqlite() {
    let db = common::db::fresh_sqlite_url();
    throw_corpus_at_create(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_malformed_create_gets_a_500_or_a_dropped_connection_on_postgres() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    throw_corpus_at_create(&db.url).await;
}

async fn throw_corpus_at_create(database_url: &str) {
    let srv = TestServer::start(database_url).await;
    for (name, body) in corpus() {
        let resp = srv
            .client
            .post(srv.url("/v1/decisions"))
            .bearer_auth(&srv.key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{name}: connection failed: {e}"));
        let status = resp.status();
        let body: Value = resp
            .json()
            .await
            .unwrap_or_else(|e| panic!("{name}: body is not JSON: {e}"));
        expect_clean_refusal(&name, status, &body).await;
    }
    // The server is still fine.
    let h = srv
        .create(json!({"question": "still here?", "kind": "bool"}))
        .await;
    assert!(h["decision_id"].is_string());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_malformed_answer_or_query_gets_a_500() {
    let (_db, srv) = fresh_server().await;
    let kinds = [
        json!({"question": "Q", "kind": "bool"}),
        json!({"question": "Q", "kind": "choose", "multi": true, "options": ["a", "b"]}),
        json!({"question": "Q", "kind": "form", "schema": {"properties": {"n": {"type": "number"}, "t": {"type": "array", "items": {"type": "string", "enum": ["x"]}}}}}),
        json!({"question": "Q", "kind": "todo"}),
    ];
    let answers = [
        json!(null),
        json!([]),
        json!({"action": "explode"}),
        json!({"action": 1}),
        json!({"value": {"n": "1e999", "t": "x"}}),
        json!({"value": {"n": [], "t": [1, null, {}]}}),
        json!({"value": [[[[]]]]}),
        json!({"value": "a", "other": 5, "remark": {}}),
        json!({"value": "q".repeat(60_000)}),
    ];
    for create in &kinds {
        let h = srv.create(create.clone()).await;
        for a in &answers {
            let (status, body) = srv.answer(s(&h, "web_url"), a.clone()).await;
            expect_clean_refusal(&format!("{create} ← {a}"), status, &body).await;
        }
    }
    for path in [
        "/v1/decisions?limit=-1&cursor=%ff&status=%00",
        "/v1/decisions/not-a-uuid",
        "/v1/decisions/%ff%fe",
        "/v1/decisions/00000000-0000-0000-0000-000000000000/await?timeout_s=99999999999999999999",
        "/d/%ff",
        "/d/",
        "/nowhere",
    ] {
        let (status, body) =
            common::server::send(srv.client.get(srv.url(path)).bearer_auth(&srv.key)).await;
        assert!(status.is_client_error(), "{path}: {status} {body}");
    }
    srv.stop().await;
}
