//! Standing allowances: a person's "Allow for 15 min", "for 1 hour" or "until tomorrow
//! 09:00" on a tool approval. Until then the hook lets the same kind of call through without
//! asking, and says so in its reason.
//!
//! What one covers (its scope) is the approval's inbox, harness, project, tool and policy
//! rule, all matched exactly: a rule's allowance covers only the calls that same rule gates,
//! and one given where no rule matched covers no call a rule of its own gates. It is not
//! bound to the session it was given in (a timed allowance outlives a session; the session
//! is kept to show). An approval whose Allow needs a passkey, or that names people (a rule
//! of two, where any Deny is a veto), never makes one, and the hook never lets such a call
//! through on one. Only the person makes one, from their own side (the page of a feed or
//! notification link), never an API key; each is made by one answer and is never extended
//! or widened, only revoked.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::Decision;
use super::answered_by::AnswerChannel;

pub mod uses;

/// How long an allowance lasts, as the person chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowFor {
    /// 15 minutes.
    Quarter,
    /// 60 minutes.
    Hour,
    /// Until 09:00 of the day after today, in the person's own zone.
    Morning,
}

impl AllowFor {
    pub const ALL: [AllowFor; 3] = [AllowFor::Quarter, AllowFor::Hour, AllowFor::Morning];
    pub const NAMES: &[&str] = &["15m", "60m", "morning"];

    pub fn parse(s: &str) -> Option<AllowFor> {
        AllowFor::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The form value and JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AllowFor::Quarter => "15m",
            AllowFor::Hour => "60m",
            AllowFor::Morning => "morning",
        }
    }

    /// When an allowance given at `now` ends; `zone` is the person's IANA zone (UTC when
    /// they have none, or one this build does not know).
    pub fn until(self, now: OffsetDateTime, zone: Option<&str>) -> OffsetDateTime {
        match self {
            AllowFor::Quarter => now + time::Duration::minutes(15),
            AllowFor::Hour => now + time::Duration::minutes(60),
            AllowFor::Morning => tomorrow_at_nine(now, zone),
        }
    }
}

/// 09:00 on the local day after `now`'s, in `zone`; a 09:00 that a clock change skips is
/// taken as the first instant after the gap.
fn tomorrow_at_nine(now: OffsetDateTime, zone: Option<&str>) -> OffsetDateTime {
    let tz = zone
        .and_then(|z| jiff::tz::db().get(z.trim()).ok())
        .unwrap_or(TimeZone::UTC);
    let fallback = now + time::Duration::hours(24);
    let Ok(ts) = Timestamp::from_nanosecond(now.unix_timestamp_nanos()) else {
        return fallback;
    };
    let local = ts.to_zoned(tz.clone()).date();
    let nine = local
        .tomorrow()
        .ok()
        .and_then(|d| d.at(9, 0, 0, 0).to_zoned(tz).ok());
    match nine {
        Some(z) => OffsetDateTime::from_unix_timestamp_nanos(z.timestamp().as_nanosecond())
            .unwrap_or(fallback),
        None => fallback,
    }
}

/// The kind of call an allowance covers; every part is matched exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Scope {
    /// The harness that asked (`claude`, `codex`, …).
    pub harness: String,
    /// The project of the approval (`null`: calls with no project).
    pub project: Option<String>,
    /// The tool, as the harness names it (`Bash`).
    pub tool_name: String,
    /// The policy rule that gated the call (`null`: calls no rule matched).
    pub rule: Option<String>,
}

/// A standing allowance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    pub id: Uuid,
    pub inbox_id: Uuid,
    /// The approval whose answer made it.
    pub decision_id: Uuid,
    /// Who allowed it (absent only for an inbox's answer made before people).
    pub person_id: Option<Uuid>,
    pub person: Option<String>,
    /// Which of the person's ways they answered by.
    pub channel: AnswerChannel,
    pub scope: Scope,
    /// The agent session it was given in; shown, not matched.
    pub session_id: Option<String>,
    pub created_at: OffsetDateTime,
    /// It counts while the server's clock is before this, and not at this instant.
    pub until: OffsetDateTime,
}

impl Allowance {
    /// Whether it still counts at `now`.
    pub fn active(&self, now: OffsetDateTime) -> bool {
        now < self.until
    }
}

/// What an Allow "for a while" grants, as its receipt signs it: the length the person chose,
/// the instant it ends and the calls it covers. Fixed before the answer is recorded, so the
/// resolution holds it (its `answered` event) and the allowance written after it is exactly
/// this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Grant {
    /// `15m`, `60m` or `morning`.
    pub allow_for: String,
    /// When it stops counting (RFC 3339, whole milliseconds).
    #[serde(with = "time::serde::rfc3339")]
    pub until: OffsetDateTime,
    pub scope: Scope,
}

impl Grant {
    /// The grant of `allow_for` given at `now` on an approval of `scope`. Its end is kept to
    /// whole milliseconds, which both stores hold exactly, so the allowance read back ends
    /// at the very instant its receipt signs.
    pub fn new(
        allow_for: AllowFor,
        scope: Scope,
        now: OffsetDateTime,
        zone: Option<&str>,
    ) -> Grant {
        let until = allow_for.until(now, zone);
        let until = until
            .replace_nanosecond(until.millisecond() as u32 * 1_000_000)
            .unwrap_or(until);
        Grant {
            allow_for: allow_for.as_str().to_string(),
            until,
            scope,
        }
    }

    /// The longest an allowance of this length can last past the answer that made it: its
    /// minutes, or for "until tomorrow 09:00" a day and ten hours (just after midnight, with
    /// an hour of a clock change). `None` for a length this build does not know.
    pub fn longest(&self) -> Option<time::Duration> {
        match AllowFor::parse(&self.allow_for)? {
            AllowFor::Quarter => Some(time::Duration::minutes(15)),
            AllowFor::Hour => Some(time::Duration::minutes(60)),
            AllowFor::Morning => Some(time::Duration::hours(34)),
        }
    }
}

/// What the approval `d` would allow for a while, or why it may not make an allowance: it
/// must be a tool approval with no step-up and no people named.
pub fn scope_of(d: &Decision) -> Result<Scope, &'static str> {
    let Some(a) = &d.spec.approval else {
        return Err("only a tool approval can be allowed for a while");
    };
    if !a.honours_allowances {
        return Err("the asker of this approval does not honour allowances");
    }
    if a.step_up.is_some() {
        return Err("an Allow that needs a passkey is never for a while");
    }
    if d.spec.routing.is_some() {
        return Err("an approval that names who must agree is never allowed for a while");
    }
    Ok(Scope {
        harness: a.harness.clone(),
        project: d.spec.project.clone(),
        tool_name: a.tool_name.clone(),
        rule: a.rule.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn the_choices_read_back_as_written() {
        for a in AllowFor::ALL {
            assert_eq!(AllowFor::parse(a.as_str()), Some(a));
        }
        assert_eq!(AllowFor::parse("1d"), None);
        assert_eq!(AllowFor::NAMES, ["15m", "60m", "morning"]);
    }

    #[test]
    fn minutes_are_counted_from_the_answer() {
        let now = datetime!(2026-11-27 13:00:00.250 UTC);
        assert_eq!(
            AllowFor::Quarter.until(now, None),
            datetime!(2026-11-27 13:15:00.250 UTC)
        );
        assert_eq!(
            AllowFor::Hour.until(now, Some("Europe/Berlin")),
            datetime!(2026-11-27 14:00:00.250 UTC)
        );
    }

    #[test]
    fn tomorrow_nine_is_in_the_persons_zone() {
        // 23:30 in Berlin on the 27th (22:30 UTC): tomorrow is the 28th, 09:00 CET.
        let now = datetime!(2026-11-27 22:30 UTC);
        assert_eq!(
            AllowFor::Morning.until(now, Some("Europe/Berlin")),
            datetime!(2026-11-28 08:00 UTC)
        );
        // Already the 28th in Tokyo: 09:00 JST on the 29th.
        assert_eq!(
            AllowFor::Morning.until(now, Some("Asia/Tokyo")),
            datetime!(2026-11-29 00:00 UTC)
        );
        // No zone, or an unknown one: UTC.
        assert_eq!(
            AllowFor::Morning.until(now, None),
            datetime!(2026-11-28 09:00 UTC)
        );
        assert_eq!(
            AllowFor::Morning.until(now, Some("Mars/Base")),
            datetime!(2026-11-28 09:00 UTC)
        );
    }

    #[test]
    fn it_stops_counting_at_its_time_exactly() {
        let until = datetime!(2026-11-27 13:15 UTC);
        let a = Allowance {
            id: Uuid::nil(),
            inbox_id: Uuid::nil(),
            decision_id: Uuid::nil(),
            person_id: None,
            person: None,
            channel: AnswerChannel::Feed,
            scope: Scope {
                harness: "claude".into(),
                project: None,
                tool_name: "Bash".into(),
                rule: None,
            },
            session_id: None,
            created_at: until - time::Duration::minutes(15),
            until,
        };
        assert!(a.active(until - time::Duration::milliseconds(1)));
        assert!(!a.active(until));
    }
}
