//! oh-my-pi under `omp -p`: sayso's `ask` at `/mcp/omp` through oh-my-pi's own MCP client
//! (`.omp/mcp.json`), answered on the page; the model's next request carries seed 000's
//! result text and nothing else, whether oh-my-pi lists the tool itself (`tools.xdev` off) or
//! mounts it as `xd://mcp__sayso_ask` (the default); `await_decision` picks the answer up
//! when the call's wait ends first.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::Command;

use crate::common::http::json_of;
use crate::common::server::TestServer;
use crate::rig::{LIMIT, Model, Sandbox, ended_once_answered, harness, run};
use crate::run::{abandoned, pending_decision, server};

const MODEL: &str = "scripted-model";
/// What oh-my-pi names sayso's `ask` (`mcp__<server>_<tool>`, the server being `sayso`), as
/// the model sees it: oh-my-pi's Anthropic transport puts `_` before every tool name on the
/// wire and takes it off the model's calls.
const ASK: &str = "_mcp__sayso_ask";
/// The tool the `xd://` devices are driven through.
const WRITE: &str = "_write";

/// A sandbox whose oh-my-pi talks to the scripted model, with sayso's `/mcp/omp` in the
/// project's `.omp/mcp.json`: the key comes from `SAYSO_KEY` in oh-my-pi's environment, and
/// the request timeout is `timeout_ms` (oh-my-pi's own default is 30 s).
fn setup(model: &Model, srv: &TestServer, timeout_ms: u64) -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "home/.omp/agent/models.yml",
        &format!(
            "providers:\n  scripted:\n    baseUrl: {}\n    apiKey: sk-scripted\n    \
             api: anthropic-messages\n    models:\n      - id: {MODEL}\n        name: Scripted\n",
            model.base()
        ),
    );
    mcp_json(&sb, srv, timeout_ms);
    sb
}

fn mcp_json(sb: &Sandbox, srv: &TestServer, timeout_ms: u64) {
    sb.write(
        "project/.omp/mcp.json",
        &json!({"mcpServers": {"sayso": {
            "type": "http",
            "url": format!("{}/mcp/omp", srv.base),
            "headers": {"Authorization": "Bearer ${SAYSO_KEY}"},
            "timeout": timeout_ms
        }}})
        .to_string(),
    );
}

/// `omp -p` in the sandbox, on the scripted model, with sayso's key in its environment.
fn omp(sb: &Sandbox, bin: &Path, key: &str) -> Command {
    let mut cmd = sb.command(bin);
    cmd.args([
        "-p",
        "--model",
        &format!("scripted/{MODEL}"),
        "Ask the user what the task needs.",
    ])
    .env("SAYSO_KEY", key);
    cmd
}

/// The model's turn calling `tool` with `input`. oh-my-pi asks every call for its intent
/// (`i`), and strips it before the call reaches the MCP server.
fn turn(tool: &str, mut input: Value) -> Value {
    input["i"] = json!("ask the user");
    json!({"tool": {"name": tool, "input": input}})
}

/// The model's turns: call `tool` with `input`, then stop.
fn call(tool: &str, input: Value) -> Value {
    json!([turn(tool, input), {"text": "Done."}])
}

/// The same call written to oh-my-pi's `xd://` device for `device`.
fn device(device: &str, args: Value) -> Value {
    json!({"path": format!("xd://{device}"), "content": args.to_string()})
}

/// What the model read back from its calls of `tool`, in order, in the last request.
fn read_back(model: &Model, tool: &str) -> Vec<(String, bool)> {
    let last = model.turns().last().cloned().unwrap_or_default();
    let found: Vec<(String, bool)> = last["tool_results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["name"] == tool)
        .map(|r| (r["text"].as_str().unwrap().to_string(), r["error"] == true))
        .collect();
    assert!(
        !found.is_empty(),
        "no {tool} result reached the model: {}",
        model.dump()
    );
    found
}

/// Starts oh-my-pi, answers its question on the page with `fields` (as a browser posts the
/// form, multi-select picks in the order ticked) and returns what the model read back.
async fn answered(
    sb: &Sandbox,
    model: &Model,
    bin: &Path,
    srv: &TestServer,
    fields: &[(&str, &str)],
) -> (String, bool) {
    let child = omp(sb, bin, &srv.key).spawn().unwrap();
    let d = pending_decision(srv).await;
    ended_once_answered(srv, d["web_url"].as_str().unwrap(), fields, child).await;
    read_back(model, ASK).pop().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omp_asks_at_mcp_omp_and_its_model_reads_seed_000s_text_alone() {
    let Some(bin) = harness("omp") else { return };
    let (_db, srv) = server().await;
    let model = Model::start(json!([])).await;
    let sb = setup(&model, &srv, 660_000);
    // With `tools.xdev` off oh-my-pi lists every MCP tool to the model itself.
    sb.write("project/.omp/config.yml", "tools:\n  xdev: false\n");

    // Several questions: one line per id, picks in the order ticked, typed input quoted.
    model.script(call(
        ASK,
        json!({"questions": [
            {"id": "storage_type", "question": "Which storage backend?",
             "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}], "recommended": 1},
            {"id": "features", "question": "Which features?", "multi": true,
             "options": [{"label": "Search"}, {"label": "Export"}, {"label": "Sharing"}]},
            {"id": "auth", "question": "Which authentication?",
             "options": [{"label": "JWT"}, {"label": "Session cookies"}]}
        ]}),
    ));
    let (text, error) = answered(
        &sb,
        &model,
        &bin,
        &srv,
        &[
            ("storage_type", "PostgreSQL"),
            ("features", "Sharing"),
            ("features", "Search"),
            ("auth", "__other__"),
            ("other:auth", "Passkeys"),
        ],
    )
    .await;
    let offered = model.tools_offered();
    for tool in [
        ASK,
        "_mcp__sayso_await_decision",
        "_mcp__sayso_get_decision",
        "_mcp__sayso_cancel_decision",
    ] {
        assert!(offered.iter().any(|t| t == tool), "{tool}: {offered:?}");
    }
    assert!(!error, "{text}");
    // Exactly the text: a second block (oh-my-pi's fenced JSON of structured content) would
    // follow it here.
    assert_eq!(
        text,
        "User answers:\nstorage_type: PostgreSQL\nfeatures: [Sharing, Search]\nauth: \"Passkeys\""
    );

    // One question, the person's own answer.
    let auth = json!({"id": "auth_method", "question": "Which authentication method should this API use?",
        "options": [{"label": "JWT"}, {"label": "OAuth2"}, {"label": "Session cookies"}], "recommended": 1});
    model.script(call(ASK, json!({"questions": [auth]})));
    let (text, error) = answered(
        &sb,
        &model,
        &bin,
        &srv,
        &[
            ("auth_method", "__other__"),
            ("other:auth_method", "Passkeys"),
        ],
    )
    .await;
    assert!(!error, "{text}");
    assert_eq!(text, "User provided custom input: Passkeys");

    // One multi-select question: the picks in the order ticked, not the options' order.
    model.script(call(
        ASK,
        json!({"questions": [{"id": "features", "question": "Which features?", "multi": true,
            "options": [{"label": "Search"}, {"label": "Export"}, {"label": "Sharing"}]}]}),
    ));
    let (text, error) = answered(
        &sb,
        &model,
        &bin,
        &srv,
        &[("features", "Sharing"), ("features", "Search")],
    )
    .await;
    assert!(!error, "{text}");
    assert_eq!(text, "User selected: Sharing, Search");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omp_mounts_ask_at_xd_and_await_decision_picks_up_the_answer() {
    let Some(bin) = harness("omp") else { return };
    let (_db, srv) = server().await;
    let question = json!({"id": "auth_method", "question": "Which authentication method should this API use?",
        "options": [{"label": "JWT"}, {"label": "OAuth2"}], "recommended": 1});
    // The call waits 3 s (`wait_s`, which every profile takes), so the wait ends before the
    // person answers.
    let ask = device(
        "mcp__sayso_ask",
        json!({"questions": [question], "wait_s": 3}),
    );
    let model = Model::start(call(WRITE, ask.clone())).await;
    let sb = setup(&model, &srv, 660_000);

    let child = omp(&sb, &bin, &srv.key).spawn().unwrap();
    let d = pending_decision(&srv).await;
    let id = d["decision_id"].as_str().unwrap().to_string();
    // The model's next turn resumes with the decision id it reads back.
    let resume = device("mcp__sayso_await_decision", json!({"decision_id": id}));
    model.script(json!([
        turn(WRITE, ask),
        turn(WRITE, resume),
        {"text": "Done."}
    ]));
    // Answer only once the model has read that the person has not answered yet.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !model.turns().iter().any(|r| r["turn"] == 1) {
        assert!(Instant::now() < deadline, "{}", model.dump());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let web_url = d["web_url"].as_str().unwrap();
    ended_once_answered(&srv, web_url, &[("auth_method", "OAuth2")], child).await;

    // oh-my-pi lists no sayso tool by default: it names them as devices in its prompt.
    let first = &model.turns()[0];
    assert!(
        !model.tools_offered().iter().any(|t| t.contains("sayso")),
        "{:?}",
        model.tools_offered()
    );
    assert!(first.to_string().contains("xd://mcp__sayso_ask"));
    let results = read_back(&model, WRITE);
    assert_eq!(results.len(), 2, "{results:?}");
    let (pending, error) = &results[0];
    assert!(!error, "{pending}");
    assert!(
        pending.contains(&format!(
            "Call await_decision with decision_id \"{id}\" to wait for the answers."
        )),
        "{pending}"
    );
    // The pending text alone: no fenced JSON of the decision after it, and no link.
    assert!(
        !pending.contains("```") && !pending.contains("http"),
        "{pending}"
    );
    let (text, error) = &results[1];
    assert!(!error, "{text}");
    assert_eq!(text, "User selected: OAuth2");

    // With oh-my-pi's request timeout shorter than sayso's wait, oh-my-pi gives up first: the
    // model reads a timeout and no decision id to resume with (docs/MCP.md: raise `timeout`),
    // and sayso withdraws the question nobody waits for, so no ghost is left for the person.
    mcp_json(&sb, &srv, 3_000);
    model.script(call(
        WRITE,
        device("mcp__sayso_ask", json!({"questions": [question]})),
    ));
    let ran = run(omp(&sb, &bin, &srv.key), LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    let (text, error) = read_back(&model, WRITE).pop().unwrap();
    assert!(error, "{text}");
    assert!(text.contains("Request timeout after 3000ms"), "{text}");
    let id = latest_decision_id(&srv).await;
    assert!(!text.contains(&id), "{text}");
    abandoned(&srv, &id).await;
}

/// The id of the inbox's latest decision, whatever its status.
async fn latest_decision_id(srv: &TestServer) -> String {
    let page: Value = json_of(
        reqwest::Client::new()
            .get(format!("{}/v1/decisions?limit=1", srv.base))
            .bearer_auth(&srv.key),
    )
    .await;
    page["items"][0]["decision_id"]
        .as_str()
        .expect("a decision")
        .to_string()
}
