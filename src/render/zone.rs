//! Times in the zone of the person they are told to: "2026-11-21 16:04 CET", "04:12 IST",
//! always with the zone's short name. Every surface formats its times here: pages, mails,
//! notifications and chats in the person's zone (UTC when they have none, and saying so), the
//! command line in the zone it is given or the machine's.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use time::OffsetDateTime;

use crate::domain::time_zone::canonical_zone;

/// The zone a page shows its times in, with the name it is shown by.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
}

impl Default for Zone {
    fn default() -> Self {
        Zone::utc()
    }
}

impl Zone {
    pub fn utc() -> Zone {
        Zone { tz: TimeZone::UTC }
    }

    /// The IANA zone `name` ("Europe/Berlin") from the database built into the binary; UTC
    /// for a name it does not know (a stored zone was checked when it was set).
    pub fn named(name: &str) -> Zone {
        match jiff::tz::db().get(name.trim()) {
            Ok(tz) => Zone { tz },
            Err(_) => Zone::utc(),
        }
    }

    /// The zone named `name` (a person's stored zone), UTC for `None`.
    pub fn of(name: Option<&str>) -> Zone {
        name.map(Zone::named).unwrap_or_default()
    }

    /// The zone `name`, as someone typed it (`--tz`): a sentence naming it when it is not
    /// one, with the name meant when one is close.
    pub fn parse(name: &str) -> Result<Zone, String> {
        Ok(Zone::named(&canonical_zone(name)?))
    }

    /// The machine's own zone: the TZ variable, else /etc/localtime; UTC when neither says.
    pub fn system() -> Zone {
        Zone {
            tz: TimeZone::system(),
        }
    }

    /// The zone's IANA name ("Europe/Berlin"), `None` for UTC or a zone without one.
    pub fn name(&self) -> Option<&str> {
        self.tz.iana_name()
    }

    /// "2026-11-21 16:04 CET".
    pub fn date_time(&self, t: OffsetDateTime) -> String {
        match self.local(t) {
            Some((local, label)) => format!("{} {label}", local.strftime("%Y-%m-%d %H:%M")),
            None => String::new(),
        }
    }

    /// "Expires in 2 h 5 min, at 04:12 CET": when a question closes, as a notification or a
    /// chat message says it under the question.
    pub fn expires(&self, t: &super::T, at: OffsetDateTime, now: OffsetDateTime) -> String {
        t.tr2(
            "notify-expires",
            "in",
            super::time_left(t, at, now),
            "clock",
            self.clock(at, now),
        )
    }

    /// "04:12 CET" when `t` falls on the same local day as `now`, the date and time
    /// otherwise.
    pub fn clock(&self, t: OffsetDateTime, now: OffsetDateTime) -> String {
        match (self.local(t), self.local(now)) {
            (Some((local, label)), Some((today, _))) if local.date() == today.date() => {
                format!("{} {label}", local.strftime("%H:%M"))
            }
            _ => self.date_time(t),
        }
    }

    /// The wall-clock time of `t` in the zone, and the zone's short name at that moment:
    /// its abbreviation ("CET", "CEST", "IST"), or the offset from UTC ("UTC+3",
    /// "UTC-3:30") where the zone has no letters of its own.
    fn local(&self, t: OffsetDateTime) -> Option<(jiff::Zoned, String)> {
        let ts = Timestamp::from_nanosecond(t.unix_timestamp_nanos()).ok()?;
        let info = self.tz.to_offset_info(ts);
        let abbreviation = info.abbreviation();
        let label =
            if abbreviation.chars().all(|c| c.is_ascii_alphabetic()) && !abbreviation.is_empty() {
                abbreviation.to_string()
            } else {
                offset_label(info.offset().seconds())
            };
        Some((ts.to_zoned(self.tz.clone()), label))
    }
}

/// "UTC", "UTC+3", "UTC-3:30", "UTC+5:45".
fn offset_label(seconds: i32) -> String {
    if seconds == 0 {
        return "UTC".into();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    match (minutes / 60, minutes % 60) {
        (h, 0) => format!("UTC{sign}{h}"),
        (h, m) => format!("UTC{sign}{h}:{m:02}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn a_time_is_shown_in_the_zone_with_its_short_name() {
        let t = datetime!(2026-11-21 15:04 UTC);
        assert_eq!(Zone::utc().date_time(t), "2026-11-21 15:04 UTC");
        // Whatever offset the time carries, it is the same instant.
        assert_eq!(
            Zone::utc().date_time(datetime!(2026-11-21 16:04 +1)),
            "2026-11-21 15:04 UTC"
        );
        assert_eq!(
            Zone::named("Europe/Berlin").date_time(t),
            "2026-11-21 16:04 CET"
        );
        assert_eq!(
            Zone::named("Europe/Berlin").date_time(datetime!(2026-07-01 12:00 UTC)),
            "2026-07-01 14:00 CEST"
        );
        assert_eq!(
            Zone::named("Asia/Kolkata").date_time(t),
            "2026-11-21 20:34 IST"
        );
        // A zone whose short name is a number is named by its offset.
        assert_eq!(
            Zone::named("America/Sao_Paulo").date_time(t),
            "2026-11-21 12:04 UTC-3"
        );
        assert_eq!(
            Zone::named("Asia/Kathmandu").date_time(t),
            "2026-11-21 20:49 UTC+5:45"
        );
        assert_eq!(
            Zone::named("Mars/Olympus").date_time(t),
            "2026-11-21 15:04 UTC"
        );
    }

    #[test]
    fn a_question_says_when_it_expires_in_the_zone() {
        let now = datetime!(2026-11-21 15:04 UTC);
        assert_eq!(
            Zone::named("Asia/Kolkata").expires(
                &super::super::T::default(),
                datetime!(2026-11-21 17:09 UTC),
                now
            ),
            "Expires in 2 h 5 min, at 22:39 IST"
        );
    }

    #[test]
    fn a_typed_zone_is_checked_and_the_system_one_is_read() {
        assert_eq!(
            Zone::parse("asia/kolkata").unwrap().name(),
            Some("Asia/Kolkata")
        );
        assert!(
            Zone::parse("Asia/Kolkatta")
                .unwrap_err()
                .contains("did you mean")
        );
        // TZ is the process's; whatever it holds, the machine's zone gives a label.
        assert!(
            !Zone::system()
                .date_time(datetime!(2026-11-21 15:04 UTC))
                .is_empty()
        );
    }

    #[test]
    fn a_time_today_is_only_a_clock_time() {
        let now = datetime!(2026-11-21 15:04 UTC);
        let kolkata = Zone::named("Asia/Kolkata");
        assert_eq!(
            kolkata.clock(datetime!(2026-11-21 15:30 UTC), now),
            "21:00 IST"
        );
        // Past local midnight in Kolkata, still the 21st in UTC.
        assert_eq!(
            kolkata.clock(datetime!(2026-11-21 19:00 UTC), now),
            "2026-11-22 00:30 IST"
        );
        assert_eq!(
            Zone::utc().clock(datetime!(2026-11-21 19:00 UTC), now),
            "19:00 UTC"
        );
    }
}
