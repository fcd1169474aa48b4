//! Codex: the `PreToolUse` hook `sayso hook install codex` writes (with the trust Codex needs
//! before it runs a hook at all), under `codex exec`, its model a scripted OpenAI Responses
//! endpoint.

use std::path::Path;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::server::{TestServer, send};
use crate::rig::{LIMIT, Model, Ran, Sandbox, call, fallbacks, harness, run};
use crate::run::{pending_decision, server};

/// `~/.codex/config.toml`: the scripted model as a Responses provider.
fn configure(sb: &Sandbox, model: &Model) {
    sb.write(
        "home/.codex/config.toml",
        &format!(
            r#"model = "scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
"#,
            model.base()
        ),
    );
}

/// The unattended command line that makes sayso the gate.
fn codex(sb: &Sandbox, bin: &Path, url: &str, key: &str) -> tokio::process::Command {
    let mut cmd = sb.command(bin);
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "-c",
        "approval_policy=\"never\"",
        "-s",
        "danger-full-access",
        "Do what the task says.",
    ])
    .env("SCRIPTED_API_KEY", "sk-scripted")
    .env("SAYSO_URL", url)
    .env("SAYSO_KEY", key);
    cmd
}

fn touch(model: &Model, file: &str) {
    model.script(call(
        "exec_command",
        json!({"cmd": format!("touch {file}")}),
    ));
}

/// What the model read back from the command in its last run.
fn read_back(model: &Model) -> String {
    model
        .tool_result("exec_command")
        .map(|r| r["text"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// Runs Codex, answers its question on the page with `answer`, and returns the decision.
async fn answered(sb: &Sandbox, bin: &Path, srv: &TestServer, answer: Value) -> (Ran, Value) {
    let (ran, d) = crate::rig::answered(srv, codex(sb, bin, &srv.base, &srv.key), answer).await;
    let id = d["decision_id"].as_str().unwrap();
    let (status, d) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    assert_eq!(status, 200, "{d}");
    (ran, d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_hook_gates_codex_exec_once_installed() {
    let Some(bin) = harness("codex") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    let model = Model::start(json!([])).await;
    configure(&sb, &model);
    let said = sb.install("codex", &srv).await.stdout;
    assert!(said.contains("trusted the hook in"), "{said}");
    assert!(
        said.contains("Codex will run `sayso hook codex` and obey it."),
        "{said}"
    );
    let project = sb.project();

    // Allow: Codex takes the hook's silence as go-ahead and runs the command.
    touch(&model, "allowed.txt");
    let (ran, d) = answered(&sb, &bin, &srv, json!({"value": "Allow"})).await;
    assert_eq!(d["question"], "Codex wants to run: touch allowed.txt");
    assert!(ran.stderr.contains("hook: PreToolUse"), "{}", ran.both());
    assert!(!ran.stderr.contains("unsupported"), "{}", ran.both());
    assert!(
        project.join("allowed.txt").exists(),
        "{}\n{}",
        ran.both(),
        model.dump()
    );

    // Allow with the command edited: Codex runs the edit, and the record is the person's
    // Allow with an edit, not an answer of their own.
    touch(&model, "original.txt");
    let (ran, d) = answered(
        &sb,
        &bin,
        &srv,
        json!({"value": "Allow", "command": "touch edited.txt"}),
    )
    .await;
    assert!(project.join("edited.txt").exists(), "{}", ran.both());
    assert!(!project.join("original.txt").exists(), "{}", ran.both());
    assert_eq!(d["outcome"], "Allow", "{d}");
    assert_eq!(d["custom"], false, "{d}");
    assert_eq!(
        d["answer_text"],
        "The user answered \"Codex wants to run: touch original.txt\" with \"Allow\", with the command edited before allowing; what runs is their command \"touch edited.txt\".",
    );
    let id = d["decision_id"].as_str().unwrap();
    let (_, events) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert!(
        events
            .to_string()
            .contains("\"edited_command\":\"touch edited.txt\""),
        "{events}"
    );

    // Deny with a remark: not run, and the remark is what the model reads back.
    touch(&model, "denied.txt");
    let (ran, _) = answered(
        &sb,
        &bin,
        &srv,
        json!({"value": "Deny", "remark": "not on a Friday"}),
    )
    .await;
    assert!(!project.join("denied.txt").exists(), "{}", ran.both());
    let back = read_back(&model);
    assert!(
        back.contains("The person denied this on sayso: not on a Friday"),
        "{back}\n{}",
        model.dump()
    );

    // No answer in time, the server down, a bad key: not run, the reason read back.
    for case in fallbacks(&srv) {
        touch(&model, case.file);
        let ran = case
            .blocks(&sb, &model, codex(&sb, &bin, &case.base, &case.key))
            .await;
        assert!(
            read_back(&model).contains(case.says),
            "{}: {}\n{}",
            case.file,
            ran.both(),
            model.dump()
        );
    }

    // The trust is what makes Codex run the hook: with its hash changed, doctor says so, and
    // Codex indeed runs the command without asking anyone.
    let config = sb.home().join(".codex/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("trusted_hash = \"sha256:", "trusted_hash = \"sha256:0"),
    )
    .unwrap();
    let out = sb.sayso(&["hook", "doctor", "codex"], &srv).await;
    let said = &out.stdout;
    assert_eq!(out.code, Some(1), "{said}");
    assert!(said.contains("Codex skips it without a word"), "{said}");
    touch(&model, "ungated.txt");
    let ran = run(codex(&sb, &bin, "http://127.0.0.1:9", &srv.key), LIMIT).await;
    assert!(project.join("ungated.txt").exists(), "{}", ran.both());
    assert!(!ran.stderr.contains("hook: PreToolUse"), "{}", ran.both());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_killing_its_hook_mid_wait_withdraws_the_question() {
    let Some(bin) = harness("codex") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    let model = Model::start(json!([])).await;
    configure(&sb, &model);
    // Codex's hook timeout is the entry's `timeout` in hooks.json (seconds), which install
    // writes as the hook's wait plus 30 s: 31 s here. The hook itself is then told to wait
    // 10 min, so Codex kills it mid-wait (SIGKILL: Codex drops the hook's process).
    let out = sb
        .sayso(&["hook", "install", "codex", "--timeout-s", "1"], &srv)
        .await;
    assert_eq!(out.code, Some(0), "{}", out.both());
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.project().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(hooks["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 31);
    touch(&model, "abandoned.txt");
    let mut cmd = codex(&sb, &bin, &srv.base, &srv.key);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let running = tokio::spawn(run(cmd, LIMIT));
    let d = pending_decision(&srv).await;
    assert_eq!(d["question"], "Codex wants to run: touch abandoned.txt");
    let id = d["decision_id"].as_str().unwrap();
    let ran = running.await.unwrap();
    assert!(ran.stderr.contains("hook: PreToolUse"), "{}", ran.both());
    // The hook got no chance to say anything: its guard withdrew the question.
    crate::run::abandoned(&srv, id).await;
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 409, "{body}");
    // To Codex a killed hook is a failed one, and it runs the call as if there were no hook
    // (docs/HARNESSES.md): why the hook's wait is kept below Codex's timeout. Nothing the
    // person does later adds to that.
    assert!(
        ran.stderr.contains("hook: PreToolUse Failed"),
        "{}",
        ran.both()
    );
    assert!(
        sb.project().join("abandoned.txt").exists(),
        "{}",
        ran.both()
    );
}
