//! Copilot CLI 1.0.102 under `copilot -p`, offline on its bring-your-own-model variables: the
//! `preToolUse` hook `sayso hook install copilot` writes, which `-p` loads only in a trusted
//! folder (`--trust-folder`, or `trustedFolders` in `~/.copilot/config.json`).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::rig::{Model, Ran, Sandbox, harness, run};
use crate::run::{pending_decision, server};

const LIMIT: Duration = Duration::from_secs(120);

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

async fn ended(child: Child) -> Ran {
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("copilot finishes")
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The model's turns: run `touch <file>` with `bash`, then stop.
fn touch(file: &str) -> Value {
    json!([
        {"tool": {"name": "bash", "input": {"command": format!("touch {file}"), "description": "make a file"}}},
        {"text": "Done."}
    ])
}

/// What the model read back from its last `bash` call.
fn read_back(model: &Model) -> String {
    model
        .tool_result("bash")
        .unwrap_or_else(|| panic!("no bash result reached the model: {}", model.dump()))["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `sayso hook <verb> copilot` in the project, as a person runs it there.
async fn sayso(sb: &Sandbox, verb: &str, base: &str, key: &str) -> Ran {
    let mut cmd = sb.command(Path::new(crate::rig::BIN));
    cmd.args(["hook", verb, "copilot"])
        .env("SAYSO_URL", base)
        .env("SAYSO_KEY", key);
    run(cmd, LIMIT).await
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_hook_loads_only_in_a_trusted_folder_then_allows_denies_and_falls_back() {
    let Some(bin) = harness("copilot") else {
        return;
    };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    let installed = sayso(&sb, "install", &srv.base, &srv.key).await;
    assert_eq!(installed.code, Some(0), "{}", installed.both());
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

    // With --trust-folder: Allow runs the command.
    model.script(touch("allowed.txt"));
    let child = copilot(&sb, &model, &bin, &srv.base, &srv.key, true)
        .spawn()
        .unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(d["question"], "Copilot CLI wants to run: touch allowed.txt");
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = ended(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        sb.project().join("allowed.txt").exists(),
        "the allowed command ran: {}",
        model.dump()
    );

    // Deny with a remark: it does not run, and the model reads the remark.
    model.script(touch("denied.txt"));
    let child = copilot(&sb, &model, &bin, &srv.base, &srv.key, true)
        .spawn()
        .unwrap();
    let d = pending_decision(&srv).await;
    let (status, body) = srv
        .answer(
            d["web_url"].as_str().unwrap(),
            json!({"value": "Deny", "remark": "not on a Friday"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = ended(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(!sb.project().join("denied.txt").exists());
    assert_eq!(
        read_back(&model),
        "Denied by preToolUse hook: The person denied this on sayso: not on a Friday"
    );

    // The fallbacks: no answer in time, the server down, a bad key. None runs the command.
    let down = format!("http://127.0.0.1:{}", closed_port());
    let cases = [
        (
            "late.txt",
            srv.base.as_str(),
            srv.key.as_str(),
            "no answer in 2 s",
        ),
        ("down.txt", down.as_str(), srv.key.as_str(), "sayso"),
        ("badkey.txt", srv.base.as_str(), "sk_not_a_key", "sayso"),
    ];
    for (file, base, key, says) in cases {
        model.script(touch(file));
        let mut cmd = copilot(&sb, &model, &bin, base, key, true);
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
        let ran = run(cmd, LIMIT).await;
        assert_eq!(ran.code, Some(0), "{}", ran.both());
        assert!(
            !sb.project().join(file).exists(),
            "{file}: the command ran: {}",
            model.dump()
        );
        let text = read_back(&model);
        assert!(
            text.starts_with("Denied by preToolUse hook: ") && text.contains(says),
            "{file}: {text}"
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
    let doctor = sayso(&sb, "doctor", &srv.base, &srv.key).await;
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
