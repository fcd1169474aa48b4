//! What `sayso hook claude` spends deciding a plain command: from the harness's JSON input
//! to the policy's ruling (reading the input, reading the policy's JSON, reading the command
//! with bash's grammar, meeting the rules), in this process through
//! `sayso::hook::decide_offline`. Process start, reading stdin and finding the policy file are
//! not in it; a decision that asks the person waits for them, which is not the hook's time.

use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use sayso::hook::{Harness, decide_offline};

use crate::report::{Row, budget_row};

/// The budget of one decision.
const BUDGET_MS: f64 = 5.0;
/// Decisions timed per command; the row gives their median.
const ROUNDS: usize = 1_000;

/// The policy of docs/HARNESSES.md's example, as a hook reads it on every call.
const POLICY: &str = r#"{
  "read_only": "allow",
  "rules": [
    {"tool": "Bash|run_shell_command|bash|Shell", "command": "git status*", "decision": "allow"},
    {"tool": "Bash", "command": "cargo test*", "decision": "allow"},
    {"command": "rm -rf *", "decision": "deny", "reason": "never rm -rf; use make clean"},
    {"harness": "gemini", "tool": "write_file|replace", "path": "*.env*", "decision": "deny"},
    {"tool": "WebFetch", "host": "*.rust-lang.org", "decision": "allow"},
    {"command": "git push*", "decision": "ask", "step_up": "passkey"},
    {"command": "terraform apply*", "decision": "ask", "approvers": ["ana", "ben"], "required": 2},
    {"tool": "mcp__*", "decision": "ask"}
  ]
}"#;

/// A longer command of the kind agents send: a list, a pipe, a subshell, a substitution,
/// quotes and a redirection, each part meeting the rules on its own.
const COMPOUND: &str = "cd /work/app && git fetch origin main && (cargo build --release 2>&1 | \
tail -n 20) ; for f in $(git diff --name-only HEAD~1 | grep '\\.rs$'); do rustfmt --check \
\"$f\" || echo \"needs fmt: $f\"; done > /tmp/fmt.log";

/// The rows: `git status`, the compound command, and the first decision in the process (what
/// a hook, which decides once per process, pays before anything is warm).
pub fn hook_rows() -> Result<Vec<Row>> {
    let status = input("git status");
    let compound = input(COMPOUND);
    let started = Instant::now();
    let first = decide(&status)?;
    let first_ms = started.elapsed().as_secs_f64() * 1e3;
    if first != "allow" {
        bail!("the example policy rules `git status` {first}, not allow");
    }
    // A ruling, whatever it is: the compound command is read, not allowed (`;`, `>`).
    decide(&compound)?;
    Ok(vec![
        budget_row(
            "hook decision, plain command: git status, p50",
            median_ms(&status)?,
            BUDGET_MS,
        ),
        budget_row(
            "hook decision, plain command: compound, p50",
            median_ms(&compound)?,
            BUDGET_MS,
        ),
        budget_row(
            "hook decision, plain command: first call",
            first_ms,
            BUDGET_MS,
        ),
    ])
}

/// Claude Code's PreToolUse input for a Bash call.
fn input(command: &str) -> String {
    serde_json::json!({
        "session_id": "bench",
        "cwd": "/work/app",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "bench"},
    })
    .to_string()
}

fn decide(input: &str) -> Result<&'static str> {
    decide_offline(Harness::Claude, input, Some(POLICY))
        .map(|(rule, _)| rule)
        .map_err(|e| anyhow!("the hook would not rule: {e}"))
}

/// The median time of [`ROUNDS`] decisions of `input`, in milliseconds.
fn median_ms(input: &str) -> Result<f64> {
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        std::hint::black_box(decide(std::hint::black_box(input))?);
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
