//! The earlier answers that let a call through without asking: an "Allow for this session"
//! (the person's answer to an earlier call of the session) and a standing allowance ("Allow
//! for 15 min", …). With a pinned receipt key each counts only as a receipt signed by that
//! key tells it: what the server lists is a claim, the receipt is the fact. For a standing
//! allowance that means the receipt of the Allow that made it signs exactly that allowance:
//! its scope and its end (`domain::allowance::Grant`).

use reqwest::Method;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;

use super::call::ToolCall;
use super::receipt::Checked;
use super::{CREATE_WINDOW, request_timeout};
use crate::client::http::Api;
use crate::domain::AnswerChannel;
use crate::domain::allowance::Scope;
use crate::domain::approval::{ALLOW, ALLOW_SESSION, MAX_RULE_CHARS};
use crate::domain::receipt::PublicKey;

/// How many of the project's latest answered decisions are looked through for an "Allow for
/// this session" (the API's largest page).
const SESSION_LOOKBACK: u32 = 200;

/// A standing allowance that covers the call, as its reason tells it.
pub(super) struct Standing {
    /// Its id, which the use is recorded under.
    pub id: String,
    /// Who allowed it.
    pub by: String,
    /// "2026-11-27 13:15 UTC".
    pub until: String,
}

/// Whether the person answered "Allow for this session" to this tool earlier in this
/// session: the server keeps those answers, and the hook looks for one among the project's
/// latest answered decisions. Only a tool approval for this harness, session and tool (its
/// `approval`, which the page showed the person, never `metadata`, which the asker writes)
/// that the server recorded as answered from the person's own side counts
/// (`answered_by.channel`: the feed, a notification, the mail). An API key cannot answer a
/// tool approval at all, a look-alike question it answers through its link says `link`, and
/// a plain question the person answers in the feed is no approval, so an agent cannot plant
/// an allowance for itself, nor talk the person into one with a question of its own. With a
/// pinned receipt key, the allowance counts only as its receipt tells it (a list something
/// between the hook and sayso wrote is no allowance).
pub(super) async fn session_allowed(
    api: &Api,
    call: &ToolCall,
    session: &str,
    rule: Option<&str>,
    deadline: Instant,
    key: Option<&PublicKey>,
) -> Result<bool, crate::client::http::Failure> {
    let mut url = api.url(&["v1", "decisions"]);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("status", "answered")
            .append_pair("kind", "choose")
            .append_pair("limit", &SESSION_LOOKBACK.to_string());
        if let Some(p) = &call.project {
            q.append_pair("project", p);
        }
    }
    let page = api
        .send(
            || api.request(Method::GET, url.clone(), request_timeout(deadline)),
            (Instant::now() + CREATE_WINDOW).min(deadline),
        )
        .await?;
    let empty = vec![];
    let items = page["items"].as_array().unwrap_or(&empty);
    let allows = |d: &Value| allows_session(d, call, session, rule);
    let Some(key) = key else {
        return Ok(items.iter().any(allows));
    };
    for d in items.iter().filter(|d| allows(d)) {
        let id = d["decision_id"].as_str().unwrap_or_default();
        let give_up = (Instant::now() + CREATE_WINDOW).min(deadline);
        match super::receipt::checked(api, id, key, None, give_up).await {
            Ok(checked) if allows(&checked.as_decision()) => return Ok(true),
            Ok(_) => {}
            Err(why) => eprintln!("sayso: an earlier allowance does not count: {why}"),
        }
    }
    Ok(false)
}

/// Whether the decision `d` is the person's "Allow for this session" of this call's tool, in
/// this call's project (the server filters by it; a reply that says another one counts not).
fn allows_session(d: &Value, call: &ToolCall, session: &str, rule: Option<&str>) -> bool {
    let gated = &d["approval"];
    let by_person = d["answered_by"]["channel"]
        .as_str()
        .and_then(AnswerChannel::parse)
        .is_some_and(AnswerChannel::is_person_side);
    let same_rule = match rule {
        Some(r) => gated["rule"] == r.chars().take(MAX_RULE_CHARS).collect::<String>(),
        None => gated.get("rule").is_none_or(Value::is_null),
    };
    d["outcome"] == ALLOW_SESSION
        && by_person
        && gated["harness"] == call.harness.as_str()
        && gated["session_id"] == session
        && gated["tool_name"] == call.tool_name.as_str()
        && d.get("step_up").is_none_or(Value::is_null)
        && d["project"].as_str() == call.project.as_deref()
        && same_rule
}

/// The standing allowance that covers the call, if the server holds one: of this harness,
/// tool, project and rule exactly (no rule: one given where no rule matched), counting by the
/// server's clock. The API key can only read and revoke allowances; the person makes them
/// with an Allow on their own approval link, so an agent cannot plant one. With a pinned
/// receipt key, one counts only as the receipt of the Allow that made it signs it.
pub(super) async fn standing_allowance(
    api: &Api,
    call: &ToolCall,
    rule: Option<&str>,
    deadline: Instant,
    key: Option<&PublicKey>,
) -> Option<Standing> {
    let scope = Scope {
        harness: call.harness.as_str().to_string(),
        project: call.project.clone(),
        tool_name: call.tool_name.clone(),
        rule: rule.map(|r| r.chars().take(MAX_RULE_CHARS).collect::<String>()),
    };
    let mut url = api.url(&["v1", "allowances"]);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("harness", &scope.harness)
            .append_pair("tool_name", &scope.tool_name);
        if let Some(p) = &scope.project {
            q.append_pair("project", p);
        }
        if let Some(r) = &scope.rule {
            q.append_pair("rule", r);
        }
    }
    let page = api
        .send(
            || api.request(Method::GET, url.clone(), request_timeout(deadline)),
            (Instant::now() + CREATE_WINDOW).min(deadline),
        )
        .await
        .ok()?;
    let items = page["items"].as_array()?;
    // The server matched the scope and judged `until` by its own clock; the scope is checked
    // again here, so a reply that does not say exactly this scope lets nothing through.
    let listed = items.iter().filter_map(|a| {
        let s = &a["scope"];
        let same = s["harness"] == scope.harness.as_str()
            && s["tool_name"] == scope.tool_name.as_str()
            && s["project"].as_str() == scope.project.as_deref()
            && s["rule"].as_str() == scope.rule.as_deref();
        let until = a["until"]
            .as_str()
            .and_then(|u| OffsetDateTime::parse(u, &Rfc3339).ok())?;
        let from = a["decision_id"].as_str()?.to_string();
        let id = a["id"].as_str()?.to_string();
        let by = a["allowed_by"].as_str().unwrap_or("the person").to_string();
        same.then_some((id, by, until, from))
    });
    let Some(key) = key else {
        let (id, by, until, _) = listed.into_iter().next()?;
        return Some(standing(id, by, until));
    };
    // Each listed one is a claim until its receipt bears it out; the first that does counts.
    for (id, _, until, from) in listed {
        let give_up = (Instant::now() + CREATE_WINDOW).min(deadline);
        let checked = super::receipt::checked(api, &from, key, None, give_up).await;
        match signed_allowance(checked, &scope, until, OffsetDateTime::now_utc()) {
            Ok(by) => return Some(standing(id, by, until)),
            Err(why) => eprintln!("sayso: a standing allowance does not count: {why}"),
        }
    }
    None
}

/// Records with the server that `call` runs on the allowance `standing`, before the hook
/// lets it through: a call passes on an allowance only once the server holds its record, so
/// none passes without a trace. `Err` says why it could not be recorded (the allowance
/// ended or was revoked meanwhile, the server refused or could not be reached); the caller
/// then asks the person instead.
pub(super) async fn record_use(
    api: &Api,
    call: &ToolCall,
    rule: Option<&str>,
    standing: &Standing,
    deadline: Instant,
) -> Result<(), String> {
    let url = api.url(&["v1", "allowances", &standing.id, "uses"]);
    let body = serde_json::json!({
        "harness": call.harness.as_str(),
        "tool_name": call.tool_name,
        "tool_input": call.tool_input,
        "cwd": call.cwd,
        "project": call.project,
        "rule": rule.map(|r| r.chars().take(MAX_RULE_CHARS).collect::<String>()),
        "session_id": call.session_id,
        "tool_use_id": call.tool_use_id,
    });
    let recorded = api
        .send(
            || {
                api.request(Method::POST, url.clone(), request_timeout(deadline))
                    .json(&body)
            },
            (Instant::now() + CREATE_WINDOW).min(deadline),
        )
        .await
        .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())?;
    // Only the server's own record of this use counts; any other reply is none.
    if recorded["allowance_id"].as_str() != Some(standing.id.as_str()) {
        return Err("the server did not say it recorded the use".into());
    }
    Ok(())
}

fn standing(id: String, by: String, until: OffsetDateTime) -> Standing {
    Standing {
        id,
        by,
        until: format!(
            "{:04}-{:02}-{:02} {:02}:{:02} UTC",
            until.year(),
            u8::from(until.month()),
            until.day(),
            until.hour(),
            until.minute()
        ),
    }
}

/// With a pinned receipt key, an allowance listed as ending at `until` counts only when the
/// signed receipt of the decision that made it is the person's Allow that granted exactly
/// it: `scope` (the call's) and `until`, still ahead of this machine's clock (`now`). So a
/// go-between posing as sayso can neither make one up, nor pass off a plain Allow as one,
/// nor stretch, widen or bring back one that ended. `Ok` names who allowed it, as signed.
fn signed_allowance(
    checked: Result<Checked, String>,
    scope: &Scope,
    until: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<String, String> {
    let checked = checked?;
    let d = checked.as_decision();
    let by_person = d["answered_by"]["channel"]
        .as_str()
        .and_then(AnswerChannel::parse)
        .is_some_and(AnswerChannel::is_person_side);
    if d["status"] != "answered" || d["outcome"] != ALLOW || !by_person {
        return Err("its receipt is not the person's Allow".into());
    }
    if d.get("step_up").is_some_and(|s| !s.is_null()) {
        return Err("its receipt is of an Allow that needed a passkey".into());
    }
    let Some(grant) = &checked.receipt.allowance else {
        return Err("the receipt of its Allow signs no allowance".into());
    };
    if grant.scope != *scope {
        return Err("its receipt signs an allowance of other calls than this one".into());
    }
    if grant.until != until {
        return Err(format!(
            "it is listed as ending at {until}, its receipt signs {}",
            grant.until
        ));
    }
    if grant.until <= now {
        return Err(format!("its receipt says it ended at {}", grant.until));
    }
    Ok(checked
        .receipt
        .answers
        .last()
        .and_then(|a| a.person.clone())
        .unwrap_or_else(|| "the person".to_string()))
}

#[cfg(test)]
mod tests;
