//! Waiting for a decision across as many `await` calls as it takes, through server
//! restarts, and the exit codes its outcome maps to.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;

use super::http::{Api, Failure};

/// Exit code: yes, answered, done.
pub const EXIT_YES: u8 = 0;
/// Exit code: no, declined, skipped.
pub const EXIT_NO: u8 = 1;
/// Exit code: expired or cancelled; nobody decided.
pub const EXIT_GONE: u8 = 2;
/// Exit code: an error that is not the command line's: a file that cannot be read, a bad key,
/// the server refusing the request, or unreachable or failing after retries.
pub const EXIT_ERROR: u8 = 3;
/// Exit code: still pending when the client's own `--timeout` passed.
pub const EXIT_PENDING: u8 = 4;
/// Exit code: the command line itself is wrong (an unknown command or flag, a bad flag value,
/// a missing key or server address); sysexits.h's `EX_USAGE`. Nothing was sent.
pub const EXIT_USAGE: u8 = 64;

/// How long one await call holds: below common proxy and client timeouts.
const AWAIT_S: u64 = 50;
/// How much longer than its `timeout_s` an await request may take before it counts as lost.
const REQUEST_MARGIN: Duration = Duration::from_secs(20);
/// While the server cannot be reached, keep trying this long past the decision's expiry
/// (its answer, or its expiry, is still to be read), allowing for clock skew.
const GRACE_AFTER_EXPIRY: Duration = Duration::from_secs(120);
/// While the server cannot be reached and the expiry is not known yet, keep trying this long.
const GRACE_UNKNOWN_EXPIRY: Duration = Duration::from_secs(300);

/// Waits until the decision is resolved, or `timeout` passes (then it is returned still
/// `pending`). Passing failures are retried with backoff until the wait's own deadline.
pub async fn wait_for_decision(
    api: &Api,
    id: &str,
    timeout: Option<Duration>,
    mut expires_at: Option<OffsetDateTime>,
) -> Result<Value, Failure> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut last: Option<Value> = None;
    let mut quick_pause = Duration::from_millis(250);
    loop {
        let now = Instant::now();
        let remaining = deadline.map(|d| d.saturating_duration_since(now));
        if remaining == Some(Duration::ZERO)
            && let Some(d) = last
        {
            return Ok(d);
        }
        let timeout_s = match remaining {
            None => AWAIT_S,
            Some(r) => r.as_secs_f64().ceil().min(AWAIT_S as f64) as u64,
        };
        let mut url = api.url(&["v1", "decisions", id, "await"]);
        url.query_pairs_mut()
            .append_pair("timeout_s", &timeout_s.to_string());
        let per_request = Duration::from_secs(timeout_s) + REQUEST_MARGIN;
        let give_up = give_up_at(now, deadline, expires_at);
        let d = api
            .send(
                || api.request(Method::GET, url.clone(), per_request),
                give_up,
            )
            .await?;
        if d["status"] != "pending" {
            return Ok(d);
        }
        if let Some(at) = d["expires_at"]
            .as_str()
            .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
        {
            expires_at = Some(at);
        }
        last = Some(d);
        // A server shutting down answers parked awaits at once: do not spin on it.
        if timeout_s > 0 && now.elapsed() < Duration::from_secs(1) {
            tokio::time::sleep(quick_pause).await;
            quick_pause = (quick_pause * 2).min(Duration::from_secs(5));
        } else {
            quick_pause = Duration::from_millis(250);
        }
    }
}

/// When to stop retrying a server that cannot be reached: at the client's deadline, or a
/// little after the decision expires, whichever is first.
fn give_up_at(
    now: Instant,
    deadline: Option<Instant>,
    expires_at: Option<OffsetDateTime>,
) -> Instant {
    let by_expiry = match expires_at {
        Some(at) => {
            let left = at - OffsetDateTime::now_utc();
            now + Duration::try_from(left).unwrap_or_default() + GRACE_AFTER_EXPIRY
        }
        None => now + GRACE_UNKNOWN_EXPIRY,
    };
    deadline.map_or(by_expiry, |d| d.min(by_expiry))
}

/// The exit code of a decision's state (see the table in `docs/CLI.md`).
pub fn exit_code(d: &Value) -> u8 {
    match d["status"].as_str() {
        Some("answered") => {
            let no = (d["kind"] == "bool" && d["outcome"] == false)
                || (d["kind"] == "todo" && d["outcome"] == "skipped");
            if no { EXIT_NO } else { EXIT_YES }
        }
        Some("declined") => EXIT_NO,
        Some("expired" | "cancelled") => EXIT_GONE,
        Some("pending") => EXIT_PENDING,
        _ => EXIT_ERROR,
    }
}

/// What a script needs of a resolved decision, in one JSON object.
pub fn outcome_summary(d: &Value) -> Value {
    json!({
        "status": d["status"],
        "outcome": d["outcome"],
        "outcome_source": d["outcome_source"],
        "custom": d["custom"],
        "remark": d["remark"],
        "answer_text": d["answer_text"],
        "decision_id": d["decision_id"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(kind: &str, status: &str, outcome: Value) -> Value {
        json!({"kind": kind, "status": status, "outcome": outcome})
    }

    #[test]
    fn outcomes_map_to_exit_codes() {
        assert_eq!(exit_code(&d("bool", "answered", json!(true))), 0);
        assert_eq!(exit_code(&d("bool", "answered", json!(false))), 1);
        assert_eq!(exit_code(&d("choose", "answered", json!("A"))), 0);
        assert_eq!(exit_code(&d("text", "answered", json!("no"))), 0);
        assert_eq!(exit_code(&d("todo", "answered", json!("done"))), 0);
        assert_eq!(exit_code(&d("todo", "answered", json!("skipped"))), 1);
        assert_eq!(exit_code(&d("form", "declined", Value::Null)), 1);
        assert_eq!(exit_code(&d("bool", "expired", json!(true))), 2);
        assert_eq!(exit_code(&d("bool", "cancelled", Value::Null)), 2);
        assert_eq!(exit_code(&d("bool", "pending", Value::Null)), 4);
        assert_eq!(exit_code(&json!({})), 3);
    }

    #[test]
    fn without_a_deadline_retries_stop_a_little_after_expiry() {
        let now = Instant::now();
        let at = OffsetDateTime::now_utc() + time::Duration::seconds(60);
        let g = give_up_at(now, None, Some(at));
        assert!(g > now + Duration::from_secs(170) && g <= now + Duration::from_secs(181));
        let past = OffsetDateTime::now_utc() - time::Duration::hours(1);
        assert!(give_up_at(now, None, Some(past)) <= now + GRACE_AFTER_EXPIRY);
        let soon = now + Duration::from_secs(5);
        assert_eq!(give_up_at(now, Some(soon), Some(at)), soon);
        assert_eq!(give_up_at(now, None, None), now + GRACE_UNKNOWN_EXPIRY);
    }
}
