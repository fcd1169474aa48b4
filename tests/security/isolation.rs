//! One inbox's key sees nothing of another inbox, over the API and MCP.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::common::mcp::{Client, call, connect_with};
use crate::common::server::{TestServer, s, send};
use crate::support::{Db, all_look_the_same};

/// rmcp's client on the server's `/mcp` with `key`.
async fn mcp(srv: &TestServer, key: &str) -> Client {
    connect_with(srv, key).await.expect("MCP connected")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_inboxs_key_finds_nothing_on_sqlite() {
    let db = Db::fresh(false).await.unwrap();
    another_inboxs_key_finds_nothing(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_inboxs_key_finds_nothing_on_postgres() {
    let Some(db) = Db::fresh(true).await else {
        return;
    };
    another_inboxs_key_finds_nothing(&db).await;
}

async fn another_inboxs_key_finds_nothing(db: &Db) {
    let srv = TestServer::start(db.url()).await;
    let owner = srv.key.clone();
    let stranger = srv.other_inbox_key("stranger").await;
    let h = srv
        .create(json!({"question": "Ship it?", "kind": "bool", "project": "p"}))
        .await;
    let id = s(&h, "decision_id").to_string();
    let todo = srv
        .create(json!({"question": "Water the plants", "kind": "todo"}))
        .await;
    let todo_id = s(&todo, "decision_id").to_string();
    let nobody = Uuid::now_v7().to_string();
    let (_, before) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    let (_, trail_before) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;

    // The stranger's streams are open before anything resolves.
    let mut stranger_events = srv
        .client
        .get(srv.url("/v1/events"))
        .bearer_auth(&stranger)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger_events.status(), StatusCode::OK);

    // Each call on the owner's decision is answered as for an id that does not exist.
    for (method, path) in [
        (Method::GET, "/v1/decisions/{}"),
        (Method::GET, "/v1/decisions/{}/await?timeout_s=1"),
        (Method::POST, "/v1/decisions/{}/cancel"),
        (Method::GET, "/v1/decisions/{}/events"),
    ] {
        let cases = [&id, &todo_id, &nobody]
            .iter()
            .map(|target| {
                let url = srv.url(&path.replace("{}", target));
                let req = srv
                    .client
                    .request(method.clone(), url)
                    .bearer_auth(&stranger)
                    .json(&json!({"reason": "mine now"}));
                (format!("{method} {path} on {target}"), req)
            })
            .collect();
        let seen = all_look_the_same(&format!("{method} {path}"), cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{method} {path}");
        let body: Value = serde_json::from_slice(&seen.body).unwrap();
        assert_eq!(body["error"]["code"], "not_found");
    }
    for query in [
        "",
        "?status=pending",
        "?kind=todo",
        "?project=p",
        "?limit=200",
    ] {
        let (status, list) = send(
            srv.client
                .get(srv.url(&format!("/v1/decisions{query}")))
                .bearer_auth(&stranger),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(list["items"], json!([]), "{query}: {list}");
    }
    let (_, usage) = send(srv.client.get(srv.url("/v1/usage")).bearer_auth(&stranger)).await;
    let (_, owner_usage) = send(srv.req(Method::GET, "/v1/usage")).await;
    assert_ne!(usage, owner_usage, "usage is not per inbox: {usage}");
    assert!(!usage.to_string().contains(&id));

    // MCP: the same, tool by tool.
    let client = mcp(&srv, &stranger).await;
    for (tool, args) in [
        ("get_decision", json!({})),
        ("await_decision", json!({"timeout_s": 1})),
        ("cancel_decision", json!({"reason": "mine now"})),
    ] {
        let mut results = Vec::new();
        for target in [&id, &todo_id, &nobody] {
            let mut args = args.clone();
            args["decision_id"] = json!(target);
            let r = call(&client, tool, args).await;
            assert_eq!(r.is_error, Some(true), "{tool} on {target}: {r:?}");
            results.push(serde_json::to_value(&r).unwrap());
        }
        assert_eq!(
            results[0], results[2],
            "{tool}: the owner's decision is told apart"
        );
        assert_eq!(
            results[1], results[2],
            "{tool}: the owner's to-do is told apart"
        );
        assert!(
            results[0].to_string().contains("not_found"),
            "{}",
            results[0]
        );
        assert!(!results[0].to_string().contains("forbidden"));
    }
    let todos = call(&client, "list_todos", json!({})).await;
    assert!(
        !serde_json::to_string(&todos)
            .unwrap()
            .contains("Water the plants"),
        "{todos:?}"
    );
    client.cancel().await.unwrap();
    let owner_client = mcp(&srv, &owner).await;
    let todos = call(&owner_client, "list_todos", json!({})).await;
    assert!(
        serde_json::to_string(&todos)
            .unwrap()
            .contains("Water the plants")
    );
    owner_client.cancel().await.unwrap();

    // Nothing changed: the decision and its audit trail are as they were.
    let (_, after) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    assert_eq!(after, before);
    let (_, trail_after) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert_eq!(trail_after, trail_before);
    assert_eq!(srv.get(&todo_id).await["status"], "pending");

    // The owner's answer reaches the owner's stream, never the stranger's.
    let mut owner_events = srv
        .client
        .get(srv.url("/v1/events"))
        .bearer_auth(&owner)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    srv.answer_ok(s(&h, "web_url"), json!({"value": "yes"}))
        .await;
    let mut seen_by_owner = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !seen_by_owner.contains(&id) {
        let chunk = tokio::time::timeout_at(deadline, owner_events.chunk())
            .await
            .expect("the owner's stream got the resolution")
            .unwrap()
            .expect("stream open");
        seen_by_owner.push_str(&String::from_utf8_lossy(&chunk));
    }
    let mut seen_by_stranger = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while let Ok(chunk) = tokio::time::timeout_at(deadline, stranger_events.chunk()).await {
        match chunk.unwrap() {
            Some(c) => seen_by_stranger.push_str(&String::from_utf8_lossy(&c)),
            None => break,
        }
    }
    assert!(
        !seen_by_stranger.contains("decision.resolved") && !seen_by_stranger.contains(&id),
        "{seen_by_stranger}"
    );
    srv.stop().await;
}
