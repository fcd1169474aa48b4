//! What an approval's "Allow for a while" made, on that approval's page (`/a/{token}`):
//! exactly which calls run without asking, where, from which agent, until when in the
//! person's zone, the calls that ran on it, and a **Revoke** button that ends it at once
//! (`POST /a/{token}/revoke`, in approve.rs). After that, or once it ended, the page says so
//! and keeps listing what ran.

use time::OffsetDateTime;

use crate::domain::allowance::AllowFor;
use crate::render::allowance::{UseLine, capitalised, covers, use_line, uses_words};
use crate::render::{Zone, iso};
use crate::service::MadeAllowance;

/// The allowance an approval's Allow made, as its page shows it.
#[derive(Clone)]
pub struct AllowedView {
    /// `live`, `revoked` or `ended`.
    pub state: &'static str,
    /// "Allowed for 15 min, until 23:22 CET", "Revoked", "Ended at 23:22 CET".
    pub heading: String,
    pub until_iso: String,
    /// "Every Bash call no policy rule asks about, in the project folder …, in any Claude
    /// Code session."
    pub what: String,
    pub rule: Option<String>,
    /// What it means now.
    pub note: String,
    /// "3 calls ran without you".
    pub uses_words: String,
    pub uses: Vec<UseLine>,
    /// Where the Revoke button posts, while it counts.
    pub revoke: Option<String>,
}

/// `made` as the page of the person link `action` (`/a/{token}`) shows it.
pub fn allowed_view(
    t: &crate::render::T,
    made: &MadeAllowance,
    action: &str,
    zone: &Zone,
    now: OffsetDateTime,
) -> AllowedView {
    let g = &made.grant;
    let until = zone.clock(g.until, now);
    let length = match AllowFor::parse(&g.allow_for) {
        Some(AllowFor::Quarter) => "allowed-quarter",
        Some(AllowFor::Hour) => "allowed-hour",
        _ => "allowed-until",
    };
    let (state, heading, note) = match &made.live {
        Some(_) => (
            "live",
            t.tr1(length, "clock", &until),
            t.tr("allowed-live-note"),
        ),
        None if g.until > now => (
            "revoked",
            t.tr("allowed-revoked"),
            t.tr1("allowed-revoked-note", "clock", &until),
        ),
        None => (
            "ended",
            t.tr1("allowed-ended", "clock", &until),
            t.tr("allowed-ended-note"),
        ),
    };
    let covers = covers(t, &g.scope);
    AllowedView {
        state,
        heading,
        until_iso: iso(g.until),
        what: covers.sentence(),
        rule: covers.rule,
        note,
        uses_words: capitalised(&uses_words(t, made.uses.len() as u64)),
        uses: made.uses.iter().map(|u| use_line(u, zone, now)).collect(),
        revoke: made.live.as_ref().map(|_| format!("{action}/revoke")),
    }
}
