//! Claude Code 2.1.328 under `claude -p`: the `PreToolUse` hook `sayso hook install claude`
//! writes; `--permission-prompt-tool mcp__sayso__approve` with sayso's MCP server in `.mcp.json`;
//! and `AskUserQuestion` at `/mcp/claude` through Claude Code's own MCP client.

use std::path::Path;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::common::server::{TestServer, send};
use crate::rig::{
    Answered, LIMIT, Model, Sandbox, allow_then_deny, call, ended, ended_once_answered, fallbacks,
    harness, run,
};
use crate::run::{answer_next, pending_decision, server};
use reqwest::Method;

const MODEL: &str = "claude-sonnet-4-5";

/// `claude -p` in the sandbox, its model the scripted endpoint, sayso at `base` with `key`.
fn claude(sb: &Sandbox, model: &Model, bin: &Path, base: &str, key: &str) -> Command {
    let mut cmd = sb.command(bin);
    cmd.args(["-p", "Do what the task says.", "--model", MODEL])
        .env("ANTHROPIC_BASE_URL", model.base())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        .env("SAYSO_URL", base)
        .env("SAYSO_KEY", key);
    cmd
}

/// The model's turns: run `touch <file>` with Bash, then stop.
fn touch(file: &str) -> Value {
    call(
        "Bash",
        json!({"command": format!("touch {file}"), "description": "make a file"}),
    )
}

/// What the model read back from its last call of `tool` (`read_back`), or from one result
/// (`without_reminders`), without the reminders Claude Code
/// itself appends to a result (`<system-reminder>` blocks), which are none of sayso's.
fn read_back(model: &Model, tool: &str) -> (String, bool) {
    without_reminders(&model.result(tool))
}

fn without_reminders(r: &Value) -> (String, bool) {
    let text = r["text"].as_str().unwrap().to_string();
    let (ours, rest) = text
        .split_once("\n\n<system-reminder>")
        .map_or((text.as_str(), ""), |(a, b)| (a, b));
    assert!(
        rest.is_empty() || rest.trim_end().ends_with("</system-reminder>"),
        "only Claude Code's reminders follow the result: {text:?}"
    );
    (ours.to_string(), r["error"] == true)
}

/// Checks an allowed and a denied run of `touch` (`allow_then_deny`): both asked in Claude
/// Code's words, Claude Code ending well, the model reading a success and then an error;
/// returns what it read of the denial.
fn checked([allowed, denied]: &[Answered; 2]) -> String {
    for (run, file) in [(allowed, "allowed.txt"), (denied, "denied.txt")] {
        assert_eq!(
            run.asked["question"],
            format!("Claude Code wants to run: touch {file}")
        );
        assert_eq!(run.ran.code, Some(0), "{}", run.ran.both());
    }
    assert_eq!(allowed.read["error"], false, "{}", allowed.read);
    let (text, error) = without_reminders(&denied.read);
    assert!(error, "a denial is the tool's error: {text}");
    text
}

/// A sandbox with `sayso hook install claude` run in its project.
async fn installed(srv: &TestServer) -> Sandbox {
    let sb = Sandbox::new();
    let out = sb.install("claude", srv).await;
    assert!(
        out.stdout
            .contains("will run `sayso hook claude` and obey it"),
        "{}",
        out.both()
    );
    sb
}

/// The policy rule that asks for the person's passkey before a push.
fn passkey_for_push(sb: &Sandbox) {
    sb.write(
        "project/.sayso/policy.json",
        r#"{"rules": [{"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"}]}"#,
    );
}

fn mcp_json(sb: &Sandbox, srv: &TestServer, path: &str) {
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"sayso": {
            "type": "http",
            "url": format!("{}{path}", srv.base),
            "headers": {"Authorization": format!("Bearer {}", srv.key)}
        }}})
        .to_string(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_hook_allows_denies_with_the_remark_and_every_fallback_blocks() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = installed(&srv).await;
    let model = Model::start(json!([])).await;
    let claude = |base: &str, key: &str| claude(&sb, &model, &bin, base, key);

    // Allow: the tool runs. Deny with a remark: it does not run, and the model reads the
    // remark.
    let hooked = || claude(&srv.base, &srv.key);
    let remark = "not on a Friday";
    let runs = allow_then_deny((&srv, &sb, &model), "Bash", touch, hooked, remark).await;
    assert_eq!(
        checked(&runs),
        "PreToolUse:Bash hook error: The person denied this on sayso: not on a Friday"
    );

    // The fallbacks: no answer in time, the server down, a bad key. None runs the tool.
    for case in fallbacks(&srv) {
        model.script(touch(case.file));
        let ran = case
            .blocks(&sb, &model, claude(&case.base, &case.key))
            .await;
        assert_eq!(ran.code, Some(0), "{}", ran.both());
        let (text, error) = read_back(&model, "Bash");
        assert!(error && text.contains(case.says), "{}: {text}", case.file);
    }

    // `disableAllHooks` in the project's local settings wins over the hook: the doctor fails
    // on it, and with an allow rule the command runs with nobody asked.
    sb.write(
        "project/.claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let doctor = sb.sayso(&["hook", "doctor", "claude"], &srv).await;
    assert_eq!(doctor.code, Some(1), "{}", doctor.both());
    assert!(
        doctor
            .stdout
            .contains("settings.local.json sets \"disableAllHooks\": true"),
        "{}",
        doctor.both()
    );
    model.script(touch("unhooked.txt"));
    let mut cmd = claude(&srv.base, &srv.key);
    cmd.args(["--allowedTools", "Bash(touch:*)"]);
    let ran = run(cmd, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        sb.project().join("unhooked.txt").exists(),
        "{}",
        model.dump()
    );
    let (_, all) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert!(
        !all.to_string().contains("unhooked.txt"),
        "nobody was asked: {all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_p_asks_sayso_through_the_permission_prompt_tool() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    mcp_json(&sb, &srv, "/mcp");
    let model = Model::start(json!([])).await;
    let prompt = || {
        let mut cmd = claude(&sb, &model, &bin, &srv.base, &srv.key);
        cmd.args(["--permission-prompt-tool", "mcp__sayso__approve"]);
        cmd
    };
    let remark = "use the build directory";
    let runs = allow_then_deny((&srv, &sb, &model), "Bash", touch, prompt, remark).await;
    assert_eq!(
        checked(&runs),
        "The person denied this on sayso: use the build directory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_asks_at_mcp_claude_and_its_model_reads_seed_003s_text() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = Sandbox::new();
    mcp_json(&sb, &srv, "/mcp/claude");
    const ASK: &str = "mcp__sayso__AskUserQuestion";
    let questions = json!([
        {"question": "Which layout should the dashboard use?", "header": "Layout", "options": [
            {"label": "Top bar", "description": "Navigation across the top", "preview": "```\n[nav]\ncontent\n```"},
            {"label": "Sidebar", "description": "Navigation down the left"}]},
        {"question": "Which widgets should it show?", "header": "Widgets", "multiSelect": true, "options": [
            {"label": "Revenue", "description": "Money in"},
            {"label": "Signups", "description": "New accounts"}]}
    ]);
    // Claude Code lists MCP tools only by name and loads one through its tool search.
    let model = Model::start(json!([
        {"tool": {"name": "ToolSearch", "input": {"query": format!("select:{ASK}"), "max_results": 5}}},
        {"tool": {"name": ASK, "input": {"questions": questions}}},
        {"text": "Done."}
    ]))
    .await;
    let mut cmd = claude(&sb, &model, &bin, &srv.base, &srv.key);
    cmd.args(["--allowedTools", ASK]);
    let child = cmd.spawn().unwrap();
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap().to_string();
    let answer = [
        ("Which layout should the dashboard use?", "Top bar"),
        ("Which widgets should it show?", "Revenue"),
        ("Which widgets should it show?", "__other__"),
        ("other:Which widgets should it show?", "Churn"),
        ("note:Which widgets should it show?", "revenue matters most"),
    ];
    ended_once_answered(&srv, &web_url, &answer, child).await;

    let first = &model.turns()[0];
    assert!(
        !model.tools_offered().iter().any(|t| t == ASK) && first.to_string().contains(ASK),
        "the tool is named to the model, not listed, until its tool search loads it: {:?}",
        model.tools_offered()
    );
    let (text, error) = read_back(&model, ASK);
    assert!(!error);
    assert_eq!(
        text,
        "User has answered your questions: \
         \"Which layout should the dashboard use?\"=\"Top bar\" selected preview:\n```\n[nav]\ncontent\n```, \
         \"Which widgets should it show?\"=\"Revenue, Churn\" user notes: revenue matters most. \
         You can now continue with the user's answers in mind."
    );

    // With the tool search off, Claude Code lists the tool itself; answers given in the call
    // come back at once, in the same words.
    model.script(json!([
        {"tool": {"name": ASK, "input": {
            "questions": [questions[0].clone()],
            "answers": {"Which layout should the dashboard use?": "Sidebar"}}}},
        {"text": "Done."}
    ]));
    let mut cmd = claude(&sb, &model, &bin, &srv.base, &srv.key);
    cmd.args(["--allowedTools", ASK])
        .env("ENABLE_TOOL_SEARCH", "false");
    let ran = run(cmd, LIMIT).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    let last = model.turns().last().cloned().unwrap();
    assert!(
        last["tools"].as_array().unwrap().iter().any(|t| t == ASK),
        "{last}"
    );
    let (text, _) = read_back(&model, ASK);
    assert_eq!(
        text,
        "User has answered your questions: \
         \"Which layout should the dashboard use?\"=\"Sidebar\". \
         You can now continue with the user's answers in mind."
    );
}

/// Claude Code started in `sb`, its model running the Bash `command` (`description`), then
/// `git push --force origin main`, then stopping.
async fn push_after(
    sb: &Sandbox,
    bin: &Path,
    srv: &TestServer,
    command: &str,
    description: &str,
) -> (Model, Child) {
    let model = Model::start(json!([
        {"tool": {"name": "Bash", "input": {"command": command, "description": description}}},
        {"tool": {"name": "Bash", "input": {"command": "git push --force origin main", "description": "publish"}}},
        {"text": "Done."}
    ]))
    .await;
    let child = claude(sb, &model, bin, &srv.base, &srv.key)
        .spawn()
        .unwrap();
    (model, child)
}

/// The question the person is asked about the agent's `git push --force origin main`, which
/// the sandbox's policy rule wants the passkey for.
async fn pending_push(srv: &TestServer) -> Value {
    let push = pending_decision(srv).await;
    assert_eq!(
        push["question"], "Claude Code wants to run: git push --force origin main",
        "{push}"
    );
    assert_eq!(push["step_up"], "passkey", "{push}");
    push
}

/// The person denies `push`; Claude Code then ends well, its model reading the refusal,
/// whose text this returns.
async fn deny_push(srv: &TestServer, push: &Value, model: &Model, child: Child) -> String {
    let (status, body) = srv
        .answer(push["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = ended(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    let (text, error) = read_back(model, "Bash");
    assert!(error, "the push was refused: {text}");
    text
}

/// An agent whose session holds "Allow for this session" for Bash goes on to a push that a
/// policy rule wants the person's passkey for: the real Claude Code's hook still asks, and
/// without the passkey the push never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_session_allowance_does_not_pass_a_passkey_rule() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = installed(&srv).await;
    passkey_for_push(&sb);
    let (model, child) = push_after(&sb, &bin, &srv, "touch first.txt", "make a file").await;

    // The first call, where no rule matched: the person allows Bash for the session.
    let first = answer_next(&srv, json!({"value": "Allow for this session"})).await;
    assert_eq!(
        first["question"],
        "Claude Code wants to run: touch first.txt"
    );

    // The push is put to the person all the same, needing the passkey; they deny it.
    let push = pending_push(&srv).await;
    let (status, body) = srv
        .answer(push["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(
        status, 422,
        "an Allow without the passkey counts for nothing: {body}"
    );
    let text = deny_push(&srv, &push, &model, child).await;
    assert!(sb.project().join("first.txt").exists(), "{}", model.dump());
    assert!(text.contains("The person denied this on sayso"), "{text}");
}

/// After `cd sub` the real Claude Code's hook runs in the subfolder: the push there still
/// meets the project's step-up rule (the policy is found from the project's root), and is
/// filed under the project's root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_after_cd_into_a_subfolder_still_meets_the_projects_passkey_rule() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = installed(&srv).await;
    passkey_for_push(&sb);
    sb.write("project/sub/README.md", "a subfolder\n");
    let (model, child) = push_after(&sb, &bin, &srv, "cd sub", "go to sub").await;

    let cd = answer_next(&srv, json!({"value": "Allow"})).await;
    assert_eq!(cd["question"], "Claude Code wants to run: cd sub", "{cd}");

    let push = pending_push(&srv).await;
    let root = std::fs::canonicalize(sb.project()).unwrap();
    // The hook was called from the subfolder, as the person's page shows it ("In: …/sub").
    let id = uuid::Uuid::parse_str(push["decision_id"].as_str().unwrap()).unwrap();
    let stored = srv.svc.store().decision(None, id).await.unwrap().unwrap();
    let context = stored.spec.context_md.unwrap_or_default();
    assert!(
        context.contains("/sub`"),
        "the push runs in the subfolder: {context}"
    );
    assert_eq!(push["project"], root.display().to_string(), "{push}");
    deny_push(&srv, &push, &model, child).await;
}

/// Sets the timeout Claude Code gives every hook entry in `file` (its settings, as `sayso
/// hook install` wrote them), in seconds.
fn set_hook_timeout(file: &Path, seconds: u64) {
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    for event in settings["hooks"].as_object_mut().unwrap().values_mut() {
        for group in event.as_array_mut().unwrap() {
            for hook in group["hooks"].as_array_mut().unwrap() {
                hook["timeout"] = json!(seconds);
            }
        }
    }
    std::fs::write(file, settings.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_killing_its_hook_mid_wait_withdraws_the_question() {
    let Some(bin) = harness("claude") else { return };
    let (_db, srv) = server().await;
    let sb = installed(&srv).await;
    // Claude Code gives the hook 3 s, while the hook would wait 10 min: Claude Code kills
    // it mid-wait, as it does any hook past its timeout.
    set_hook_timeout(&sb.project().join(".claude/settings.json"), 3);
    let model = Model::start(touch("abandoned.txt")).await;
    let mut cmd = claude(&sb, &model, &bin, &srv.base, &srv.key);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let child = cmd.spawn().unwrap();
    let d = pending_decision(&srv).await;
    assert_eq!(
        d["question"],
        "Claude Code wants to run: touch abandoned.txt"
    );
    let id = d["decision_id"].as_str().unwrap();
    // Withdrawn, with nothing but Claude Code's kill to go on.
    crate::run::abandoned(&srv, id).await;
    let ran = ended(child).await;
    assert!(
        !sb.project().join("abandoned.txt").exists(),
        "the command ran: {}\n{}",
        ran.both(),
        model.dump()
    );
    // To Claude Code the killed hook is a failed one: it goes on with its own permission
    // check, which under `claude -p` without an allow rule refuses the call.
    let (text, error) = read_back(&model, "Bash");
    assert!(error && text.contains("needs approval"), "{text}");
    // The person's press afterwards changes nothing.
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(srv.get(id).await["status"], "cancelled");
}
