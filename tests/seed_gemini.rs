//! gemini-cli's `ask_user` (docs/SEEDS.md) at `/mcp/gemini`, listed as
//! `ask_the_user` (gemini-cli's headless mode drops any tool named `ask_user`), through the
//! official Python MCP SDK, answered on the page as a browser posts it.

mod common;

use common::mcp_py::{PyMcp, pending_web_url, post_page};
use common::seeds::gemini::{ANSWERS, RESULT, questions};
use common::server::{s, send};
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_is_listed_with_gemini_clis_schema() {
    let Some((_db, _srv, mut py)) = PyMcp::on_fresh_server("/mcp/gemini").await else {
        return;
    };
    let tools = py.ask_tools("ask_the_user").await;
    let item = &tools[0]["inputSchema"]["properties"]["questions"]["items"];
    assert_eq!(item["required"], json!(["question", "header", "type"]));
    assert_eq!(item["properties"]["header"]["maxLength"], 16);
    assert_eq!(
        item["properties"]["type"]["enum"],
        json!(["choice", "text", "yesno"])
    );
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_come_back_keyed_by_question_index() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/gemini").await else {
        return;
    };
    py.start("ask_the_user", json!({"questions": questions()}))
        .await;
    let web_url = pending_web_url(&srv).await;
    let page = srv.page_text(&web_url).await;
    assert!(
        page.contains("placeholder=\"Another method\""),
        "the Other box's placeholder"
    );
    assert!(
        page.contains("placeholder=\"e.g. orders\""),
        "the text field's placeholder"
    );
    assert!(page.contains("class=\"chip\">Auth method"));
    assert!(
        !page.contains("name=\"note:"),
        "gemini's result has no place for notes"
    );
    post_page(&srv, &web_url, &ANSWERS).await;
    let r = py.result().await;
    assert!(!r.is_error, "{}", r.text);
    let expected = RESULT;
    assert_eq!(r.text, expected);
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    let id = s(&list["items"][0], "decision_id").to_string();
    let later = py.call("get_decision", json!({"decision_id": id})).await;
    assert_eq!(later.text, expected);
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documents_refusals_and_its_dismissal() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/gemini").await else {
        return;
    };
    let mut q = questions();
    q[0]["header"] = json!("Authentication method");
    let r = py.call("ask_the_user", json!({"questions": q})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text,
        "params/questions/0/header must NOT have more than 16 characters"
    );
    let mut q = questions();
    q[3]["options"] = json!([{"label": "eu-west", "description": "Ireland"}]);
    let r = py.call("ask_the_user", json!({"questions": q})).await;
    assert_eq!(
        r.text,
        "Question 4: type='choice' requires 'options' array with 2-4 items."
    );
    let mut q = questions();
    q[0]["options"][1] = json!({"label": "API keys"});
    let r = py.call("ask_the_user", json!({"questions": q})).await;
    assert_eq!(
        r.text,
        "Question 1, option 2: 'description' is required and must be a string."
    );

    py.start("ask_the_user", json!({"questions": questions()}))
        .await;
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[("action", "decline")]).await;
    let r = py.result().await;
    assert!(!r.is_error);
    assert_eq!(r.text, "User dismissed ask_user dialog without answering.");
    py.finish().await;
}
