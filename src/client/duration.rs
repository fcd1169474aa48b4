//! Durations as people type them: `90s`, `30m`, `2h`, `1d`, `1h30m`.

use std::time::Duration;

/// Parses a sequence of whole numbers each followed by a unit (`s`, `m`, `h` or `d`).
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err("empty duration; write e.g. 90s, 30m, 2h or 1d".into());
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(format!("{raw:?}: unknown unit {c:?}; use s, m, h or d")),
        };
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("{raw:?}: a number must come before {c:?}"))?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("{raw:?} is too long"))?;
    }
    if !digits.is_empty() {
        return Err(format!(
            "{raw:?}: add a unit to {digits} (s, m, h or d), e.g. {digits}m"
        ));
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_sums_are_read() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration(" 10s "), Ok(Duration::from_secs(10)));
    }

    #[test]
    fn a_bare_number_or_a_strange_unit_is_refused() {
        assert!(parse_duration("30").unwrap_err().contains("add a unit"));
        assert!(parse_duration("3w").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }
}
