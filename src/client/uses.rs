//! `sayso list --allowed-by ALLOWANCE_ID`: the calls a standing allowance let through
//! without asking, oldest first, every page of them (`GET /v1/allowances/{id}/uses`), as a
//! table or as JSON lines. They are kept after the allowance ends or is revoked.

use std::io::Write;

use reqwest::Method;
use serde_json::Value;
use tokio::time::Instant;

use super::commands::{REQUEST_TIMEOUT, RETRY_WINDOW};
use super::http::Api;
use super::wait::EXIT_YES;
use crate::render::what_runs::subject;

/// The most characters of a call's command, file or input in the table.
const CALL_CHARS: usize = 100;

/// Lists the uses of the allowance `id`.
pub async fn list_uses(api: &Api, id: &str, json: bool) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut after: Option<i64> = None;
    let mut shown = 0usize;
    loop {
        let mut url = api.url(&["v1", "allowances", id, "uses"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", "200");
            if let Some(a) = after {
                q.append_pair("after", &a.to_string());
            }
        }
        let page = api
            .send(
                || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
                Instant::now() + RETRY_WINDOW,
            )
            .await?;
        for u in page["items"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if json {
                writeln!(out, "{u}")?;
            } else {
                if shown == 0 {
                    writeln!(out, "{:<24}  {:<10}  {:<24}  CALL", "AT", "TOOL", "SESSION")?;
                }
                writeln!(out, "{}", row(u))?;
            }
            shown += 1;
        }
        match page["next"].as_i64() {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    out.flush()?;
    if shown == 0 && !json {
        eprintln!("sayso: allowance {id} let no call through (or this inbox has none by that id)");
    }
    Ok(EXIT_YES)
}

/// One use: when, the tool, the session, and what ran on one line.
fn row(u: &Value) -> String {
    let call = &u["call"];
    let tool = call["tool_name"].as_str().unwrap_or_default();
    let what = subject(tool, &call["tool_input"], CALL_CHARS).with_note();
    format!(
        "{:<24}  {:<10}  {:<24}  {}",
        u["at"].as_str().unwrap_or_default(),
        tool,
        call["session_id"].as_str().unwrap_or("-"),
        what.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_says_what_ran() {
        let u = json!({"at": "2026-12-07T09:00:00Z", "call": {"tool_name": "Bash",
            "tool_input": {"command": "git status\n--short"}, "session_id": "s1"}});
        let r = row(&u);
        assert!(r.starts_with("2026-12-07T09:00:00Z"), "{r}");
        assert!(r.contains("Bash") && r.contains("s1"), "{r}");
        assert!(r.contains("git status"), "{r}");
    }
}
