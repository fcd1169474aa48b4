//! Quiet hours: a daily window, in a person's own time zone, during which their notifications
//! are held. Pure: the caller passes the instant to judge, so tests control the clock.
//!
//! The window is judged on the local wall clock: `at` is quiet when its local time of day is
//! in `[from, to)`. The end of the window is the next local `to` after `at`, resolved in the
//! zone across DST changes (see [`QuietHours::quiet_until`]).

use jiff::Timestamp;
use jiff::civil::{DateTime, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};
use time::OffsetDateTime;

use super::time_zone::{canonical_zone, time_zone};

/// A person's quiet hours: a daily window in their time zone during which their
/// notifications are held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuietHours {
    pub from: (u8, u8),
    pub to: (u8, u8),
    /// The zone the window is read in: the person's own (`Person::tz`), UTC without one.
    pub tz: String,
}

impl QuietHours {
    /// Parses "22:00-07:00" (also "22-7", "22:00–07:00" with an en dash, spaces around the
    /// dash) and an IANA zone name ("Europe/Berlin"; "UTC"). tz None means "UTC". The zone is
    /// stored under its canonical spelling ("europe/berlin" becomes "Europe/Berlin").
    /// Errors are plain sentences naming what is wrong.
    pub fn parse(window: &str, tz: Option<&str>) -> Result<QuietHours, String> {
        let window = window.trim();
        let Some((from, to)) = split_window(window) else {
            return Err(format!(
                "quiet hours \"{window}\": write them as two times with a dash, like \"22:00-07:00\""
            ));
        };
        let from = parse_time(window, from)?;
        let to = parse_time(window, to)?;
        if from == to {
            return Err(format!(
                "quiet hours \"{window}\" are empty: give two different times"
            ));
        }
        let tz = canonical_zone(tz.unwrap_or("UTC"))?;
        Ok(QuietHours { from, to, tz })
    }

    /// "22:00-07:00" as stored.
    pub fn window(&self) -> String {
        let ((fh, fm), (th, tm)) = (self.from, self.to);
        format!("{fh:02}:{fm:02}-{th:02}:{tm:02}")
    }

    /// When `at` falls inside the window (from inclusive, to exclusive; a window may cross
    /// midnight), the instant the window ends (the next local `to` after `at`, in the zone,
    /// across DST changes: a local time that does not exist that day is taken as the first
    /// instant after the gap; an ambiguous one as the earlier, or the later when `at` is
    /// already past the earlier, as in the repeated hour of a fall-back night); None outside
    /// it. The result is in UTC.
    ///
    /// A zone name that is not in the database (only possible for a value not made by
    /// [`QuietHours::parse`]) is taken as UTC; hours or minutes out of range make no window.
    pub fn quiet_until(&self, at: OffsetDateTime) -> Option<OffsetDateTime> {
        let from = civil_time(self.from)?;
        let to = civil_time(self.to)?;
        let zone = time_zone(&self.tz).unwrap_or(TimeZone::UTC);
        let at = Timestamp::from_nanosecond(at.unix_timestamp_nanos()).ok()?;
        let local = zone.to_datetime(at).time();
        let inside = if from < to {
            from <= local && local < to
        } else {
            // Crosses midnight; from == to is an empty window, not a whole day.
            from > to && (local >= from || local < to)
        };
        if !inside {
            return None;
        }
        // The end is on the local date of `at` or the day after; a third day covers a
        // fall-back repeat whose candidates on the first day both lie behind `at`.
        let mut day = zone.to_datetime(at).date();
        for _ in 0..3 {
            if let Some(end) = instants_of(&zone, day.to_datetime(to))
                .into_iter()
                .flatten()
                .find(|end| *end > at)
            {
                return OffsetDateTime::from_unix_timestamp_nanos(end.as_nanosecond()).ok();
            }
            day = day.tomorrow().ok()?;
        }
        None
    }
}

/// Splits "22:00 - 07:00" at its one dash (hyphen, en dash or em dash).
fn split_window(window: &str) -> Option<(&str, &str)> {
    let mut parts = window.split(['-', '–', '—']);
    let (from, to) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Some((from.trim(), to.trim()))
}

/// "22:00", "7:30" or "22" as (hour, minute).
fn parse_time(window: &str, text: &str) -> Result<(u8, u8), String> {
    let not_a_time =
        || format!("quiet hours \"{window}\": \"{text}\" is not a time, like \"22:00\" or \"22\"");
    let (hour, minute) = match text.split_once(':') {
        Some((hour, minute)) if minute.len() == 2 => (hour, minute),
        Some(_) => return Err(not_a_time()),
        None => (text, "00"),
    };
    let number = |digits: &str| {
        if (1..=2).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse::<u8>().ok()
        } else {
            None
        }
    };
    let (Some(hour), Some(minute)) = (number(hour), number(minute)) else {
        return Err(not_a_time());
    };
    if hour > 23 {
        return Err(format!(
            "quiet hours \"{window}\": {hour} is not an hour (0–23)"
        ));
    }
    if minute > 59 {
        return Err(format!(
            "quiet hours \"{window}\": {minute} is not a minute (0–59)"
        ));
    }
    Ok((hour, minute))
}

fn civil_time((hour, minute): (u8, u8)) -> Option<Time> {
    let hour = i8::try_from(hour).ok()?;
    let minute = i8::try_from(minute).ok()?;
    Time::new(hour, minute, 0, 0).ok()
}

/// The instants a local date-time names in `zone`, earliest first: one when it is
/// unambiguous, two in a fall-back repeat, and for a time skipped by a spring-forward gap the
/// first instant after the gap (the transition itself).
fn instants_of(zone: &TimeZone, local: DateTime) -> [Option<Timestamp>; 2] {
    match zone.to_ambiguous_timestamp(local).offset() {
        AmbiguousOffset::Unambiguous { offset } => [offset.to_timestamp(local).ok(), None],
        AmbiguousOffset::Gap { before, after } => {
            // Read with the later offset, the local time lies before the transition; the
            // next transition from there is where the gap ends.
            let transition = after
                .to_timestamp(local)
                .ok()
                .and_then(|early| zone.following(early).next())
                .map(|t| t.timestamp());
            [transition.or_else(|| before.to_timestamp(local).ok()), None]
        }
        AmbiguousOffset::Fold { before, after } => {
            // `before` is the offset in force first (summer time on a fall-back night), so
            // reading with it gives the earlier instant.
            [
                before.to_timestamp(local).ok(),
                after.to_timestamp(local).ok(),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn quiet(window: &str, tz: &str) -> QuietHours {
        QuietHours::parse(window, Some(tz)).expect("valid quiet hours")
    }

    #[test]
    fn parses_the_plain_form_and_stores_it() {
        let q = quiet("22:00-07:00", "Europe/Berlin");
        assert_eq!(
            q,
            QuietHours {
                from: (22, 0),
                to: (7, 0),
                tz: "Europe/Berlin".into()
            }
        );
        assert_eq!(q.window(), "22:00-07:00");
    }

    #[test]
    fn parses_short_hours_en_dash_and_spaces() {
        for text in [
            "22-7",
            "22:00–07:00",
            "22:00 - 07:00",
            " 22 – 7:00 ",
            "22:00—07:00",
        ] {
            let q = quiet(text, "Europe/Berlin");
            assert_eq!((q.from, q.to), ((22, 0), (7, 0)), "{text}");
        }
        assert_eq!(quiet("9:05-17:30", "UTC").window(), "09:05-17:30");
    }

    #[test]
    fn zone_defaults_to_utc_and_is_stored_canonically() {
        let q = QuietHours::parse("22:00-07:00", None).unwrap();
        assert_eq!(q.tz, "UTC");
        assert_eq!(
            q.quiet_until(datetime!(2026-06-01 23:30 UTC)),
            Some(datetime!(2026-06-02 07:00 UTC))
        );
        assert_eq!(q.quiet_until(datetime!(2026-06-01 21:59 UTC)), None);
        assert_eq!(quiet("22-7", "europe/berlin").tz, "Europe/Berlin");
    }

    #[test]
    fn every_parse_error_is_a_sentence() {
        let err = |window: &str, tz: Option<&str>| QuietHours::parse(window, tz).unwrap_err();
        assert_eq!(
            err("25:00-07:00", None),
            "quiet hours \"25:00-07:00\": 25 is not an hour (0–23)"
        );
        assert_eq!(
            err("22:00-24:00", None),
            "quiet hours \"22:00-24:00\": 24 is not an hour (0–23)"
        );
        assert_eq!(
            err("22:60-07:00", None),
            "quiet hours \"22:60-07:00\": 60 is not a minute (0–59)"
        );
        assert_eq!(
            err("07:00-07:00", None),
            "quiet hours \"07:00-07:00\" are empty: give two different times"
        );
        assert_eq!(
            err("7-07:00", None),
            "quiet hours \"7-07:00\" are empty: give two different times"
        );
        assert_eq!(
            err("22:00", None),
            "quiet hours \"22:00\": write them as two times with a dash, like \"22:00-07:00\""
        );
        assert_eq!(
            err("22-7-9", None),
            "quiet hours \"22-7-9\": write them as two times with a dash, like \"22:00-07:00\""
        );
        for (window, part) in [
            ("ten-07:00", "ten"),
            ("22:0-07:00", "22:0"),
            ("-07:00", ""),
            ("22:00-7h", "7h"),
            ("+1-07:00", "+1"),
            ("022:00-07:00", "022:00"),
        ] {
            assert_eq!(
                err(window, None),
                format!(
                    "quiet hours \"{window}\": \"{part}\" is not a time, like \"22:00\" or \"22\""
                )
            );
        }
        assert_eq!(
            err("22:00-07:00", Some("Europe/Berln")),
            "unknown time zone \"Europe/Berln\": did you mean \"Europe/Berlin\"?"
        );
        assert!(err("22:00-07:00", Some("")).starts_with("unknown time zone \"\""));
    }

    #[test]
    fn window_crossing_midnight_in_berlin() {
        // June: Berlin is on CEST, UTC+2.
        let q = quiet("22:00-07:00", "Europe/Berlin");
        assert_eq!(q.quiet_until(datetime!(2026-06-10 19:59 UTC)), None); // 21:59 local
        assert_eq!(
            q.quiet_until(datetime!(2026-06-10 20:00 UTC)), // 22:00 local
            Some(datetime!(2026-06-11 05:00 UTC))
        );
        assert_eq!(
            q.quiet_until(datetime!(2026-06-11 01:00 UTC)), // 03:00 local, that morning
            Some(datetime!(2026-06-11 05:00 UTC))
        );
        assert_eq!(
            q.quiet_until(datetime!(2026-06-11 04:59:59.999 UTC)),
            Some(datetime!(2026-06-11 05:00 UTC))
        );
        assert_eq!(q.quiet_until(datetime!(2026-06-11 05:00 UTC)), None); // 07:00 local
        assert_eq!(q.quiet_until(datetime!(2026-06-11 10:00 UTC)), None); // noon
    }

    #[test]
    fn window_within_one_day() {
        // January: Berlin is on CET, UTC+1.
        let q = quiet("12:00-13:30", "Europe/Berlin");
        assert_eq!(q.quiet_until(datetime!(2026-01-15 10:59 UTC)), None);
        assert_eq!(
            q.quiet_until(datetime!(2026-01-15 11:00 UTC)),
            Some(datetime!(2026-01-15 12:30 UTC))
        );
        assert_eq!(
            q.quiet_until(datetime!(2026-01-15 12:29 UTC)),
            Some(datetime!(2026-01-15 12:30 UTC))
        );
        assert_eq!(q.quiet_until(datetime!(2026-01-15 12:30 UTC)), None);
        assert_eq!(q.quiet_until(datetime!(2026-01-15 23:00 UTC)), None); // midnight local
    }

    #[test]
    fn spring_forward_end_in_the_gap_is_the_end_of_the_gap() {
        // 2026-03-29 in Berlin: 02:00 CET (01:00 UTC) jumps to 03:00 CEST; 02:30 never happens.
        let q = quiet("01:00-02:30", "Europe/Berlin");
        assert_eq!(q.quiet_until(datetime!(2026-03-28 23:59 UTC)), None); // 00:59 CET
        let end = Some(datetime!(2026-03-29 01:00 UTC)); // 03:00 CEST
        assert_eq!(q.quiet_until(datetime!(2026-03-29 00:00 UTC)), end); // 01:00 CET
        assert_eq!(q.quiet_until(datetime!(2026-03-29 00:59:59 UTC)), end); // 01:59:59 CET
        assert_eq!(q.quiet_until(datetime!(2026-03-29 01:00 UTC)), None); // 03:00 CEST
        // The next night has no gap: the end is 02:30 CEST again.
        assert_eq!(
            q.quiet_until(datetime!(2026-03-29 23:00 UTC)),
            Some(datetime!(2026-03-30 00:30 UTC))
        );
    }

    #[test]
    fn spring_forward_start_in_the_gap_begins_after_the_gap() {
        // 02:15 does not exist on 2026-03-29 in Berlin; quiet begins when the clock reads 03:00.
        let q = quiet("02:15-06:00", "Europe/Berlin");
        assert_eq!(q.quiet_until(datetime!(2026-03-29 00:59:59 UTC)), None); // 01:59:59 CET
        assert_eq!(
            q.quiet_until(datetime!(2026-03-29 01:00 UTC)), // 03:00 CEST
            Some(datetime!(2026-03-29 04:00 UTC))           // 06:00 CEST
        );
        assert_eq!(q.quiet_until(datetime!(2026-03-29 04:00 UTC)), None);
        // The night before, in winter time: 02:15 CET to 06:00 CET.
        assert_eq!(q.quiet_until(datetime!(2026-03-28 01:14 UTC)), None);
        assert_eq!(
            q.quiet_until(datetime!(2026-03-28 01:15 UTC)),
            Some(datetime!(2026-03-28 05:00 UTC))
        );
    }

    #[test]
    fn crossing_midnight_into_a_spring_forward_night() {
        // 22:00 CET on the 28th to 07:00 CEST on the 29th: an hour shorter than usual.
        let q = quiet("22:00-07:00", "Europe/Berlin");
        assert_eq!(
            q.quiet_until(datetime!(2026-03-28 21:00 UTC)),
            Some(datetime!(2026-03-29 05:00 UTC))
        );
    }

    #[test]
    fn fall_back_end_in_the_repeated_hour_is_the_earlier_one() {
        // 2026-10-25 in Berlin: 03:00 CEST (01:00 UTC) goes back to 02:00 CET; 02:00–02:59
        // happens twice.
        let q = quiet("01:00-02:30", "Europe/Berlin");
        let earlier = Some(datetime!(2026-10-25 00:30 UTC)); // 02:30 CEST
        assert_eq!(q.quiet_until(datetime!(2026-10-24 23:00 UTC)), earlier); // 01:00 CEST
        assert_eq!(q.quiet_until(datetime!(2026-10-25 00:10 UTC)), earlier); // 02:10 CEST
        assert_eq!(q.quiet_until(datetime!(2026-10-25 00:30 UTC)), None); // 02:30 CEST
        // The clock reads 02:10 again an hour later: inside the window on the wall clock,
        // and the window ends when it reads 02:30 the second time, not a day later.
        assert_eq!(
            q.quiet_until(datetime!(2026-10-25 01:10 UTC)), // 02:10 CET
            Some(datetime!(2026-10-25 01:30 UTC))           // 02:30 CET
        );
        assert_eq!(q.quiet_until(datetime!(2026-10-25 01:30 UTC)), None); // 02:30 CET
    }

    #[test]
    fn crossing_midnight_into_a_fall_back_night() {
        // 22:00 CEST on the 24th to 07:00 CET on the 25th: an hour longer than usual.
        let q = quiet("22:00-07:00", "Europe/Berlin");
        let end = Some(datetime!(2026-10-25 06:00 UTC));
        assert_eq!(q.quiet_until(datetime!(2026-10-24 20:00 UTC)), end);
        assert_eq!(q.quiet_until(datetime!(2026-10-25 05:59 UTC)), end);
        assert_eq!(q.quiet_until(datetime!(2026-10-25 06:00 UTC)), None);
    }

    #[test]
    fn result_is_in_utc_whatever_the_input_offset() {
        let q = quiet("22:00-07:00", "Europe/Berlin");
        let at = datetime!(2026-06-11 03:00 +02:00);
        let end = q.quiet_until(at).unwrap();
        assert_eq!(end, datetime!(2026-06-11 05:00 UTC));
        assert_eq!(end.offset(), time::UtcOffset::UTC);
    }

    #[test]
    fn out_of_range_fields_make_no_window() {
        let q = QuietHours {
            from: (25, 0),
            to: (7, 0),
            tz: "UTC".into(),
        };
        assert_eq!(q.quiet_until(datetime!(2026-06-11 03:00 UTC)), None);
        let empty = QuietHours {
            from: (7, 0),
            to: (7, 0),
            tz: "UTC".into(),
        };
        assert_eq!(empty.quiet_until(datetime!(2026-06-11 07:00 UTC)), None);
    }
}
