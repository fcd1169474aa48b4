//! A decision's state in one word, as a page's heading and a mail's title show it.

use serde_json::Value;
use time::OffsetDateTime;

use crate::domain::{Decision, Kind, Status};

/// `Waiting`, `Answered`, `Done`, `Skipped`, `Declined`, `Expired` or `Cancelled`. A pending
/// decision whose time is up reads `Expired`: nobody can answer it any more, whether or not
/// the sweeper has marked it yet.
pub fn heading(d: &Decision, now: OffsetDateTime) -> &'static str {
    match d.status {
        Status::Pending if now >= d.expires_at => "Expired",
        Status::Pending => "Waiting",
        Status::Answered if d.kind() == Kind::Todo => match &d.outcome {
            Some(Value::String(s)) if s == "skipped" => "Skipped",
            _ => "Done",
        },
        Status::Answered => "Answered",
        Status::Declined => "Declined",
        Status::Expired => "Expired",
        Status::Cancelled => "Cancelled",
    }
}
