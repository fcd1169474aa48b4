//! `sayso allowances`: the standing allowances the person gave ("Allow for 15 min", …) and
//! revoking them, over the agent API with the inbox's key. A client command, not an admin
//! one on the database: the key may read them (the hook does, before it asks) and revoke
//! them (revoking only narrows what passes without asking); nothing here, or anywhere the
//! key reaches, makes, extends or widens one.

use std::io::Write;

use reqwest::Method;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;

use super::args::{AllowancesAction, AllowancesArgs};
use super::commands::{REQUEST_TIMEOUT, RETRY_WINDOW};
use super::http::Api;
use super::wait::EXIT_YES;

/// `sayso allowances` and `sayso allowances revoke`.
pub async fn allowances(args: AllowancesArgs) -> anyhow::Result<u8> {
    match args.action {
        None => list(&args).await,
        Some(AllowancesAction::Revoke { id, all, server }) => {
            let api = Api::new(&server.server, server.key.as_deref())?;
            let url = match (&id, all) {
                (Some(id), false) => api.url(&["v1", "allowances", id]),
                _ => api.url(&["v1", "allowances"]),
            };
            let done = api
                .send(
                    || api.request(Method::DELETE, url.clone(), REQUEST_TIMEOUT),
                    Instant::now() + RETRY_WINDOW,
                )
                .await?;
            let n = done["revoked"].as_u64().unwrap_or(0);
            match id {
                Some(id) => println!("revoked {id}"),
                None => println!("revoked {n} allowance{}", if n == 1 { "" } else { "s" }),
            }
            Ok(EXIT_YES)
        }
    }
}

async fn list(args: &AllowancesArgs) -> anyhow::Result<u8> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    let url = api.url(&["v1", "allowances"]);
    let page = api
        .send(
            || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
            Instant::now() + RETRY_WINDOW,
        )
        .await?;
    let items = page["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let zone = args.zone.zone();
    let now = time::OffsetDateTime::now_utc();
    let mut out = std::io::stdout().lock();
    for (i, a) in items.iter().enumerate() {
        if args.json {
            writeln!(out, "{a}")?;
            continue;
        }
        if i == 0 {
            writeln!(
                out,
                "{:<36}  {:<24}  {:<12}  {:>4}  SCOPE",
                "ID", "UNTIL", "BY", "USES"
            )?;
        }
        writeln!(
            out,
            "{:<36}  {:<24}  {:<12}  {:>4}  {}",
            a["id"].as_str().unwrap_or_default(),
            a["until"]
                .as_str()
                .and_then(|t| time::OffsetDateTime::parse(t, &Rfc3339).ok())
                .map(|t| zone.clock(t, now))
                .unwrap_or_default(),
            a["allowed_by"].as_str().unwrap_or("-"),
            a["uses"].as_u64().unwrap_or(0),
            scope_words(&a["scope"]),
        )?;
    }
    out.flush()?;
    if items.is_empty() && !args.json {
        eprintln!("sayso: no allowance counts now in this inbox");
    }
    Ok(EXIT_YES)
}

/// "claude Bash in shop, calls no rule asks about" on one line (a rule's own line breaks
/// folded).
fn scope_words(s: &Value) -> String {
    let text = |k: &str| s[k].as_str().unwrap_or_default();
    let mut w = format!("{} {}", text("harness"), text("tool_name"));
    if let Some(p) = s["project"].as_str() {
        w.push_str(&format!(" in {p}"));
    }
    match s["rule"].as_str() {
        Some(r) => w.push_str(&format!(
            ", under {}",
            r.split_whitespace().collect::<Vec<_>>().join(" ")
        )),
        None => w.push_str(", calls no rule asks about"),
    }
    w
}
