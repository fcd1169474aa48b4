//! "Answered elsewhere": the harness settled a call itself, so the question the hook put for
//! it is withdrawn from the phone and every channel.
//!
//! Claude Code's `PermissionRequest` hook races its own terminal dialog and never stops the
//! loser: when the person answers at the terminal, the hook's question would stay open on the
//! phone, and a press on it later would be an answer nothing acts on. Whatever settled the
//! call, the harness then sends another event with the same `tool_use_id`: `PostToolUse`
//! (the tool ran), `PostToolUseFailure` (it ran and failed, or was interrupted) or
//! `PermissionDenied` (Claude Code refused it); Codex sends `PostToolUse`. `sayso hook
//! claude|codex` receiving one of these finds the pending question of that call and
//! withdraws it as `abandoned`, and prints nothing: none of these events takes an answer
//! that sayso has reason to give. The hook that was waiting on the question sees it settled
//! and ends.

use std::io::Write;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use tokio::time::Instant;

use super::HookArgs;
use super::call::{Harness, text};
use super::reply::Reply;
use crate::client::abandon::{WITHDRAW_WITHIN, withdraw};
use crate::client::http::Api;

/// Claude Code's events that say a call was settled without the hook.
const CLAUDE_EVENTS: [&str; 3] = ["PostToolUse", "PostToolUseFailure", "PermissionDenied"];
/// Codex's: it has no event for a refused call (a refusal there is its hook's own, or the
/// person's in its terminal, which ends the turn).
const CODEX_EVENTS: [&str; 1] = ["PostToolUse"];
/// The most pending decisions looked through (the API's largest page, five times): more
/// than any person leaves open.
const PAGES: usize = 5;
const PAGE: u32 = 200;

/// The events `harness` sends once a call is settled, which `sayso hook install` adds.
pub fn events(harness: Harness) -> &'static [&'static str] {
    match harness {
        Harness::Claude => &CLAUDE_EVENTS,
        Harness::Codex => &CODEX_EVENTS,
        _ => &[],
    }
}

/// Whether `input` is one of those events (rather than a call to decide).
pub fn is_settled_event(harness: Harness, input: &Value) -> bool {
    input["hook_event_name"]
        .as_str()
        .is_some_and(|e| events(harness).contains(&e))
}

/// Withdraws the open question of the call `input` names, if there is one, within 2 s; the
/// reply is always nothing, exit 0 (the call is the harness's, settled already). What went
/// wrong is one line on stderr.
pub async fn withdraw_settled(harness: Harness, input: &Value, args: &HookArgs) -> Reply {
    let event = text(input, "hook_event_name").unwrap_or_default();
    if args.explain {
        println!("{event}: nothing to decide; the open question of this call is withdrawn");
        return Reply::nothing();
    }
    let Some(call) = text(input, "tool_use_id").filter(|id| !id.is_empty()) else {
        // Nothing names the call: no question of the hook's can be told apart.
        return Reply::nothing();
    };
    if let Err(why) = withdraw_call(harness, &call, args).await {
        let _ = writeln!(
            std::io::stderr(),
            "sayso hook {}: {event}: {why}; the question of {call} stays open until its hook stops waiting",
            harness.as_str()
        );
    }
    Reply::nothing()
}

/// Finds the pending questions the hook put for call `call` (under either event, and a
/// person's edit asked again) and withdraws each.
async fn withdraw_call(harness: Harness, call: &str, args: &HookArgs) -> Result<(), String> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())
        .map_err(|e| e.to_string())?
        .quiet();
    let give_up = Instant::now() + WITHDRAW_WITHIN;
    for id in open_questions(&api, harness, call, give_up).await? {
        let left = give_up.saturating_duration_since(Instant::now());
        withdraw(&api, &id, left.max(Duration::from_millis(200)))
            .await
            .map_err(|e| format!("cannot withdraw decision {id}: {e}"))?;
    }
    Ok(())
}

/// The ids of the pending tool approvals the hook of `harness` put for call `call`.
async fn open_questions(
    api: &Api,
    harness: Harness,
    call: &str,
    give_up: Instant,
) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..PAGES {
        let mut url = api.url(&["v1", "decisions"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("status", "pending")
                .append_pair("kind", "choose")
                .append_pair("limit", &PAGE.to_string());
            if let Some(c) = &cursor {
                q.append_pair("cursor", c);
            }
        }
        let page = api
            .send(
                || api.request_until(Method::GET, url.clone(), give_up),
                give_up,
            )
            .await
            .map_err(|e| format!("cannot list the open questions: {e}"))?;
        let items = page["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        found.extend(
            items
                .iter()
                .filter(|d| is_question_of(d, harness, call))
                .filter_map(|d| d["decision_id"].as_str().map(str::to_string)),
        );
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    Ok(found)
}

/// Whether decision `d` is a tool approval the hook of `harness` put for call `call`. The
/// match is on what the hook writes; a look-alike an agent made with its key is its own
/// question, which it may withdraw anyway.
fn is_question_of(d: &Value, harness: Harness, call: &str) -> bool {
    let hook = &d["metadata"]["hook"];
    d["approval"].is_object() && hook["harness"] == harness.as_str() && hook["tool_use_id"] == call
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_events_of_a_settled_call_are_read_as_one() {
        let ev = |e: &str| json!({"hook_event_name": e, "tool_use_id": "toolu_1"});
        for e in ["PostToolUse", "PostToolUseFailure", "PermissionDenied"] {
            assert!(is_settled_event(Harness::Claude, &ev(e)), "{e}");
        }
        assert!(is_settled_event(Harness::Codex, &ev("PostToolUse")));
        assert!(!is_settled_event(Harness::Codex, &ev("PermissionDenied")));
        assert!(!is_settled_event(Harness::Claude, &ev("PreToolUse")));
        assert!(!is_settled_event(Harness::Gemini, &ev("PostToolUse")));
    }

    #[test]
    fn a_question_is_the_calls_only_by_harness_and_call_id() {
        let d = json!({"decision_id": "d1", "approval": {"tool_name": "Bash"},
            "metadata": {"hook": {"harness": "claude", "tool_use_id": "toolu_1"}}});
        assert!(is_question_of(&d, Harness::Claude, "toolu_1"));
        assert!(!is_question_of(&d, Harness::Claude, "toolu_2"));
        assert!(!is_question_of(&d, Harness::Codex, "toolu_1"));
        let plain = json!({"decision_id": "d2",
            "metadata": {"hook": {"harness": "claude", "tool_use_id": "toolu_1"}}});
        assert!(!is_question_of(&plain, Harness::Claude, "toolu_1"));
    }
}
