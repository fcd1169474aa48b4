//! Copilot CLI 1.0.102 under `copilot -p`, offline on its bring-your-own-model variables: the
//! `preToolUse` hook `sayso hook install copilot` writes, which `-p` loads only in a trusted
//! folder (`--trust-folder`, or `trustedFolders` in `~/.copilot/config.json`).

use std::path::Path;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::rig::{LIMIT, Model, Sandbox, allow_then_deny, call, fallbacks, harness, run};
use crate::run::server;

/// `copilot -p` in the sandbox, its model the scripted endpoint (Anthropic Messages), sayso at
/// `base` with `key`. `trust` adds `--trust-folder`.
fn copilot(sb: &Sandbox, model: &Model, bin: &Path, base: &str, key: &str, trust: bool) -> Command {
    let mut cmd = sb.command(bin);
    cmd.args(["-p", "Do what the task says.", "--allow-all-tools"]);
    if trust {
        cmd.arg("--trust-folder");
    }
    cmd.env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_BASE_URL", model.base())
        .env("COPILOT_PROVIDER_API_KEY", "sk-ant-scripted")
        .env("COPILOT_MODEL", "claude-sonnet-4-5")
        .env("SAYSO_URL", base)
        .env("SAYSO_KEY", key);
    cmd
}

/// The model's turns: run `touch <file>` with `bash`, then stop.
fn touch(file: &str) -> Value {
    call(
        "bash",
        json!({"command": format!("touch {file}"), "description": "make a file"}),
    )
}

/// What the model read back from its last `bash` call.
fn read_back(model: &Model) -> String {
    model.result("bash")["text"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_hook_loads_only_in_a_trusted_folder_then_allows_denies_and_falls_back() {
    let Some(bin) = harness("copilot") else {
        return;
    };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    let installed = sb.install("copilot", &srv).await;
    // Installed, but not trusted: install's closing check says what `-p` needs.
    assert!(
        installed.stdout.contains("--trust-folder"),
        "{}",
        installed.both()
    );
    let model = Model::start(touch("untrusted.txt")).await;

    // Without --trust-folder, `copilot -p` skips the repository's hook without a word: the
    // command runs and nobody is asked. This is what the doctor warns about.
    let ran = run(
        copilot(&sb, &model, &bin, &srv.base, &srv.key, false),
        LIMIT,
    )
    .await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        sb.project().join("untrusted.txt").exists(),
        "Copilot skipped the hook and ran the command: {}",
        model.dump()
    );
    let (_, none) =
        crate::common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    assert_eq!(none["items"], json!([]), "nobody was asked");

    // With --trust-folder: Allow runs the command. Deny with a remark: it does not run, and
    // the model reads the remark.
    let trusted = || copilot(&sb, &model, &bin, &srv.base, &srv.key, true);
    let remark = "not on a Friday";
    let [allowed, denied] =
        allow_then_deny((&srv, &sb, &model), "bash", touch, trusted, remark).await;
    assert_eq!(
        allowed.asked["question"],
        "Copilot CLI wants to run: touch allowed.txt"
    );
    assert_eq!(allowed.ran.code, Some(0), "{}", allowed.ran.both());
    assert_eq!(denied.ran.code, Some(0), "{}", denied.ran.both());
    assert_eq!(
        denied.read["text"],
        "Denied by preToolUse hook: The person denied this on sayso: not on a Friday"
    );

    // The fallbacks: no answer in time, the server down, a bad key. None runs the command.
    for case in fallbacks(&srv) {
        model.script(touch(case.file));
        let cmd = copilot(&sb, &model, &bin, &case.base, &case.key, true);
        let ran = case.blocks(&sb, &model, cmd).await;
        assert_eq!(ran.code, Some(0), "{}", ran.both());
        let text = read_back(&model);
        assert!(
            text.starts_with("Denied by preToolUse hook: ") && text.contains(case.says),
            "{}: {text}",
            case.file
        );
    }

    // A folder trusted in Copilot's config loads the hook without the flag, and the doctor
    // says so.
    sb.write(
        "home/.copilot/config.json",
        &format!(
            "// User settings belong in settings.json.\n// This file is managed automatically.\n{}\n",
            json!({"trustedFolders": [sb.project()]})
        ),
    );
    let doctor = sb.sayso(&["hook", "doctor", "copilot"], &srv).await;
    assert_eq!(doctor.code, Some(0), "{}", doctor.both());
    assert!(
        doctor
            .stdout
            .contains("will run `sayso hook copilot` and obey it"),
        "{}",
        doctor.both()
    );
    model.script(touch("trusted.txt"));
    let mut cmd = copilot(&sb, &model, &bin, &srv.base, &srv.key, false);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
    let ran = run(cmd, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        !sb.project().join("trusted.txt").exists(),
        "the hook ran and, unanswered, blocked: {}",
        model.dump()
    );
    assert!(read_back(&model).contains("no answer in 2 s"));
}
