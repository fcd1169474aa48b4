//! Withdrawing a question nothing waits for any more. A client that stops waiting (its hook
//! killed by the harness, Ctrl-C on `sayso ask --wait`, its own deadline) cancels what it
//! asked with the reason `abandoned`, which the server reads: the person's page then says
//! the agent stopped waiting, and a press changes nothing, instead of allowing a command
//! that never ran.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::time::Instant;

use super::http::{Api, Failure};
use crate::domain::CancelReason;

/// How long one withdrawal may take: the process is on its way out, and a harness that
/// killed it will not wait long before killing it harder.
pub const WITHDRAW_WITHIN: Duration = Duration::from_secs(2);

/// Cancels decision `id` as abandoned, trying until `within` has passed. `Ok` when it is no
/// longer pending (withdrawn now, or resolved already: nothing is left to withdraw).
pub async fn withdraw(api: &Api, id: &str, within: Duration) -> Result<(), Failure> {
    let url = api.url(&["v1", "decisions", id, "cancel"]);
    let body = json!({ "reason": CancelReason::Abandoned.as_str() });
    let give_up = Instant::now() + within;
    let sent = api
        .send(
            || {
                api.request_until(Method::POST, url.clone(), give_up)
                    .json(&body)
            },
            give_up,
        )
        .await;
    match sent {
        Ok(_) => Ok(()),
        // Answered, declined, expired or cancelled already: the person's answer (if any)
        // stands, and there is nothing left that could be pressed.
        Err(Failure::Refused { status, .. })
            if status == StatusCode::CONFLICT || status == StatusCode::GONE =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The signals that mean "stop waiting": the harness's kill (SIGTERM), Ctrl-C (SIGINT), the
/// terminal gone (SIGHUP). Listening replaces their default of ending the process at once,
/// so the question can be withdrawn first; listen only while a question is open.
pub struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl StopSignals {
    /// Starts listening; `None` if the signals cannot be caught (the default then applies).
    pub fn listen() -> Option<StopSignals> {
        Some(StopSignals {
            term: signal(SignalKind::terminate()).ok()?,
            int: signal(SignalKind::interrupt()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
        })
    }

    /// The next of them to arrive, by name.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}
