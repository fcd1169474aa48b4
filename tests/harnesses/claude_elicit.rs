//! Claude Code 2.1.328 under `claude -p` with an MCP server written on the official Python SDK
//! (tests/harnesses/elicit/server.py, `mcp` pinned in requirements.txt) whose tools ask the
//! user in the middle of the call: the `Elicitation` hook `sayso hook install claude` writes
//! puts each question to the person, and the server receives their answer, typed as its
//! schema says, or `decline`, or `cancel`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::common::mcp_py::post_page;
use crate::common::server::{TestServer, send};
use crate::rig::{Model, Sandbox, call, ended_within, harness, run};
use crate::run::{pending_decision, server};

const MODEL: &str = "claude-sonnet-4-5";
const LIMIT: Duration = Duration::from_secs(240);

/// The venv's Python with the pinned SDK, made on first use.
fn python() -> Option<&'static PathBuf> {
    static VENV: crate::common::python::Venv = crate::common::python::Venv::new(
        "mcp-elicit-venv",
        "mcp.server.fastmcp",
        &[
            "-r",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/harnesses/elicit/requirements.txt"
            ),
        ],
        "the Python MCP SDK of the eliciting MCP server",
    );
    VENV.python()
}

/// The sandbox's project: the hook installed, a policy that lets the server's tools run
/// ungated (the question under test is the server's, not an approval), and the server in
/// `.mcp.json`, logging what it receives to `elicit.log` in the sandbox.
async fn project(sb: &Sandbox, srv: &TestServer, python: &Path) -> PathBuf {
    sb.install("claude", srv).await;
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.project().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["hooks"]["Elicitation"][0]["hooks"][0]["command"], "sayso hook claude",
        "{settings}"
    );
    sb.write(
        "project/.sayso/policy.json",
        r#"{"rules": [{"tool": "mcp__signup__*", "decision": "allow"}]}"#,
    );
    let log = sb.project().join("elicit.log");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harnesses/elicit/server.py");
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"signup": {
            "type": "stdio",
            "command": python,
            "args": [server],
            "env": {"ELICIT_LOG": log}
        }}})
        .to_string(),
    );
    log
}

/// `claude -p` calling the server's `tool` once, its model the scripted endpoint.
fn claude(sb: &Sandbox, model: &Model, bin: &Path, srv: &TestServer, tool: &str) -> Command {
    model.script(call(&format!("mcp__signup__{tool}"), json!({})));
    let mut cmd = sb.command(bin);
    cmd.args(["-p", "Do what the task says.", "--model", MODEL])
        .env("ANTHROPIC_BASE_URL", model.base())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        // The MCP server is up before the first turn (a Python SDK takes seconds to start),
        // and its tools are listed to the model without a tool search.
        .env("MCP_CONNECTION_NONBLOCKING", "false")
        .env("MCP_CONNECT_TIMEOUT_MS", "120000")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key);
    cmd
}

/// What the MCP server received last, as its SDK read it.
fn received(log: &Path, model: &Model) -> Value {
    let text = std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("the server logged nothing ({e}): {}", model.dump()));
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_elicitation_reaches_the_person_and_the_server_gets_their_answer() {
    let Some(bin) = harness("claude") else { return };
    let Some(python) = python() else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    let log = project(&sb, &srv, python).await;
    let model = Model::start(json!([])).await;

    // The form: the person fills it in on their own link, as the page posts it (every value
    // a string); the server receives each value typed as its schema says.
    let child = claude(&sb, &model, &bin, &srv, "sign_up").spawn().unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(d["kind"], "form", "{d}");
    assert_eq!(
        d["question"],
        "The MCP server \"signup\" asks you to fill in a form"
    );
    assert!(d.get("approval").is_none_or(Value::is_null), "{d}");
    let web_url = d["web_url"].as_str().unwrap().to_string();
    // The `web_url`, which the agent's key reads, cannot answer it.
    let (status, body) = send(srv.client.post(&web_url).json(
        &json!({"value": {"email": "bot@example.com", "seats": 1, "plan": "basic", "vat": false}}),
    ))
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere", "{body}");
    // The person's page says whose question it is, and shows the server's words as text.
    let person = srv.person_url(&web_url).await;
    let page = srv.client.get(&person).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("A question from an MCP server, not a tool approval."),
        "{html}"
    );
    assert!(html.contains("&lt;b&gt;not bold&lt;/b&gt;"), "{html}");
    assert!(!html.contains("href=\"https://evil.example/\""), "{html}");
    let status = post_page(
        &srv,
        &person,
        &[
            ("email", "ana@example.com"),
            ("seats", "3"),
            ("budget", "12.5"),
            ("vat", "true"),
            ("plan", "pro"),
            ("region", "eu"),
            ("start", "2026-12-01"),
        ],
    )
    .await;
    assert!(status < 400, "the page took the answer: {status}");
    let ran = ended_within(child, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert_eq!(
        received(&log, &model),
        json!({"tool": "sign_up", "action": "accept", "content": {
            "email": "ana@example.com", "seats": 3, "budget": 12.5, "vat": true,
            "plan": "pro", "region": "eu", "start": "2026-12-01"}})
    );
    // The tool went on with the answer, and the model read its result.
    let r = model.tool_result("mcp__signup__sign_up").unwrap();
    let text = r["text"].as_str().unwrap();
    assert!(
        r["error"] == false && text.contains("accept") && text.contains("ana@example.com"),
        "{r}"
    );

    // The person declines: the server hears `decline`.
    let child = claude(&sb, &model, &bin, &srv, "sign_up").spawn().unwrap();
    let d = pending_decision(&srv).await;
    let person = srv.person_url(d["web_url"].as_str().unwrap()).await;
    let status = post_page(&srv, &person, &[("action", "decline")]).await;
    assert!(status < 400, "{status}");
    let ran = ended_within(child, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert_eq!(
        received(&log, &model),
        json!({"tool": "sign_up", "action": "decline", "content": null})
    );

    // Nobody answers in time: the server hears `cancel`, and the question is closed, so no
    // late answer can pass for one the server got.
    let mut cmd = claude(&sb, &model, &bin, &srv, "sign_up");
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "3");
    let ran = run(cmd, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert_eq!(
        received(&log, &model),
        json!({"tool": "sign_up", "action": "cancel", "content": null})
    );
    let (_, all) = send(srv.req(Method::GET, "/v1/decisions?status=cancelled")).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "{all}");

    // More fields than a form holds: not asked in part, but cancelled.
    let (_, before) = send(srv.req(Method::GET, "/v1/decisions")).await;
    let ran = run(claude(&sb, &model, &bin, &srv, "checklist"), LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert_eq!(
        received(&log, &model),
        json!({"tool": "checklist", "action": "cancel", "content": null})
    );
    let (_, after) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(
        before["items"].as_array().unwrap().len(),
        after["items"].as_array().unwrap().len(),
        "nobody was asked: {after}"
    );

    // URL mode: the address, in full, for the person to open; their Accept reaches the server.
    let child = claude(&sb, &model, &bin, &srv, "connect_account")
        .spawn()
        .unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(d["kind"], "bool", "{d}");
    assert_eq!(
        d["question"],
        "The MCP server \"signup\" asks you to open a web page on accounts.example.com"
    );
    let person = srv.person_url(d["web_url"].as_str().unwrap()).await;
    let html = srv.page_text(&person).await;
    assert!(
        html.contains("https://accounts.example.com/connect?state=s1"),
        "{html}"
    );
    let status = post_page(&srv, &person, &[("value", "Accept")]).await;
    assert!(status < 400, "{status}");
    let ran = ended_within(child, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert_eq!(
        received(&log, &model),
        json!({"tool": "connect_account", "action": "accept", "content": null})
    );
}
