//! Times as people read them on a page or in a mail.

use time::OffsetDateTime;

use super::i18n::T;

/// "in 23 min", "in 2 h 5 min", "in 3 days" ("in 5 Minuten"): how long until `at`.
pub fn time_left(t: &T, at: OffsetDateTime, now: OffsetDateTime) -> String {
    let secs = (at - now).whole_seconds().max(0);
    match secs {
        0..=59 => t.tr("time-in-under-a-minute"),
        60..=3599 => t.tr1("time-in-minutes", "n", secs / 60),
        3600..=86_399 => match (secs / 3600, secs % 3600 / 60) {
            (h, 0) => t.tr1("time-in-hours", "h", h),
            (h, m) => t.tr2("time-in-hours-minutes", "h", h, "m", m),
        },
        _ => t.tr1("time-in-days", "n", secs / 86_400),
    }
}

/// "for 9 more minutes", "for 2 more hours", "for 1 h 5 min more", "for 3 more days": how
/// much longer something lasts that is already under way (an agent waiting), which "in 9
/// min" would tell as something still to start.
pub fn time_for(t: &T, at: OffsetDateTime, now: OffsetDateTime) -> String {
    let secs = (at - now).whole_seconds().max(0);
    match secs {
        0..=59 => t.tr("time-for-under-a-minute"),
        60..=3599 => t.tr1("time-for-minutes", "n", secs / 60),
        3600..=86_399 => match (secs / 3600, secs % 3600 / 60) {
            (h, 0) => t.tr1("time-for-hours", "n", h),
            (h, m) => t.tr2("time-for-hours-minutes", "h", h, "m", m),
        },
        _ => t.tr1("time-for-days", "n", secs / 86_400),
    }
}

/// RFC 3339, for `<time datetime>` and scripts.
pub fn iso(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn time_left_reads_naturally() {
        let now = datetime!(2026-11-21 12:00 UTC);
        assert_eq!(time_left(&T::default(), now, now), "in less than a minute");
        assert_eq!(
            time_left(&T::default(), datetime!(2026-11-21 12:23 UTC), now),
            "in 23 min"
        );
        assert_eq!(
            time_left(&T::default(), datetime!(2026-11-21 14:05 UTC), now),
            "in 2 h 5 min"
        );
        assert_eq!(
            time_left(&T::default(), datetime!(2026-11-21 14:00 UTC), now),
            "in 2 h"
        );
        assert_eq!(
            time_left(&T::default(), datetime!(2026-11-22 12:00 UTC), now),
            "in 1 day"
        );
        assert_eq!(
            time_left(&T::default(), datetime!(2026-11-24 12:00 UTC), now),
            "in 3 days"
        );
        assert_eq!(
            time_left(&T::default(), now, datetime!(2026-11-22 12:00 UTC)),
            "in less than a minute"
        );
    }

    #[test]
    fn time_for_says_how_much_longer() {
        let now = datetime!(2026-11-21 12:00 UTC);
        assert_eq!(
            time_for(&T::default(), now, now),
            "for less than a minute more"
        );
        assert_eq!(
            time_for(&T::default(), datetime!(2026-11-21 12:01 UTC), now),
            "for 1 more minute"
        );
        assert_eq!(
            time_for(&T::default(), datetime!(2026-11-21 12:09 UTC), now),
            "for 9 more minutes"
        );
        assert_eq!(
            time_for(&T::default(), datetime!(2026-11-21 13:00 UTC), now),
            "for 1 more hour"
        );
        assert_eq!(
            time_for(&T::default(), datetime!(2026-11-21 14:05 UTC), now),
            "for 2 h 5 min more"
        );
        assert_eq!(
            time_for(&T::default(), datetime!(2026-11-24 12:00 UTC), now),
            "for 3 more days"
        );
    }

    #[test]
    fn german_times_say_minutes_and_days_in_full() {
        let de = T::new(crate::domain::lang::Lang::De);
        let now = datetime!(2026-11-21 12:00 UTC);
        assert_eq!(
            time_left(&de, datetime!(2026-11-21 12:01 UTC), now),
            "in 1 Minute"
        );
        assert_eq!(
            time_left(&de, datetime!(2026-11-21 12:05 UTC), now),
            "in 5 Minuten"
        );
        assert_eq!(
            time_left(&de, datetime!(2026-11-22 12:00 UTC), now),
            "in 1 Tag"
        );
        assert_eq!(
            time_left(&de, datetime!(2026-11-24 12:00 UTC), now),
            "in 3 Tagen"
        );
        assert_eq!(
            time_for(&de, datetime!(2026-11-21 12:09 UTC), now),
            "noch 9 Minuten"
        );
    }
}
