//! A decision's state in one word, as a page's heading and a mail's title show it.

use serde_json::Value;
use time::OffsetDateTime;

use super::i18n::T;
use crate::domain::{Decision, Kind, Status};

/// `Waiting`, `Answered`, `Done`, `Skipped`, `Declined`, `Expired` or `Cancelled`. A pending
/// decision whose time is up reads `Expired`: nobody can answer it any more, whether or not
/// the sweeper has marked it yet.
pub fn heading(t: &T, d: &Decision, now: OffsetDateTime) -> String {
    t.tr(match d.status {
        Status::Pending if now >= d.expires_at => "status-expired",
        Status::Pending => "status-waiting",
        Status::Answered if d.kind() == Kind::Todo => match &d.outcome {
            Some(Value::String(s)) if s == "skipped" => "status-skipped",
            _ => "status-done",
        },
        Status::Answered => "status-answered",
        Status::Declined => "status-declined",
        Status::Expired => "status-expired",
        Status::Cancelled => "status-cancelled",
    })
}
