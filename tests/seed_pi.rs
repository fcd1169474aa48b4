//! pi's `ask_user` (docs/SEEDS.md) at `/mcp/pi`, through the official
//! Python MCP SDK, answered on the page as a browser posts it: the document's example call
//! gives the document's example results.

mod common;

use common::mcp_py::{PyMcp, pending_web_url, post_page};
use common::seeds::pi::{ANSWERS, DATABASE, NAME, example, result};
use common::server::{s, send};
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documents_example_gives_its_result_now_and_later() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/pi").await else {
        return;
    };
    py.ask_tools("ask_user").await;
    py.start("ask_user", example()).await;
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &ANSWERS).await;
    let r = py.result().await;
    let expected = result();
    assert_eq!(r.structured, expected);
    assert_eq!(r.text, serde_json::to_string_pretty(&expected).unwrap());
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    let d = &list["items"][0];
    assert_eq!(d["metadata"], json!({"source": "project-setup"}));
    let later = py
        .call(
            "await_decision",
            json!({"decision_id": s(d, "decision_id")}),
        )
        .await;
    assert_eq!(later.structured, expected);
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_is_a_custom_answer_and_a_cancel_answers_nothing() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/pi").await else {
        return;
    };
    let mut one = example();
    one["questions"].as_array_mut().unwrap().truncate(1);
    py.start("ask_user", one.clone()).await;
    let web_url = pending_web_url(&srv).await;
    post_page(
        &srv,
        &web_url,
        &[
            (DATABASE, "__other__"),
            (&format!("other:{DATABASE}"), "I want to use DynamoDB"),
        ],
    )
    .await;
    let r = py.result().await;
    assert_eq!(
        r.structured,
        json!({"answered": true, "answers": [{"question": DATABASE, "answer": "I want to use DynamoDB", "wasCustom": true}]})
    );

    py.start("ask_user", one).await;
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[("action", "decline")]).await;
    let r = py.result().await;
    assert_eq!(
        r.structured,
        json!({"answered": false, "answers": [], "cancelled": true})
    );
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_ends_first_says_questions_pending_and_how_to_resume() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/pi").await else {
        return;
    };
    let mut call = example();
    call["wait_s"] = json!(1);
    let r = py.call("ask_user", call).await;
    assert!(!r.is_error);
    assert!(
        r.text
            .starts_with("Questions pending. User input required.\n\n"),
        "{}",
        r.text
    );
    let id = s(&r.structured, "decision_id").to_string();
    let web_url = s(&r.structured, "web_url").to_string();
    assert!(r.text.contains(&web_url), "{}", r.text);
    assert!(
        r.text
            .contains(&format!("Questions saved to: decision {id}"))
    );
    // Several questions are answered all together or not at all.
    let page = srv.page_text(&web_url).await;
    assert_eq!(page.matches("<form id=\"answer\"").count(), 1);
    post_page(&srv, &web_url, &[(DATABASE, "SQLite")]).await;
    let (_, d) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    assert_eq!(d["status"], "pending", "half an answer is refused");

    py.start("await_decision", json!({"decision_id": id})).await;
    post_page(&srv, &web_url, &[(DATABASE, "SQLite"), (NAME, "billing")]).await;
    let r = py.result().await;
    assert_eq!(r.structured["answered"], true);
    assert_eq!(r.structured["answers"][0]["selectedOption"], "SQLite");
    assert_eq!(r.structured["answers"][1]["answer"], "billing");
    py.finish().await;
}
