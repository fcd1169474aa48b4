//! gemini-cli: the `BeforeTool` hook `sayso hook install gemini` writes, under
//! `gemini -p --yolo` in a trusted folder; and seed 002's ask tool at `/mcp/gemini` through
//! gemini-cli's own MCP client.

use std::path::Path;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::common::mcp_py::pending_web_url;
use crate::common::seeds::gemini::{ANSWERS, RESULT, questions};
use crate::rig::{
    LIMIT, Model, Sandbox, answered, call, ended_once_answered, fallbacks, harness, last_result,
    run,
};
use crate::run::server;

/// gemini-cli's own settings in the sandbox: the model key, and `extra` merged in.
fn user_settings(sb: &Sandbox, extra: Value) {
    let mut s = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    sb.write("home/.gemini/settings.json", &s.to_string());
}

/// The folder trust gemini-cli needs to read the project's settings (and its hooks).
fn trust_project(sb: &Sandbox) {
    let rules = json!({ sb.project().display().to_string(): "TRUST_FOLDER" });
    sb.write("home/.gemini/trustedFolders.json", &rules.to_string());
}

/// `gemini -p PROMPT ARGS` in the sandbox, its model the scripted endpoint.
fn gemini(
    sb: &Sandbox,
    bin: &Path,
    model: &Model,
    sayso: &[(&str, &str)],
    args: &[&str],
) -> Command {
    let mut cmd = sb.command(bin);
    cmd.args(["-p", "Do what the task says."])
        .args(args)
        .env("GOOGLE_GEMINI_BASE_URL", model.base())
        .env("GEMINI_API_KEY", "scripted-gemini-key");
    for (k, v) in sayso {
        cmd.env(k, v);
    }
    cmd
}

/// The shell tool, touching `file`, then a closing text.
fn touch(file: &str) -> Value {
    call(
        "run_shell_command",
        json!({"command": format!("touch {file}")}),
    )
}

/// What the model was handed back from `tool` in the requests after the first `from`.
fn result_since(model: &Model, from: usize, tool: &str) -> Option<Value> {
    last_result(&model.requests()[from..], tool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_hook_allows_denies_with_the_remark_and_falls_back_to_deny() {
    let Some(bin) = harness("gemini") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    user_settings(&sb, json!({}));
    // Install trusts the project, as gemini-cli's own trust dialog would.
    let said = sb.install("gemini", &srv).await;
    assert!(said.stdout.contains("trusted "), "{}", said.both());
    let model = Model::start(touch("allowed.txt")).await;
    let key = srv.key.as_str();
    let env = [("SAYSO_URL", srv.base.as_str()), ("SAYSO_KEY", key)];
    let report = sb.sayso(&["hook", "doctor", "gemini"], &srv).await;
    assert_eq!(report.code, Some(0), "{}", report.both());

    // Untrusted, the doctor names the folder trust first; `--skip-trust` then starts without
    // the project's settings, so the command runs and nobody is asked.
    sb.write("home/.gemini/trustedFolders.json", "{}");
    let report = sb.sayso(&["hook", "doctor", "gemini"], &srv).await;
    assert_eq!(report.code, Some(1), "{}", report.both());
    assert!(
        report.stdout.contains("The one thing to fix first: add \""),
        "{}",
        report.both()
    );
    model.script(touch("skipped.txt"));
    let ran = run(
        gemini(&sb, &bin, &model, &env, &["--yolo", "--skip-trust"]),
        LIMIT,
    )
    .await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        sb.project().join("skipped.txt").exists(),
        "{}",
        model.dump()
    );
    let (_, page) =
        crate::common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    assert_eq!(page["items"], json!([]), "--skip-trust never ran the hook");
    // Without --skip-trust, headless gemini-cli refuses an untrusted folder outright.
    let ran = run(gemini(&sb, &bin, &model, &env, &["--yolo"]), LIMIT).await;
    assert_ne!(ran.code, Some(0), "{}", ran.both());
    assert!(ran.stderr.contains("trusted directory"), "{}", ran.both());

    // Installing again trusts the project again.
    assert!(sb.install("gemini", &srv).await.stdout.contains("trusted "));
    let report = sb.sayso(&["hook", "doctor", "gemini"], &srv).await;
    assert_eq!(report.code, Some(0), "{}", report.both());

    // Allow: the command runs.
    model.script(touch("allowed.txt"));
    let from = model.requests().len();
    let yolo = || gemini(&sb, &bin, &model, &env, &["--yolo"]);
    let (ran, d) = answered(&srv, yolo(), json!({"value": "Allow"})).await;
    assert_eq!(d["question"], "Gemini CLI wants to run: touch allowed.txt");
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        sb.project().join("allowed.txt").exists(),
        "{}",
        model.dump()
    );
    let r = result_since(&model, from, "run_shell_command").expect("the result reached the model");
    assert_eq!(r["error"], false, "{r}");

    // Deny with a remark: the command does not run, and the model reads the remark.
    model.script(touch("denied.txt"));
    let from = model.requests().len();
    let deny = json!({"value": "Deny", "remark": "not on Fridays"});
    let (ran, _) = answered(&srv, yolo(), deny).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(!sb.project().join("denied.txt").exists());
    let r = result_since(&model, from, "run_shell_command").expect("the refusal reached the model");
    assert_eq!(r["error"], true, "{r}");
    let text = r["text"].as_str().unwrap();
    assert!(text.starts_with("Tool execution blocked: "), "{text}");
    assert!(text.contains("not on Fridays"), "{text}");

    // The fallbacks: nobody answers in time, the server is down, the key is refused.
    for case in fallbacks(&srv) {
        model.script(touch(case.file));
        let from = model.requests().len();
        let env = [("SAYSO_URL", case.base.as_str()), ("SAYSO_KEY", &case.key)];
        let cmd = gemini(&sb, &bin, &model, &env, &["--yolo"]);
        let ran = case.blocks(&sb, &model, cmd).await;
        let file = case.file;
        assert_eq!(ran.code, Some(0), "{file}: {}", ran.both());
        let r = result_since(&model, from, "run_shell_command")
            .unwrap_or_else(|| panic!("{file}: no refusal reached the model: {}", model.dump()));
        assert_eq!(r["error"], true, "{file}: {r}");
        let text = r["text"].as_str().unwrap();
        assert!(
            text.starts_with("Tool execution blocked: ") && text.contains(case.says),
            "{file}: {text}"
        );
        // The open question's link answers it: the model never reads it.
        assert!(!text.contains("/d/"), "{file}: {text}");
    }
}

/// Seed 002's four question types, as the model sends them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_asks_through_its_own_mcp_client_under_dash_p() {
    let Some(bin) = harness("gemini") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    trust_project(&sb);
    user_settings(
        &sb,
        json!({"mcpServers": {"sayso": {
            "httpUrl": format!("{}/mcp/gemini", srv.base),
            "headers": {"Authorization": format!("Bearer {}", srv.key)},
            "timeout": 660000,
            "trust": true
        }}}),
    );
    let tool = "mcp_sayso_ask_the_user";
    let model = Model::start(json!([
        {"tool": {"name": tool, "input": {"questions": questions()}}},
        {"text": "Done."}
    ]))
    .await;

    let child = gemini(&sb, &bin, &model, &[], &["--yolo"]).spawn().unwrap();
    let web_url = pending_web_url(&srv).await;
    ended_once_answered(&srv, &web_url, &ANSWERS, child).await;
    let offered = model.tools_offered();
    assert!(offered.iter().any(|t| t == tool), "{offered:?}");
    assert!(
        !offered.iter().any(|t| t == "mcp_sayso_ask_user"),
        "{offered:?}"
    );
    let r = model
        .tool_result(tool)
        .expect("the answer reached the model");
    assert_eq!(r["error"], false, "{r}");
    // gemini-cli wraps every MCP text it hands the model in <untrusted_context>; inside it is
    // seed 002's result, exactly.
    assert_eq!(
        r["text"],
        format!("<untrusted_context>\n{RESULT}\n</untrusted_context>")
    );

    // Without --yolo, `gemini -p` keeps the ask tool (the server is trusted) but offers no
    // shell, write or replace tool at all.
    model.script(json!([{"text": "Done."}]));
    let from = model.turns().len();
    let ran = run(gemini(&sb, &bin, &model, &[], &[]), LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    let turns = model.turns();
    let offered: Vec<&str> = turns[from]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(offered.contains(&tool), "{offered:?}");
    for gone in ["run_shell_command", "write_file", "replace"] {
        assert!(
            !offered.contains(&gone),
            "{gone} offered without --yolo: {offered:?}"
        );
    }
}
