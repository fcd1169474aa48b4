//! pi: the `tool_call` gate of the extension `sayso hook install pi` writes
//! (integrations/pi/sayso.ts). The extension runs `sayso hook pi` with
//! `{"hook_event_name": "tool_call", "tool_name", "tool_call_id", "input", "cwd",
//! "session_id"}` on stdin and reads one line back: `{"decision": "allow" | "deny" | "ask",
//! "reason", "input"?}`. Anything else, and any exit but 0, blocks the call.
//!
//! pi hands a blocked call's reason to the model as the tool's error, so no reason printed
//! here carries the link the person answers at.

use std::path::Path;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::call::{Harness, ToolCall, event, named_call, text};
use super::reply::{Reply, Verdict, without_links};

/// The extension, as `sayso hook install pi` writes it (before its settings are filled in).
pub const EXTENSION: &str = include_str!("../../integrations/pi/sayso.ts");
const EVENT: &str = "tool_call";
const COMMAND_LINE: &str = "const HOOK_COMMAND = ";
const TIMEOUT_LINE: &str = "const HOOK_TIMEOUT_S = ";

/// The extension with the hook's command line and pi's timeout for it filled in.
pub fn extension(command: &str, timeout_s: u64) -> String {
    EXTENSION
        .lines()
        .map(|line| {
            if line.starts_with(COMMAND_LINE) {
                format!("{COMMAND_LINE}{};", Value::from(command))
            } else if line.starts_with(TIMEOUT_LINE) {
                format!("{TIMEOUT_LINE}{timeout_s};")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `sayso hook install pi`: writes the extension at `file` (replacing an older copy of
/// sayso's, never another file), or prints what it would write.
pub fn install(file: &Path, command: &str, timeout_s: u64, dry_run: bool) -> anyhow::Result<()> {
    let text = extension(command, timeout_s);
    match std::fs::read_to_string(file) {
        Ok(before) if before == text => {
            println!(
                "{} is sayso's extension, up to date; nothing to change",
                file.display()
            );
            return Ok(());
        }
        Ok(before) if settings_of(&before).is_none() => {
            bail!(
                "{} is not sayso's extension; it is left as it is",
                file.display()
            )
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    }
    if dry_run {
        println!(
            "would write sayso's pi extension ({} lines) to {}, running `{command}` with {timeout_s} s to answer",
            text.lines().count(),
            file.display()
        );
        return Ok(());
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    super::files::write_atomically(file, &text)?;
    println!(
        "wrote sayso's pi extension to {}: it runs `{command}` before every tool call and adds ask_user",
        file.display()
    );
    Ok(())
}

/// The command line and timeout an installed extension holds, if it reads as one.
pub fn settings_of(installed: &str) -> Option<(String, Option<u64>)> {
    let value = |prefix: &str| {
        installed
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(|v| v.trim().trim_end_matches(';').to_string())
    };
    let command = serde_json::from_str::<String>(&value(COMMAND_LINE)?).ok()?;
    let timeout = value(TIMEOUT_LINE).and_then(|t| t.parse().ok());
    Some((command, timeout))
}

/// Reads the extension's stdin JSON.
pub fn parse(v: &Value) -> Result<ToolCall, String> {
    Ok(ToolCall {
        tool_use_id: text(v, "tool_call_id"),
        ..named_call(Harness::Pi, event(v, &[EVENT])?, v, "input")?
    })
}

/// The verdict for the extension: allow (with the person's edited input, if any), deny or
/// ask, each with its reason.
pub fn reply(verdict: &Verdict) -> Reply {
    Reply::json(match verdict {
        Verdict::Allow {
            reason,
            updated_input,
        } => {
            let mut v = json!({"decision": "allow", "reason": without_links(reason)});
            if let Some(input) = updated_input {
                v["input"] = input.clone();
            }
            v
        }
        Verdict::Deny { reason } => json!({"decision": "deny", "reason": without_links(reason)}),
        Verdict::Ask { reason } => json!({"decision": "ask", "reason": without_links(reason)}),
    })
}

/// Input that cannot be read: the deny answer, which needs nothing from the input.
pub fn unreadable(reason: &str) -> Reply {
    reply(&Verdict::deny(reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_is_read_and_answered() {
        let v = json!({"hook_event_name": "tool_call", "tool_name": "bash",
            "tool_call_id": "toolu_1", "input": {"command": "rm -rf build"},
            "cwd": "/repo", "session_id": "s1"});
        let call = parse(&v).unwrap();
        assert_eq!(call.command(), Some("rm -rf build"));
        assert_eq!(call.tool_use_id.as_deref(), Some("toolu_1"));
        assert_eq!(
            reply(&Verdict::deny("The person denied this on sayso: no")).stdout,
            Some(json!({"decision": "deny", "reason": "The person denied this on sayso: no"}))
        );
        let edited = Verdict::allow_edited("ok", json!({"command": "ls"}));
        assert_eq!(reply(&edited).stdout.unwrap()["input"]["command"], "ls");
        assert!(parse(&json!({"hook_event_name": "x", "tool_name": "bash"})).is_err());
    }

    #[test]
    fn no_reason_carries_the_answer_link() {
        let r = reply(&Verdict::deny(
            "sayso: no answer in 2 s; still open at http://127.0.0.1:9/d/Secret; denied",
        ));
        let text = r.stdout.unwrap()["reason"].as_str().unwrap().to_string();
        assert_eq!(text, "sayso: no answer in 2 s; still open at sayso; denied");
        let r = reply(&Verdict::deny(
            "sayso: the question was expired without an answer (https://x/d/S); denied",
        ));
        assert!(!r.stdout.unwrap().to_string().contains("/d/S"));
    }

    #[test]
    fn the_installed_extension_holds_its_settings() {
        let text = extension("/opt/sayso hook pi --fallback deny", 90);
        assert_eq!(
            settings_of(&text),
            Some(("/opt/sayso hook pi --fallback deny".to_string(), Some(90)))
        );
        assert_eq!(
            settings_of(EXTENSION),
            Some(("sayso hook pi".to_string(), Some(930)))
        );
    }
}
