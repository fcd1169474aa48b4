//! How an agent is told that a decision is already closed.

use time::OffsetDateTime;

use crate::domain::Status;

/// "The decision was already answered at …", for 409 and 410 responses.
pub fn resolved_message(status: Status, at: Option<OffsetDateTime>) -> String {
    let when = at
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .map(|t| format!(" at {t}"))
        .unwrap_or_default();
    format!("the decision was already {}{when}", status.as_str())
}
