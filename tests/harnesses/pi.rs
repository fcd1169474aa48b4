//! pi: the extension `sayso hook install pi` writes, under `pi -p`. Its `tool_call` gate puts
//! each call through `sayso hook pi`; its `ask_user` asks through `/mcp/pi` (seed 004).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::mcp_py::{pending_web_url, post_page};
use crate::common::server::TestServer;
use crate::rig::{BIN, Model, Ran, Sandbox, harness, run};
use crate::run::{pending_decision, server};

const MODEL: &str = "scripted-model";
const LIMIT: Duration = Duration::from_secs(120);

/// The sandbox with pi's provider the scripted endpoint, and sayso's extension installed in
/// the project.
fn setup(model: &Model, srv: &TestServer) -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "home/.pi/agent/models.json",
        &json!({"providers": {"scripted": {
            "baseUrl": model.base(), "api": "anthropic-messages", "apiKey": "sk-scripted",
            "models": [{"id": MODEL}]
        }}})
        .to_string(),
    );
    let out = std::process::Command::new(BIN)
        .args(["hook", "install", "pi", "--dir"])
        .arg(sb.project())
        .env("HOME", sb.home())
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        sb.project().join(".pi/extensions/sayso.ts").is_file(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
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
    json!([{"tool": {"name": "bash", "input": {"command": command}}}, {"text": "Done."}])
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

async fn finish(child: tokio::process::Child) -> Ran {
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("pi ends")
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_gate_allows_denies_with_the_remark_and_falls_back_to_blocking() {
    let Some(bin) = harness("pi") else { return };
    let (_db, srv) = server().await;
    let model = Model::start(bash("touch allowed.txt")).await;
    let sb = setup(&model, &srv);
    let file = |name: &str| -> PathBuf { sb.project().join(name) };

    // Allow: the command runs.
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(d["question"], "pi wants to run: touch allowed.txt");
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = finish(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        file("allowed.txt").exists(),
        "the allowed command ran: {}",
        model.dump()
    );
    assert_eq!(read_back(&model, "bash", &ran)["error"], false);

    // Deny with a remark: it does not run, and the model reads the remark.
    model.script(bash("touch denied.txt"));
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(d["question"], "pi wants to run: touch denied.txt");
    let (status, body) = srv
        .answer(
            d["web_url"].as_str().unwrap(),
            json!({"value": "Deny", "remark": "use make clean instead"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = finish(child).await;
    assert!(!file("denied.txt").exists(), "the denied command ran");
    let r = read_back(&model, "bash", &ran);
    assert_eq!(r["error"], true, "{r}");
    assert_eq!(
        r["text"],
        "The person denied this on sayso: use make clean instead"
    );

    // Each fallback blocks: no answer in time, server down, bad key.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    // (the file the command would make, the environment that breaks the hook, what the model reads)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [
        (
            "late.txt",
            &[("SAYSO_HOOK_TIMEOUT_S", "2")],
            "no answer in 2 s",
        ),
        (
            "down.txt",
            &[("SAYSO_URL", &closed), ("SAYSO_HOOK_TIMEOUT_S", "3")],
            "sayso:",
        ),
        ("badkey.txt", &[("SAYSO_KEY", "sk_not_a_key")], "sayso:"),
    ];
    for (name, env, says) in cases {
        model.script(bash(&format!("touch {name}")));
        let ran = run(pi(&sb, &bin, &srv, &[], env), LIMIT).await;
        assert!(
            !file(name).exists(),
            "{name}: the command ran: {}",
            ran.both()
        );
        let r = read_back(&model, "bash", &ran);
        assert_eq!(r["error"], true, "{name}: {r}");
        let text = r["text"].as_str().unwrap();
        assert!(
            text.contains(says) && text.ends_with("denied"),
            "{name}: {text}"
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

const DATABASE: &str = "Which database should we use?";
const NAME: &str = "What should we name this service?";

/// Seed 004's example call.
fn example() -> Value {
    json!({
        "questions": [
            {
                "question": DATABASE,
                "header": "Database Selection",
                "options": [
                    {"label": "PostgreSQL (Recommended)", "description": "Battle-tested relational DB"},
                    {"label": "SQLite", "description": "Lightweight, file-based"},
                    {"label": "MongoDB", "description": "Document store"}
                ]
            },
            {"question": NAME, "header": "Service Setup"}
        ],
        "metadata": {"source": "project-setup"}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_ask_user_hands_the_model_seed_004s_result() {
    let Some(bin) = harness("pi") else { return };
    let (_db, srv) = server().await;
    let ask = json!([{"tool": {"name": "ask_user", "input": example()}}, {"text": "Done."}]);
    let model = Model::start(ask).await;
    let sb = setup(&model, &srv);

    // Answered on the page: the model reads the document's result, exactly.
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let web_url = pending_web_url(&srv).await;
    post_page(
        &srv,
        &web_url,
        &[
            (DATABASE, "PostgreSQL (Recommended)"),
            (NAME, "order-processor"),
        ],
    )
    .await;
    let ran = finish(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(model.tools_offered().contains(&"ask_user".to_string()));
    let expected = json!({
        "answered": true,
        "answers": [
            {"question": DATABASE, "answer": "PostgreSQL (Recommended)",
             "selectedOption": "PostgreSQL (Recommended)", "wasCustom": false},
            {"question": NAME, "answer": "order-processor", "wasCustom": true}
        ]
    });
    let r = read_back(&model, "ask_user", &ran);
    assert_eq!(r["error"], false, "{r}");
    assert_eq!(r["text"], serde_json::to_string_pretty(&expected).unwrap());

    // Declined on the page: the cancel result.
    let child = pi(&sb, &bin, &srv, &[], &[]).spawn().unwrap();
    let web_url = pending_web_url(&srv).await;
    post_page(&srv, &web_url, &[("action", "decline")]).await;
    let ran = finish(child).await;
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
