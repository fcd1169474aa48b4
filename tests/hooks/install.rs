//! `sayso hook install`: merged into the settings already there, never overwriting them.

use serde_json::{Value, json};

use crate::run::{BIN, Dir, hook_command};

async fn install(dir: &Dir, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["hook", "install"];
    all.extend_from_slice(args);
    let mut cmd = hook_command(dir.path(), "http://127.0.0.1:9", None, &all);
    cmd.stdin(std::process::Stdio::null());
    let out = cmd.output().await.unwrap();
    let _ = BIN;
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn claude_settings_keep_what_they_had_and_gain_one_hook() {
    let dir = Dir::new();
    let before = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
}"#;
    dir.write(".claude/settings.json", before);
    let d = dir.path().display().to_string();

    let (code, out, err) = install(&dir, &["claude", "--dir", &d, "--dry-run"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("sayso hook install would change")
            && out.contains("\nwould add to hooks.PreToolUse and hooks.Elicitation and hooks.PostToolUse and hooks.PostToolUseFailure and hooks.PermissionDenied in "),
        "{out}"
    );
    assert!(out.contains("\"timeout\": 930"), "{out}");
    assert_eq!(
        dir.read(".claude/settings.json"),
        before,
        "--dry-run writes nothing"
    );

    let (code, out, err) = install(&dir, &["claude", "--dir", &d]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("sayso hook install changes")
            && out.contains(
                "\nadded `sayso hook claude` to hooks.PreToolUse and hooks.Elicitation and \
                 hooks.PostToolUse and hooks.PostToolUseFailure and hooks.PermissionDenied in "
            ),
        "{out}"
    );
    let after = json_of(&dir.read(".claude/settings.json"));
    let mut expected = json_of(before);
    let entry = json!(
        {"matcher": "*", "hooks": [{"type": "command", "command": "sayso hook claude", "timeout": 930}]}
    );
    expected["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(entry.clone());
    for event in [
        "Elicitation",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionDenied",
    ] {
        expected["hooks"][event] = json!([entry.clone()]);
    }
    assert_eq!(after, expected);

    // Once is enough.
    let (code, out, _) = install(&dir, &["claude", "--dir", &d]).await;
    assert_eq!(code, 0);
    assert!(out.contains("already runs `sayso hook claude`"), "{out}");
    assert_eq!(json_of(&dir.read(".claude/settings.json")), expected);
}

/// An install made before the hook served MCP elicitations, and calls settled without it,
/// gains those entries when run again, and one that put the hook under `PermissionRequest`
/// keeps it there.
#[tokio::test]
async fn claude_gains_the_elicitation_hook_beside_an_earlier_install() {
    let dir = Dir::new();
    let d = dir.path().display().to_string();
    let entry = json!(
        {"matcher": "*", "hooks": [{"type": "command", "command": "sayso hook claude", "timeout": 930}]}
    );
    for event in ["PreToolUse", "PermissionRequest"] {
        let before = json!({"hooks": {event: [entry.clone()]}});
        dir.write(".claude/settings.json", &before.to_string());
        let (code, out, err) = install(&dir, &["claude", "--dir", &d]).await;
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(
                "\nadded `sayso hook claude` to hooks.Elicitation and hooks.PostToolUse and \
                 hooks.PostToolUseFailure and hooks.PermissionDenied in "
            ),
            "{event}: {out}"
        );
        let mut expected = before.clone();
        for also in [
            "Elicitation",
            "PostToolUse",
            "PostToolUseFailure",
            "PermissionDenied",
        ] {
            expected["hooks"][also] = json!([entry.clone()]);
        }
        assert_eq!(json_of(&dir.read(".claude/settings.json")), expected);
        let (code, out, _) = install(&dir, &["claude", "--dir", &d]).await;
        assert_eq!(code, 0);
        assert!(out.contains("already runs `sayso hook claude`"), "{out}");
        assert_eq!(json_of(&dir.read(".claude/settings.json")), expected);
    }
}

#[tokio::test]
async fn each_harness_gets_its_file_and_unit() {
    let dir = Dir::new();
    let d = dir.path().display().to_string();
    for harness in ["codex", "gemini", "copilot", "cursor"] {
        let mut all = vec!["hook", "install", harness, "--dir", &d];
        all.push("--project");
        let mut cmd = hook_command(dir.path(), "http://127.0.0.1:9", None, &all);
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
        let out = cmd.output().await.unwrap();
        assert_eq!(out.status.code(), Some(0), "{harness}: {out:?}");
    }
    assert_eq!(
        json_of(&dir.read(".codex/hooks.json")),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "sayso hook codex", "timeout": 630}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "sayso hook codex", "timeout": 630}]}]}})
    );
    assert_eq!(
        json_of(&dir.read(".gemini/settings.json")),
        json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command|write_file|replace", "hooks": [
            {"name": "sayso", "type": "command", "command": "sayso hook gemini", "timeout": 630000}]}]}})
    );
    assert_eq!(
        json_of(&dir.read(".github/hooks/sayso.json")),
        json!({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "sayso hook copilot", "timeoutSec": 630}]}})
    );
    let entry = json!({"command": "sayso hook cursor", "timeout": 630});
    assert_eq!(
        json_of(&dir.read(".cursor/hooks.json")),
        json!({"version": 1, "hooks": {"beforeShellExecution": [entry], "beforeMCPExecution": [entry]}})
    );
}

#[tokio::test]
async fn user_settings_go_under_home_and_a_broken_file_is_left_alone() {
    let dir = Dir::new();
    let (code, out, err) = install(&dir, &["gemini", "--user"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("{}/.gemini/settings.json", dir.path().display())),
        "{out}"
    );

    dir.write(".cursor/hooks.json", "{\"version\": 1, \"hooks\": ");
    let (code, _, err) = install(&dir, &["cursor", "--user"]).await;
    assert_eq!(code, 3);
    assert!(
        err.contains("hooks.json is left as it is") && err.contains("not JSON"),
        "{err}"
    );
    assert_eq!(
        dir.read(".cursor/hooks.json"),
        "{\"version\": 1, \"hooks\": "
    );

    let (code, _, err) = install(&dir, &["copilot", "--user"]).await;
    assert_eq!(code, 3);
    assert!(err.contains(".github/hooks"), "{err}");
}
