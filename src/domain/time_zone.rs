//! Time zones by their IANA names ("Europe/Berlin"), from the database built into the binary
//! (`jiff`'s bundled copy), so a name means the same on every host whatever its
//! /usr/share/zoneinfo holds. A person's zone is one of these.

use jiff::tz::TimeZone;

/// The zone named `name`, `None` for a name the database does not know (or "").
pub fn time_zone(name: &str) -> Option<TimeZone> {
    if name.is_empty() {
        return None;
    }
    jiff::tz::db().get(name).ok()
}

/// `name` under its canonical spelling ("europe/berlin" is "Europe/Berlin"), or a sentence
/// naming the unknown zone and, when one is close, the name meant.
pub fn canonical_zone(name: &str) -> Result<String, String> {
    let name = name.trim();
    match time_zone(name) {
        Some(zone) => Ok(zone.iana_name().unwrap_or(name).to_owned()),
        None => Err(match nearest_zone(name) {
            Some(near) => format!("unknown time zone \"{name}\": did you mean \"{near}\"?"),
            None => format!(
                "unknown time zone \"{name}\": give an IANA name like \"Europe/Berlin\" or \
                 \"UTC\""
            ),
        }),
    }
}

/// The known zone name closest to `name` in spelling (case aside), when it is close enough
/// to be a slip: a third of its length in edits at most.
fn nearest_zone(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let lower = name.to_lowercase();
    jiff::tz::db()
        .available()
        .map(|known| {
            let known = known.as_str().to_owned();
            (strsim::levenshtein(&lower, &known.to_lowercase()), known)
        })
        .min()
        .filter(|(distance, _)| *distance <= (name.len() / 3).max(1))
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_is_kept_under_its_canonical_name() {
        assert_eq!(canonical_zone("Asia/Kolkata").unwrap(), "Asia/Kolkata");
        assert_eq!(canonical_zone(" europe/berlin ").unwrap(), "Europe/Berlin");
        assert_eq!(canonical_zone("UTC").unwrap(), "UTC");
    }

    #[test]
    fn an_unknown_zone_is_named_with_the_one_meant() {
        assert_eq!(
            canonical_zone("Europe/Berln").unwrap_err(),
            "unknown time zone \"Europe/Berln\": did you mean \"Europe/Berlin\"?"
        );
        assert_eq!(
            canonical_zone("Asia/Calcuta").unwrap_err(),
            "unknown time zone \"Asia/Calcuta\": did you mean \"Asia/Calcutta\"?"
        );
        assert!(
            canonical_zone("Mars/Olympus")
                .unwrap_err()
                .starts_with("unknown time zone \"Mars/Olympus\": give an IANA name")
        );
        assert!(
            canonical_zone("")
                .unwrap_err()
                .contains("give an IANA name")
        );
    }
}
