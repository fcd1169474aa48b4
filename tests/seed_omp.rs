//! oh-my-pi's `ask` (docs/SEEDS.md) at `/mcp/omp`, through the official
//! Python MCP SDK, answered on the page as a browser posts it.

mod common;

use std::time::Duration;

use common::mcp_py::{Called, PyMcp, pending_web_url, post_page};
use common::server::{TestServer, fresh_server, s};
use serde_json::{Value, json};

fn auth_question() -> Value {
    json!({
        "id": "auth_method",
        "question": "Which authentication method should this API use?",
        "options": [{"label": "JWT"}, {"label": "OAuth2 (Recommended)"}, {"label": "Session cookies"}],
        "recommended": 0
    })
}

/// Calls `ask` with `questions`, posts `fields` on the page it asks on, and returns what
/// the tool then answered.
async fn answered_on_page(
    py: &mut PyMcp,
    srv: &TestServer,
    questions: Value,
    fields: &[(&str, &str)],
) -> Called {
    py.start("ask", json!({ "questions": questions })).await;
    let web_url = pending_web_url(srv).await;
    post_page(srv, &web_url, fields).await;
    py.result().await
}

/// [`answered_on_page`], checking the tool said `said` and nothing structured (oh-my-pi's
/// client would hand that to the model as a second block).
async fn assert_reads(
    py: &mut PyMcp,
    srv: &TestServer,
    questions: Value,
    fields: &[(&str, &str)],
    said: &str,
) {
    let r = answered_on_page(py, srv, questions, fields).await;
    assert_eq!(r.text, said);
    assert_eq!(r.structured, Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_is_listed_with_the_documents_schema_and_what_resuming_needs() {
    let Some((_db, _srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    let tools = py.ask_tools("ask").await;
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["required"], json!(["questions"]));
    let item = &schema["properties"]["questions"]["items"];
    assert_eq!(item["required"], json!(["id", "question", "options"]));
    for field in ["multi", "recommended"] {
        assert!(item["properties"].get(field).is_some(), "{field}");
    }
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_pick_reads_user_selected_now_and_later() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    py.start("ask", json!({"questions": [auth_question()]}))
        .await;
    let web_url = pending_web_url(&srv).await;
    let page = srv.page_text(&web_url).await;
    assert!(
        page.contains("badge\">Recommended"),
        "the recommended badge"
    );
    assert!(page.contains("name=\"note:auth_method\""), "a note box");
    assert_eq!(
        post_page(
            &srv,
            &web_url,
            &[
                ("auth_method", "OAuth2 (Recommended)"),
                ("action", "answer")
            ]
        )
        .await,
        200
    );
    let r = py.result().await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.text, "User selected: OAuth2");
    // No structured content: oh-my-pi's client would hand it to the model as a second block.
    assert_eq!(r.structured, Value::Null);
    // Hours later, get_decision and await_decision say the same.
    let (_, list) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    let id = s(&list["items"][0], "decision_id").to_string();
    for tool in ["get_decision", "await_decision"] {
        let later = py.call(tool, json!({"decision_id": id})).await;
        assert_eq!(later.text, "User selected: OAuth2", "{tool}");
        assert_eq!(later.structured, r.structured, "{tool}");
    }
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_input_and_notes_read_as_the_tool_words_them() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    let answer = [
        ("auth_method", "__other__"),
        ("other:auth_method", "Passkeys"),
        ("note:auth_method", "ask security first"),
    ];
    let said = "User provided custom input: Passkeys\nUser added note: ask security first";
    assert_reads(&mut py, &srv, json!([auth_question()]), &answer, said).await;
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_questions_read_user_answers_one_line_per_id() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    let questions = json!([
        {"id": "storage_type", "question": "Which storage backend?", "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]},
        {"id": "features", "question": "Which features?", "options": [{"label": "Search"}, {"label": "Export"}, {"label": "Sharing"}], "multi": true},
        {"id": "name", "question": "What should it be called?", "options": []}
    ]);
    let answer = [
        ("storage_type", "PostgreSQL"),
        ("features", "Search"),
        ("features", "Sharing"),
        ("name", "orders"),
        ("note:features", "search first"),
    ];
    let said = "User answers:\nstorage_type: PostgreSQL\nfeatures: [Search, Sharing] (note: search first)\nname: \"orders\"";
    assert_reads(&mut py, &srv, questions, &answer, said).await;
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_is_the_tools_cancel_error_and_empty_questions_its_text() {
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    let empty = py.call("ask", json!({"questions": []})).await;
    assert!(!empty.is_error);
    assert_eq!(empty.text, "Error: questions must not be empty");

    let r = answered_on_page(
        &mut py,
        &srv,
        json!([auth_question()]),
        &[("action", "decline")],
    )
    .await;
    assert!(r.is_error);
    assert_eq!(r.text, "Ask tool was cancelled by the user");
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ask_timeout_chooses_the_recommended_option_and_says_so() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start_omp_timeout(&db.url, Duration::from_secs(10)).await;
    let Some(mut py) = PyMcp::connect(&srv, "/mcp/omp").await else {
        return;
    };
    let mut q = auth_question();
    q["recommended"] = json!(1);
    let r = py.call("ask", json!({"questions": [q]})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        r.text,
        "User selected: OAuth2 (auto-selected after timeout)"
    );
    assert_eq!(r.structured, Value::Null);
    // The page and the audit trail say the timeout chose it.
    let (_, list) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    let d = &list["items"][0];
    let page = srv.page_text(s(d, "web_url")).await;
    assert!(page.contains("the timeout chose the recommended"), "{page}");
    let (_, events) = common::server::send(srv.req(
        reqwest::Method::GET,
        &format!("/v1/decisions/{}/events", s(d, "decision_id")),
    ))
    .await;
    let expired = events["items"]
        .as_array()
        .or(events.as_array())
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "expired")
        .cloned()
        .expect("an expired entry");
    assert_eq!(expired["detail"]["outcome_source"], "default");
    assert_eq!(expired["detail"]["chosen_by"], "ask_timeout");
    assert_eq!(
        expired["detail"]["outcome"],
        json!({"auth_method": "OAuth2 (Recommended)"})
    );
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_bridge_serves_the_profile_it_is_given() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let (_db, srv) = fresh_server().await;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"));
    cmd.args(["mcp", "--profile", "omp"])
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key)
        .env("SAYSO_LOG", "warn")
        .stderr(std::process::Stdio::inherit());
    let child = rmcp::transport::TokioChildProcess::new(cmd).expect("sayso mcp starts");
    let client = ().serve(child).await.expect("stdio handshake");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["ask", "await_decision", "get_decision", "cancel_decision"]
    );
    let Value::Object(args) = json!({"questions": []}) else {
        unreachable!()
    };
    let r = client
        .call_tool(CallToolRequestParams::new("ask").with_arguments(args))
        .await
        .unwrap();
    let text = r.content[0].as_text().unwrap().text.clone();
    assert_eq!(text, "Error: questions must not be empty");
    client.cancel().await.unwrap();

    let bad = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"))
        .args(["mcp", "--profile", "cursor", "--key", "sk_x"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("use omp, gemini, claude or pi"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_select_comes_back_in_the_order_ticked_in_a_browser() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let Some((_db, srv, mut py)) = PyMcp::on_fresh_server("/mcp/omp").await else {
        return;
    };
    py.start(
        "ask",
        json!({"questions": [{"id": "features", "question": "Which features?", "multi": true,
            "options": [{"label": "Search"}, {"label": "Export"}, {"label": "Sharing"}]}]}),
    )
    .await;
    let web_url = pending_web_url(&srv).await;
    b.goto(&web_url).await;
    // Ticked last option first; the terminal returns picks in the order ticked.
    b.click("label[for='f-0-2']").await;
    b.click("label[for='f-0-0']").await;
    b.click_and_wait("#submit").await;
    let r = py.result().await;
    assert_eq!(r.text, "User selected: Sharing, Search");
    assert_eq!(r.structured, Value::Null);
    py.finish().await;
    b.close().await;
}
