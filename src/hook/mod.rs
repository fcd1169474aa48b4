//! `sayso hook <harness>`: the permission hook of Claude Code, Codex, gemini-cli, Copilot CLI
//! and Cursor. It reads the harness's JSON on stdin, applies the policy, asks the person
//! through the sayso server when the policy says so, and prints the harness's own
//! allow / deny / ask answer with the exit code it expects (docs/HARNESSES.md).
//!
//! It never allows by accident: bad input, a bad policy file, no key, a server that cannot
//! be reached and a person who does not answer in time all end in the configured fallback
//! (deny, or hand back to the terminal), with one line on stderr saying why.
//!
//! Uses `client`, `render` and `domain` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

mod abandon;
mod allowance;
mod ask;
mod call;
mod claude;
mod codex;
mod copilot;
mod cursor;
pub mod doctor;
mod edit;
mod elicitation;
mod elsewhere;
mod files;
mod gemini;
mod glob;
pub mod install;
mod pi;
pub mod pins;
mod policy;
mod project;
mod receipt;
mod reply;
mod touched;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use crate::client::args::{NotifyArg, ServerArgs};
use crate::client::http::Api;
use crate::domain::receipt::PublicKey;

pub use call::{Harness, ToolCall};
pub use reply::{Reply, Verdict};

/// The default wait for the person: 15 minutes.
pub const DEFAULT_WAIT_S: u64 = 900;
/// The most stdin read: a tool input larger than this is refused (and so denied).
const MAX_STDIN_BYTES: u64 = 4 * 1024 * 1024;
/// How long the harness has to hand over its stdin.
const STDIN_WAIT: Duration = Duration::from_secs(10);
/// How long the create keeps retrying a server that cannot be reached (within the deadline):
/// a restart, not an outage.
const CREATE_WINDOW: Duration = Duration::from_secs(10);

/// `sayso hook …`.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's PreToolUse or PermissionRequest hook, its Elicitation hook, and its
    /// PostToolUse, PostToolUseFailure and PermissionDenied hooks (a call settled without it).
    Claude(HookArgs),
    /// Codex's PreToolUse or PermissionRequest hook, and its PostToolUse hook.
    Codex(HookArgs),
    /// gemini-cli's BeforeTool hook.
    Gemini(HookArgs),
    /// Copilot CLI's preToolUse hook.
    Copilot(HookArgs),
    /// Cursor's beforeShellExecution and beforeMCPExecution hooks.
    Cursor(HookArgs),
    /// pi's `tool_call` gate, run by the extension `sayso hook install pi` writes.
    Pi(HookArgs),
    /// Add `sayso hook <harness>` to a harness's settings file, keeping what is there.
    Install(install::InstallArgs),
    /// Check that a harness, as configured here, will run the hook and obey it.
    Doctor(doctor::DoctorArgs),
    /// Started by the hook with its question: withdraws it if the hook is killed.
    #[command(hide = true)]
    Guard(abandon::GuardArgs),
}

/// What to do when the person's answer cannot be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fallback {
    /// Refuse the call, with the reason (and the link to the open question).
    Deny,
    /// Hand the question back to the harness's own prompt in the terminal.
    Ask,
}

/// The settings of `sayso hook <harness>`.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// How long to wait for the person, in seconds; keep it below the harness's own hook
    /// timeout (`sayso hook install` writes that as this plus a margin).
    #[arg(long, env = "SAYSO_HOOK_TIMEOUT_S", default_value_t = DEFAULT_WAIT_S)]
    pub timeout_s: u64,
    /// What to do when no answer can be had (timeout, server down, bad key, bad input).
    #[arg(long, env = "SAYSO_HOOK_FALLBACK", value_enum, default_value_t = Fallback::Deny)]
    pub fallback: Fallback,
    /// The policy file [default: the nearest .sayso/policy.json from the working directory
    /// up, else ~/.config/sayso/policy.json; none: read-only tools allowed, the rest asked].
    #[arg(long, env = "SAYSO_HOOK_POLICY")]
    pub policy: Option<PathBuf>,
    /// How the person hears of the question [server default: push].
    #[arg(long, env = "SAYSO_HOOK_NOTIFY", value_enum)]
    pub notify: Option<NotifyArg>,
    /// Print which rule decides this call and what it decides, then exit; asks nobody.
    #[arg(long)]
    pub explain: bool,
    /// The server's public receipt key: an Allow counts only with a receipt it signed
    /// [default: the key `sayso hook install` pinned for the server in
    /// ~/.config/sayso/receipt-keys.json; none: answers are taken unsigned].
    // The key is URL-safe base64, so one in 64 begins with `-`: it is still the value.
    #[arg(
        long,
        env = "SAYSO_HOOK_RECEIPT_KEY",
        value_name = "KEY",
        allow_hyphen_values = true
    )]
    pub receipt_key: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// A request may take until just past the deadline: the guard around it ends it first,
/// with the plainer reason.
fn request_timeout(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1)
}

/// Runs `sayso hook …` and ends the process with the harness's exit code.
pub async fn run(cmd: HookCommand) -> ! {
    let (harness, args) = match cmd {
        HookCommand::Claude(a) => (Harness::Claude, a),
        HookCommand::Codex(a) => (Harness::Codex, a),
        HookCommand::Gemini(a) => (Harness::Gemini, a),
        HookCommand::Copilot(a) => (Harness::Copilot, a),
        HookCommand::Cursor(a) => (Harness::Cursor, a),
        HookCommand::Pi(a) => (Harness::Pi, a),
        HookCommand::Install(a) => crate::client::exit(install::run(a).await.map(|()| 0)),
        HookCommand::Doctor(a) => crate::client::exit(doctor::run(a).await),
        HookCommand::Guard(a) => crate::client::exit(abandon::guard(a).await),
    };
    let reply = decide(harness, &args).await;
    if let Some(v) = &reply.stdout {
        // Not `println!`: a harness that stopped reading leaves a closed pipe, and the
        // reply then goes nowhere instead of ending the process in a panic.
        let _ = writeln!(std::io::stdout(), "{v}");
    }
    let _ = std::io::stdout().flush();
    std::process::exit(reply.exit.into())
}

/// Reads stdin, decides, and gives the reply to print.
async fn decide(harness: Harness, args: &HookArgs) -> Reply {
    let input = match read_stdin().await {
        Ok(v) => v,
        Err(why) => return unreadable(harness, &why),
    };
    // The harness settled a call itself (the person answered at its terminal, the tool ran,
    // or it refused the call): the question put for it is withdrawn.
    if elsewhere::is_settled_event(harness, &input) {
        return elsewhere::withdraw_settled(harness, &input, args).await;
    }
    // An MCP server's question, not a tool call: no policy applies.
    if harness == Harness::Claude && elicitation::is_elicitation(&input) {
        return elicitation::answer(&input, args).await;
    }
    let call = match parse(harness, &input) {
        Ok(call) => call,
        Err(why) => return unreadable(harness, &why),
    };
    let policy = match policy::Policy::load(args.policy.as_deref(), call.cwd.as_deref()) {
        Ok(p) => p,
        Err(why) if args.explain => {
            println!("error: {why}");
            return Reply {
                stdout: None,
                exit: 1,
            };
        }
        Err(why) => return fallback(&call, args.fallback, &why),
    };
    let ruling = policy.decide(&call);
    if args.explain {
        println!(
            "{}: {}",
            match ruling.decision {
                policy::Rule::Allow => "allow",
                policy::Rule::Deny => "deny",
                policy::Rule::Ask => "ask the person",
            },
            ruling.why
        );
        return Reply::nothing();
    }
    let verdict = match ruling.decision {
        policy::Rule::Allow => Verdict::allow(format!("sayso policy: {}", ruling.why)),
        policy::Rule::Deny => Verdict::deny(format!("sayso policy: {}", ruling.why)),
        policy::Rule::Ask => {
            let api = match Api::new(&args.server.server, args.server.key.as_deref()) {
                Ok(api) => api.quiet(),
                Err(e) => return fallback(&call, args.fallback, &e.to_string()),
            };
            let key = match receipt_key(args) {
                Ok(key) => key,
                Err(why) => return fallback(&call, args.fallback, &why),
            };
            let wait = Duration::from_secs(args.timeout_s);
            let started = tokio::time::Instant::now();
            let asked = ask::ask(
                &api,
                &call,
                wait,
                args.notify,
                &ruling,
                key.as_ref(),
                ask::Asking::Call,
            );
            let answered = match asked.await {
                Ok(v) => v,
                Err(no) => return fallback(&call, args.fallback, &no.reason),
            };
            // The person's edit is a call of its own: the policy decides it again.
            let left = wait.saturating_sub(started.elapsed());
            let held = edit::hold_to_policy(
                &api,
                &policy,
                &call,
                &ruling,
                answered,
                left,
                args.notify,
                key.as_ref(),
            );
            match held.await {
                Ok(v) => v,
                Err(no) => return fallback(&call, args.fallback, &no.reason),
            }
        }
    };
    render(&call, &verdict)
}

/// For the benchmark (bench/) only: what `sayso hook <harness>` rules on one tool call, from
/// the harness's JSON input to the policy's ruling, the way [`decide`] reaches it, with the
/// policy given as its JSON text (`None`: no policy file) instead of found on disk, and no
/// stdin, server or person. Gives `allow`, `deny` or `ask`, and why; an error for input the
/// hook would not rule on (not a tool call, or a bad policy).
pub fn decide_offline(
    harness: Harness,
    input_json: &str,
    policy_text: Option<&str>,
) -> Result<(&'static str, String), String> {
    let input: Value =
        serde_json::from_str(input_json).map_err(|e| format!("the input is not JSON: {e}"))?;
    if elsewhere::is_settled_event(harness, &input)
        || (harness == Harness::Claude && elicitation::is_elicitation(&input))
    {
        return Err("the input is not a tool call the policy rules on".into());
    }
    let call = parse(harness, &input)?;
    let policy = match policy_text {
        Some(text) => policy::Policy::parse(text)?,
        None => policy::Policy::default(),
    };
    let ruling = policy.decide(&call);
    let word = match ruling.decision {
        policy::Rule::Allow => "allow",
        policy::Rule::Deny => "deny",
        policy::Rule::Ask => "ask",
    };
    Ok((word, ruling.why))
}

/// The receipt key the hook holds the server to: the one given, else the one pinned for
/// the server. A key that cannot be read is an error, never "no key".
fn receipt_key(args: &HookArgs) -> Result<Option<PublicKey>, String> {
    match &args.receipt_key {
        Some(k) => PublicKey::parse(k)
            .map(Some)
            .map_err(|e| format!("--receipt-key / SAYSO_HOOK_RECEIPT_KEY: {e}")),
        None => pins::pinned(&args.server.server),
    }
}

/// Reads the harness's JSON, bounded in size and time.
async fn read_stdin() -> Result<Value, String> {
    let mut bytes = Vec::new();
    let read = async {
        tokio::io::stdin()
            .take(MAX_STDIN_BYTES + 1)
            .read_to_end(&mut bytes)
            .await
    };
    match tokio::time::timeout(STDIN_WAIT, read).await {
        Err(_) => return Err("stdin was not closed within 10 s".into()),
        Ok(Err(e)) => return Err(format!("cannot read stdin: {e}")),
        Ok(Ok(_)) => {}
    }
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err("stdin holds more than 4 MiB".into());
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("stdin is empty; the harness sends the tool call as JSON".into());
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("stdin is not JSON: {e}"))
}

/// The harness's input read into a tool call.
pub fn parse(harness: Harness, input: &Value) -> Result<ToolCall, String> {
    if !input.is_object() {
        return Err("stdin must hold a JSON object".into());
    }
    let mut call = match harness {
        Harness::Claude | Harness::Codex => claude::parse(harness, input),
        Harness::Gemini => gemini::parse(input),
        Harness::Copilot => copilot::parse(input),
        Harness::Cursor => cursor::parse(input),
        Harness::Pi => pi::parse(input),
    }?;
    call.project = call.cwd.as_deref().and_then(project::project_of);
    Ok(call)
}

/// The verdict in the harness's words.
pub fn render(call: &ToolCall, verdict: &Verdict) -> Reply {
    match call.harness {
        Harness::Claude | Harness::Codex => claude::reply(call, verdict),
        Harness::Gemini => gemini::reply(verdict),
        Harness::Copilot => copilot::reply(verdict),
        Harness::Cursor => cursor::reply(verdict),
        Harness::Pi => pi::reply(verdict),
    }
}

/// A command line that does not parse (a bad flag, or a `SAYSO_HOOK_*` variable with a bad
/// value) when a harness runs `sayso hook <harness>`: the harness's deny, never its "hook
/// failed" (which some read as go ahead). `None` when `argv` is not a hook run.
pub fn usage_error(argv: &[String], message: &str) -> Option<u8> {
    let at = argv.iter().position(|a| a == "hook")?;
    let harness = match argv.get(at + 1).map(String::as_str)? {
        "claude" => Harness::Claude,
        "codex" => Harness::Codex,
        "gemini" => Harness::Gemini,
        "copilot" => Harness::Copilot,
        "cursor" => Harness::Cursor,
        "pi" => Harness::Pi,
        _ => return None,
    };
    let first = message.lines().next().unwrap_or("bad arguments");
    let reply = unreadable(harness, first.trim_start_matches("error: "));
    if let Some(v) = &reply.stdout {
        println!("{v}");
    }
    Some(reply.exit)
}

/// Input that cannot be read always denies: without it, the hook cannot tell which event
/// it answers, so it uses the one form each harness reads as a refusal.
fn unreadable(harness: Harness, why: &str) -> Reply {
    let reason = format!("sayso hook {}: {why}; denied", harness.as_str());
    eprintln!("{reason}");
    match harness {
        Harness::Claude | Harness::Codex => claude::unreadable(),
        Harness::Gemini => gemini::unreadable(),
        Harness::Copilot => copilot::unreadable(&reason),
        Harness::Cursor => cursor::unreadable(&reason),
        Harness::Pi => pi::unreadable(&reason),
    }
}

/// The safe answer when the person's cannot be had, with its one line on stderr.
fn fallback(call: &ToolCall, fallback: Fallback, why: &str) -> Reply {
    let verdict = match fallback {
        Fallback::Deny => Verdict::deny(format!("sayso: {why}; denied")),
        Fallback::Ask => Verdict::ask(format!("sayso: {why}; asking here instead")),
    };
    // Not `eprintln!`: a harness that went away may have closed stderr too.
    let _ = writeln!(std::io::stderr(), "{}", verdict.reason());
    render(call, &verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"{"rules": [
        {"tool": "Bash", "command": "git status*", "decision": "allow"},
        {"command": "rm -rf *", "decision": "deny", "reason": "never rm -rf"}
    ]}"#;

    fn bash(command: &str) -> String {
        serde_json::json!({
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        })
        .to_string()
    }

    #[test]
    fn the_offline_decision_is_the_policys() {
        let rule = |c: &str, p| decide_offline(Harness::Claude, &bash(c), p).map(|r| r.0);
        assert_eq!(rule("git status", Some(POLICY)), Ok("allow"));
        assert_eq!(rule("cd x && rm -rf build", Some(POLICY)), Ok("deny"));
        assert_eq!(rule("git status && make", Some(POLICY)), Ok("ask"));
        // A shell running what it is piped is a doubt: it meets the deny rule too.
        assert_eq!(rule("git status; curl x | sh", Some(POLICY)), Ok("deny"));
        assert_eq!(rule("git status", None), Ok("ask"));
        assert!(decide_offline(Harness::Claude, "[", None).is_err());
        assert!(decide_offline(Harness::Claude, &bash("ls"), Some("{")).is_err());
    }
}
