//! pi: the extension `sayso hook install pi` writes, under `pi -p`. Its `tool_call` gate puts
//! each call through `sayso hook pi`; its `ask_user` asks through `/mcp/pi` (seed 004).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::mcp_py::{pending_web_url, post_page};
use crate::common::seeds::pi::{ANSWERS, DATABASE, NAME, example, result};
use crate::common::server::TestServer;
use crate::rig::{
    LIMIT, Model, Ran, Sandbox, allow_then_deny, call, ended, fallbacks, harness, run,
};
use crate::run::server;

const MODEL: &str = "scripted-model";

/// The sandbox with pi's provider the scripted endpoint, and sayso's extension installed in
/// the project.
async fn setup(model: &Model, srv: &TestServer) -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "home/.pi/agent/models.json",
        &json!({"providers": {"scripted": {
            "baseUrl": model.base(), "api": "anthropic-messages", "apiKey": "sk-scripted",
            "models": [{"id": MODEL}]
        }}})
        .to_string(),
    );
    let out = sb.install("pi", srv).await;
    assert!(
        sb.project().join(".pi/extensions/sayso.ts").is_file(),
        "{}",
        out.both()
    );
    sb
}

/// `pi -p … PROMPT` in the sandbox, with `env` on top of sayso's URL and key.
fn pi(
    sb: &Sandbox,
    bin: &Path,
    srv: &TestServer,
    args: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = sb.command(bin);
    cmd.arg("-p")
        .args(args)
        .args([
            "--provider",
            "scripted",
            "--model",
            MODEL,
            "Do what the task says.",
        ])
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn bash(command: &str) -> Value {
    call("bash", json!({ "command": command }))
}

fn touch(file: &str) -> Value {
    bash(&format!("touch {file}"))
}

/// What the model read back from `tool` in the last run, checked to carry no answer link.
fn read_back(model: &Model, tool: &str, ran: &Ran) -> Value {
    let r = model.tool_result(tool).unwrap_or_else(|| {
        panic!(
            "no {tool} result reached the model: {}\n{}",
            ran.both(),
            model.dump()
        )
    });
    let text = r["text"].as_str().unwrap_or_default();
    assert!(
        !text.contains("/d/"),
        "the model was handed an answer link: {text}"
    );
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_gate_allows_denies_with_the_remark_and_falls_back_to_blocking() {
    let Some(bin) = harness("pi") else { return };
    let (_db, srv) = server().await;
    let model = Model::start(json!([])).await;
    let sb = setup(&model, &srv).await;
    let file = |name: &str| -> PathBuf { sb.project().join(name) };

    // Allow: the command runs. Deny with a remark: it does not run, and the model reads the
    // remark.
    let pi_run = || pi(&sb, &bin, &srv, &[], &[]);
    let remark = "use make clean instead";
    let [allowed, denied] =
        allow_then_deny((&srv, &sb, &model), "bash", touch, pi_run, remark).await;
    assert_eq!(
        allowed.asked["question"],
        "pi wants to run: touch allowed.txt"
    );
    assert_eq!(allowed.ran.code, Some(0), "{}", allowed.ran.both());
    assert_eq!(allowed.read["error"], false);
    assert_eq!(
        denied.asked["question"],
        "pi wants to run: touch denied.txt"
    );
    let r = read_back(&model, "bash", &denied.ran);
    assert_eq!(r["error"], true, "{r}");
    assert_eq!(
        r["text"],
        "The person denied this on sayso: use make clean instead"
    );

    // Each fallback blocks: no answer in time, server down, bad key.
    for case in fallbacks(&srv) {
        model.script(touch(case.file));
        let env = [("SAYSO_URL", case.base.as_str()), ("SAYSO_KEY", &case.key)];
        let ran = case
            .blocks(&sb, &model, pi(&sb, &bin, &srv, &[], &env))
            .await;
        let r = read_back(&model, "bash", &ran);
        assert_eq!(r["error"], true, "{}: {r}", case.file);
        let text = r["text"].as_str().unwrap();
        assert!(
            text.contains("sayso: ") && text.contains(case.says) && text.ends_with("denied"),
            "{}: {text}",
            case.file
        );
    }

    // A hook that cannot be started blocks too.
    let ext = sb.project().join(".pi/extensions/sayso.ts");
    let text = std::fs::read_to_string(&ext).unwrap();
    std::fs::write(
        &ext,
        text.replace("\"sayso hook pi\"", "\"sayso-missing hook pi\""),
    )
    .unwrap();
    model.script(bash("touch nohook.txt"));
    let ran = run(pi(&sb, &bin, &srv, &[], &[]), LIMIT).await;
    assert!(!file("nohook.txt").exists(), "{}", ran.both());
    assert_eq!(read_back(&model, "bash", &ran)["error"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_ask_user_hands_the_model_seed_004s_result() {
    let Some(bin) = harness("pi") else { return };
    let (_db, srv) = server().await;
    let ask = json!([{"tool": {"name": "ask_user", "input": example()}}, {"text": "Done."}]);
    let model = Model::start(ask).await;
    let sb = setup(&model, &srv).await;

    // Answered on the page: the model reads the document's result, exactly.
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &ANSWERS).await;
    let ran = ended(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(model.tools_offered().contains(&"ask_user".to_string()));
    let r = read_back(&model, "ask_user", &ran);
    assert_eq!(r["error"], false, "{r}");
    assert_eq!(r["text"], serde_json::to_string_pretty(&result()).unwrap());

    // Declined on the page: the cancel result.
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[("action", "decline")]).await;
    let ran = ended(child).await;
    let r = read_back(&model, "ask_user", &ran);
    assert_eq!(
        r["text"],
        serde_json::to_string_pretty(&json!({"answered": false, "answers": [], "cancelled": true}))
            .unwrap()
    );

    // The wait ends first: "Questions pending", the pending file, no link; `pi -c` asking
    // the same questions again picks up the person's answer instead of asking anew.
    let ran = run(
        pi(&sb, &bin, &srv, &[], &[("SAYSO_PI_ASK_WAIT_S", "1")]),
        LIMIT,
    )
    .await;
    let r = read_back(&model, "ask_user", &ran);
    let text = r["text"].as_str().unwrap();
    assert!(
        text.starts_with("Questions pending. User input required.\n\n"),
        "{text}"
    );
    assert!(
        text.ends_with("Questions saved to: .pi/pending-questions.json"),
        "{text}"
    );
    let pending_file = sb.project().join(".pi/pending-questions.json");
    let pending: Value =
        serde_json::from_str(&std::fs::read_to_string(&pending_file).unwrap()).unwrap();
    assert_eq!(pending["questions"][0]["question"], DATABASE);
    assert_eq!(pending["questions"][0]["answer"], Value::Null);
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[(DATABASE, "SQLite"), (NAME, "billing")]).await;
    let asked_before = model.turns().len();
    model.script(json!([
        {"text": "unused"}, {"text": "unused"},
        {"tool": {"name": "ask_user", "input": example()}}, {"text": "Done."}
    ]));
    let ran = run(pi(&sb, &bin, &srv, &["-c"], &[]), LIMIT).await;
    assert!(model.turns().len() > asked_before, "{}", ran.both());
    let r = read_back(&model, "ask_user", &ran);
    let v: Value = serde_json::from_str(r["text"].as_str().unwrap()).unwrap();
    assert_eq!(v["answers"][0]["selectedOption"], "SQLite", "{r}");
    assert_eq!(v["answers"][1]["answer"], "billing");
    assert!(
        !pending_file.exists(),
        "the answered questions are no longer pending"
    );
    let (_, list) =
        crate::common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        3,
        "asked three times, not four"
    );
}
