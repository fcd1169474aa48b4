//! Claude Code's `AskUserQuestion` (docs/SEEDS.md): at
//! `/mcp/claude` under that name and at `/mcp` as `ask_user_question`, through the official
//! Python MCP SDK, answered on the page as a browser posts it.

mod common;

use common::mcp_py::{PyMcp, pending_web_url, post_page};
use common::server::{TestServer, fresh_server, s, send};
use reqwest::Method;
use serde_json::{Value, json};

fn questions() -> Value {
    json!([
        {
            "question": "Which layout should the dashboard use?",
            "header": "Layout",
            "options": [
                {"label": "Sidebar", "description": "Navigation on the left", "preview": "<div onclick=\"steal()\"><b>nav</b> | content</div>"},
                {"label": "Top bar", "description": "Navigation across the top", "preview": "```\n[nav]\ncontent\n```"}
            ],
            "multiSelect": false
        },
        {
            "question": "Which widgets should it show?",
            "header": "Widgets",
            "options": [
                {"label": "Revenue", "description": "Monthly revenue"},
                {"label": "Signups", "description": "New accounts"},
                {"label": "Errors", "description": "Error rate"}
            ],
            "multiSelect": true
        }
    ])
}

async fn pending_count(srv: &TestServer) -> usize {
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions?status=pending")).await;
    list["items"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_is_listed_under_claude_codes_name_with_its_schema() {
    let Some((_db, _srv, mut py)) = PyMcp::on_fresh_server("/mcp/claude").await else {
        return;
    };
    let tools = py.ask_tools("AskUserQuestion").await;
    let q = &tools[0]["inputSchema"]["properties"]["questions"];
    assert_eq!(
        (q["minItems"].as_u64(), q["maxItems"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(q["items"]["properties"]["header"]["maxLength"], 12);
    assert_eq!(q["items"]["properties"]["options"]["minItems"], 2);
    assert_eq!(q["items"]["properties"]["options"]["maxItems"], 4);
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_with_a_preview_and_notes_read_as_format_answers_for_model() {
    let (_db, srv) = fresh_server().await;
    preview_and_notes(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_with_a_preview_and_notes_read_the_same_on_postgresql() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let srv = TestServer::start(&db.url).await;
    preview_and_notes(&srv).await;
}

/// The questions answered on the page with a preview picked, Other typed and a note.
async fn preview_and_notes(srv: &TestServer) {
    let Some(mut py) = PyMcp::connect(srv, "/mcp/claude").await else {
        return;
    };
    py.start(
        "AskUserQuestion",
        json!({"questions": questions(), "metadata": {"source": "dashboard"}}),
    )
    .await;
    let web_url = pending_web_url(srv).await;
    let page = srv.page_text(&web_url).await;
    assert!(page.contains("class=\"chip\">Layout"), "the header chip");
    assert!(
        page.contains("<b>nav</b>"),
        "an HTML preview is shown as markup"
    );
    assert!(!page.contains("steal()"), "never its script");
    assert!(page.contains("name=\"note:Which widgets should it show?\""));
    post_page(
        srv,
        &web_url,
        &[
            ("Which layout should the dashboard use?", "Top bar"),
            ("Which widgets should it show?", "Revenue"),
            ("Which widgets should it show?", "__other__"),
            ("other:Which widgets should it show?", "Churn"),
            (
                "note:Which widgets should it show?",
                "revenue is the one that matters",
            ),
        ],
    )
    .await;
    let r = py.result().await;
    assert!(!r.is_error, "{}", r.text);
    let expected = "User has answered your questions: \
        \"Which layout should the dashboard use?\"=\"Top bar\" selected preview:\n```\n[nav]\ncontent\n```, \
        \"Which widgets should it show?\"=\"Revenue, Churn\" user notes: revenue is the one that matters. \
        You can now continue with the user's answers in mind.";
    assert_eq!(r.text, expected);
    // The text alone: Claude Code hands its model structured content in place of the text.
    assert!(
        r.structured.is_null(),
        "no structured content on /mcp/claude: {}",
        r.structured
    );
    // Later reads, on this endpoint and on /mcp, return the same.
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    let d = &list["items"][0];
    assert_eq!(d["metadata"], json!({"source": "dashboard"}));
    let id = s(d, "decision_id").to_string();
    let later = py.call("get_decision", json!({"decision_id": id})).await;
    assert_eq!(later.text, expected);
    py.finish().await;
    let Some(mut hosted) = PyMcp::connect(srv, "/mcp").await else {
        return;
    };
    let later = hosted
        .call("await_decision", json!({"decision_id": id}))
        .await;
    assert_eq!(later.text, expected);
    hosted.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_given_in_the_call_return_at_once_without_asking() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp").await else {
        return;
    };
    let r = py
        .call(
            "ask_user_question",
            json!({
                "questions": questions(),
                "answers": {"Which layout should the dashboard use?": "Sidebar"},
                "annotations": {"Which layout should the dashboard use?": {"notes": "as before"}}
            }),
        )
        .await;
    assert_eq!(
        r.text,
        "User has answered your questions: \"Which layout should the dashboard use?\"=\"Sidebar\" \
         user notes: as before. You can now continue with the user's answers in mind."
    );
    assert_eq!(pending_count(&srv).await, 0, "nobody was asked");
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documents_refusals_and_its_decline() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/claude").await else {
        return;
    };
    let mut q = questions();
    q[0]["header"] = json!("Dashboard layout");
    let r = py.call("AskUserQuestion", json!({"questions": q})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text,
        "header for \"Which layout should the dashboard use?\" exceeds 12 chars"
    );
    let five: Vec<Value> = (0..5)
        .map(|i| json!({"question": format!("Q{i}?"), "header": "H", "options": [{"label": "a", "description": ""}, {"label": "b", "description": ""}]}))
        .collect();
    let r = py.call("AskUserQuestion", json!({"questions": five})).await;
    assert_eq!(r.text, "At most 4 questions allowed");
    let mut q = questions();
    q[1]["options"] = json!([{"label": "Revenue", "description": ""}]);
    let r = py.call("AskUserQuestion", json!({"questions": q})).await;
    assert_eq!(
        r.text,
        "Question \"Which widgets should it show?\" must have 2-4 options"
    );
    let mut q = questions();
    q[0]["options"][0]["preview"] = json!("<div>x</div><script>alert(1)</script>");
    let r = py.call("AskUserQuestion", json!({"questions": q})).await;
    assert_eq!(
        r.text,
        "Option \"Sidebar\" in question \"Which layout should the dashboard use?\": preview must \
         not contain <script> or <style> tags. Use inline styles via the style attribute if needed."
    );
    assert_eq!(pending_count(&srv).await, 0);

    py.start("AskUserQuestion", json!({"questions": questions()}))
        .await;
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[("action", "decline")]).await;
    let r = py.result().await;
    assert!(r.is_error);
    assert_eq!(r.text, "User declined to answer questions");
    py.finish().await;
}
