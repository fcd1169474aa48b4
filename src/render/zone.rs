//! Times in the zone of the person looking at a page: "2026-11-21 16:04 CET", "04:12 IST".
//! The zone is the person's own (the one their quiet hours are kept in); a page that knows
//! nobody shows UTC and says so.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use time::OffsetDateTime;

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
