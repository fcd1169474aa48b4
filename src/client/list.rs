//! `sayso list`: the inbox's decisions and to-dos, newest first, every page of them, as a
//! table a person reads or as JSON lines a script reads (with `--allowed-by`, the calls a
//! standing allowance let through: `uses.rs`).

use std::io::Write;

use reqwest::Method;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;

use super::args::ListArgs;
use super::commands::{REQUEST_TIMEOUT, RETRY_WINDOW};
use super::http::Api;
use super::wait::EXIT_YES;
use crate::render::Zone;

/// The most the API gives in one page.
const PAGE: &str = "200";
/// The table's width when the terminal does not say (`COLUMNS`).
const DEFAULT_WIDTH: usize = 120;
/// The fixed columns: id, kind, status, when (a longer time, with its date, moves the
/// question along), and the spaces between them.
const ID_W: usize = 36;
const KIND_W: usize = 6;
const STATUS_W: usize = 9;
const WHEN_W: usize = 20;

/// `sayso list`.
pub async fn list(args: ListArgs) -> anyhow::Result<u8> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    if let Some(id) = &args.allowed_by {
        return super::uses::list_uses(&api, id, args.json).await;
    }
    let width = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(DEFAULT_WIDTH);
    let mut out = std::io::stdout().lock();
    let mut cursor: Option<String> = None;
    let mut shown = 0usize;
    loop {
        let mut url = api.url(&["v1", "decisions"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", PAGE);
            if let Some(status) = args.status {
                q.append_pair("status", status.as_str());
            }
            if let Some(kind) = args.kind {
                q.append_pair("kind", kind.as_str());
            }
            if let Some(project) = &args.project {
                q.append_pair("project", project);
            }
            if let Some(c) = &cursor {
                q.append_pair("cursor", c);
            }
        }
        let page = api
            .send(
                || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
                Instant::now() + RETRY_WINDOW,
            )
            .await?;
        let now = OffsetDateTime::now_utc();
        let zone = args.zone.zone();
        for item in page["items"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if args.json {
                writeln!(out, "{item}")?;
            } else {
                if shown == 0 {
                    writeln!(out, "{}", header(width))?;
                }
                writeln!(out, "{}", row(item, &zone, now, width))?;
            }
            shown += 1;
        }
        match page["next"].as_str() {
            Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
            _ => break,
        }
    }
    out.flush()?;
    if shown == 0 && !args.json {
        let what = match args.status {
            Some(status) => format!("nothing is {}", status.as_str()),
            None => "nothing yet".to_string(),
        };
        eprintln!("sayso: {what} in this inbox");
    }
    Ok(EXIT_YES)
}

fn header(width: usize) -> String {
    line(
        ["ID", "KIND", "STATUS", "WHEN", "QUESTION"].map(String::from),
        width,
    )
}

/// One decision: its id, kind, status, when it expires (pending) or was made, in `zone`
/// ("until 20:34 IST", "2026-11-20 09:12 IST"), and its question on one line, cut to fit.
fn row(d: &Value, zone: &Zone, now: OffsetDateTime, width: usize) -> String {
    let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
    let at = |k: &str| {
        d[k].as_str()
            .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
    };
    let when = if d["status"] == "pending" {
        at("expires_at").map_or(String::new(), |t| format!("until {}", zone.clock(t, now)))
    } else {
        at("created_at").map_or(String::new(), |t| zone.clock(t, now))
    };
    let question = text("question")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    line(
        [
            text("decision_id"),
            text("kind"),
            text("status"),
            when,
            question,
        ],
        width,
    )
}

/// The cells in their columns; the last is cut with "…" to end within `width`.
fn line(cells: [String; 5], width: usize) -> String {
    let mut out = String::new();
    for (cell, w) in cells.iter().zip([ID_W, KIND_W, STATUS_W, WHEN_W]) {
        out.push_str(cell);
        out.extend(std::iter::repeat_n(
            ' ',
            (w + 2).saturating_sub(cell.chars().count()),
        ));
    }
    let room = width.saturating_sub(out.chars().count()).max(20);
    let last = &cells[4];
    if last.chars().count() > room {
        out.extend(last.chars().take(room - 1));
        out.push('…');
    } else {
        out.push_str(last);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_fits_its_width_and_says_when_in_the_zone() {
        let now = time::macros::datetime!(2026-11-21 12:00 UTC);
        let kolkata = Zone::named("Asia/Kolkata");
        let iso = |t: OffsetDateTime| t.format(&Rfc3339).unwrap();
        let d = json!({
            "decision_id": "0199aaaa-0000-7000-8000-000000000000", "kind": "bool",
            "status": "pending", "question": "Deploy\nthe new version to production now?",
            "created_at": iso(now), "expires_at": iso(now + time::Duration::minutes(42)),
        });
        let r = row(&d, &kolkata, now, 100);
        assert!(r.chars().count() <= 100, "{r}");
        assert!(r.contains("until 18:12 IST"), "{r}");
        assert!(r.contains("Deploy the new") && r.ends_with('…'), "{r}");
        let d = json!({
            "decision_id": "x", "kind": "todo", "status": "answered", "question": "Renew",
            "created_at": iso(now - time::Duration::days(1)), "expires_at": iso(now),
        });
        assert!(row(&d, &kolkata, now, 90).contains("2026-11-20 17:30 IST"));
        assert!(row(&d, &Zone::utc(), now, 90).contains("2026-11-20 12:00 UTC"));
    }
}
