//! Times as people read them on a page or in a mail.

use time::OffsetDateTime;

/// "in 23 min", "in 2 h 5 min", "in 3 days": how long until `at`.
pub fn time_left(at: OffsetDateTime, now: OffsetDateTime) -> String {
    let secs = (at - now).whole_seconds().max(0);
    match secs {
        0..=59 => "in less than a minute".to_owned(),
        60..=3599 => format!("in {} min", secs / 60),
        3600..=86_399 => match (secs / 3600, secs % 3600 / 60) {
            (h, 0) => format!("in {h} h"),
            (h, m) => format!("in {h} h {m} min"),
        },
        _ => match secs / 86_400 {
            1 => "in 1 day".to_owned(),
            days => format!("in {days} days"),
        },
    }
}

/// "for 9 more minutes", "for 2 more hours", "for 1 h 5 min more", "for 3 more days": how
/// much longer something lasts that is already under way (an agent waiting), which "in 9
/// min" would tell as something still to start.
pub fn time_for(at: OffsetDateTime, now: OffsetDateTime) -> String {
    let secs = (at - now).whole_seconds().max(0);
    let plural = |n: i64, one: &str| {
        if n == 1 {
            format!("for 1 more {one}")
        } else {
            format!("for {n} more {one}s")
        }
    };
    match secs {
        0..=59 => "for less than a minute more".to_owned(),
        60..=3599 => plural(secs / 60, "minute"),
        3600..=86_399 => match (secs / 3600, secs % 3600 / 60) {
            (h, 0) => plural(h, "hour"),
            (h, m) => format!("for {h} h {m} min more"),
        },
        _ => plural(secs / 86_400, "day"),
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
        assert_eq!(time_left(now, now), "in less than a minute");
        assert_eq!(time_left(datetime!(2026-11-21 12:23 UTC), now), "in 23 min");
        assert_eq!(
            time_left(datetime!(2026-11-21 14:05 UTC), now),
            "in 2 h 5 min"
        );
        assert_eq!(time_left(datetime!(2026-11-21 14:00 UTC), now), "in 2 h");
        assert_eq!(time_left(datetime!(2026-11-22 12:00 UTC), now), "in 1 day");
        assert_eq!(time_left(datetime!(2026-11-24 12:00 UTC), now), "in 3 days");
        assert_eq!(
            time_left(now, datetime!(2026-11-22 12:00 UTC)),
            "in less than a minute"
        );
    }

    #[test]
    fn time_for_says_how_much_longer() {
        let now = datetime!(2026-11-21 12:00 UTC);
        assert_eq!(time_for(now, now), "for less than a minute more");
        assert_eq!(
            time_for(datetime!(2026-11-21 12:01 UTC), now),
            "for 1 more minute"
        );
        assert_eq!(
            time_for(datetime!(2026-11-21 12:09 UTC), now),
            "for 9 more minutes"
        );
        assert_eq!(
            time_for(datetime!(2026-11-21 13:00 UTC), now),
            "for 1 more hour"
        );
        assert_eq!(
            time_for(datetime!(2026-11-21 14:05 UTC), now),
            "for 2 h 5 min more"
        );
        assert_eq!(
            time_for(datetime!(2026-11-24 12:00 UTC), now),
            "for 3 more days"
        );
    }
}
