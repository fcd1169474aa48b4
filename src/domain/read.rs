//! Typed readers for the JSON values of a request. Each checks one value's type and limits
//! and, when it is wrong, records an issue at the value's path saying what was expected.
//! None of them recurses into user data, so any depth or size of input is safe.

use serde_json::{Map, Value};

use super::issues::Issues;

/// Objects of up to this many members are searched in order rather than through their hash.
const SCAN_UP_TO: usize = 16;

/// A member of an object; a JSON `null` counts as absent (models send nulls for "not given").
///
/// A request's objects are small and are asked for many names (a create asks its body for
/// about thirty, most of them absent): comparing the few names there costs less than hashing
/// each name asked for with SipHash, which took 7 300 instructions a create. An object's
/// names are unique, so both ways find the same member.
pub(crate) fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    let found = if obj.len() <= SCAN_UP_TO {
        obj.iter().find(|(name, _)| *name == key).map(|(_, v)| v)
    } else {
        obj.get(key)
    };
    found.filter(|v| !v.is_null())
}

/// How a value is named in a message: `a string`, `a number`, …
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Length in characters (Unicode scalar values), which is what the limits count.
pub(crate) fn chars(s: &str) -> usize {
    s.chars().count()
}

/// A string quoted with JSON escaping, so quotes and newlines inside stay unambiguous.
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Like `quote`, but cut to a readable length for error messages.
pub(crate) fn quote_short(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", quote(&s[..end])),
        None => quote(s),
    }
}

pub(crate) fn string<'a>(v: &'a Value, path: &str, issues: &mut Issues) -> Option<&'a str> {
    match v {
        Value::String(s) => Some(s),
        other => {
            issues.push(path, format!("must be a string (got {})", type_name(other)));
            None
        }
    }
}

pub(crate) fn boolean(v: &Value, path: &str, issues: &mut Issues) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        other => {
            issues.push(
                path,
                format!("must be true or false (got {})", type_name(other)),
            );
            None
        }
    }
}

/// A whole number. `60.0` is accepted; `1.5` and `"60"` are not. Numbers beyond `i64`
/// saturate, which every range check here then refuses.
pub(crate) fn integer(v: &Value, path: &str, issues: &mut Issues) -> Option<i64> {
    let n = match v {
        Value::Number(n) => n,
        other => {
            issues.push(
                path,
                format!("must be an integer (got {})", type_name(other)),
            );
            return None;
        }
    };
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    if n.as_u64().is_some() {
        return Some(i64::MAX);
    }
    match n.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 => Some(f as i64),
        _ => {
            issues.push(path, format!("must be an integer (got {n})"));
            None
        }
    }
}

/// An integer within `min..=max`.
pub(crate) fn integer_in(
    v: &Value,
    path: &str,
    issues: &mut Issues,
    min: i64,
    max: i64,
) -> Option<i64> {
    let i = integer(v, path, issues)?;
    if i < min || i > max {
        issues.push(path, format!("must be between {min} and {max} (got {i})"));
        return None;
    }
    Some(i)
}

/// A non-negative integer, for lengths and counts.
pub(crate) fn count(v: &Value, path: &str, issues: &mut Issues) -> Option<u64> {
    let i = integer(v, path, issues)?;
    if i < 0 {
        issues.push(path, format!("must be 0 or more (got {i})"));
        return None;
    }
    Some(i as u64)
}

/// Any finite JSON number.
pub(crate) fn number(v: &Value, path: &str, issues: &mut Issues) -> Option<f64> {
    match v.as_f64() {
        Some(f) if f.is_finite() => Some(f),
        _ => {
            issues.push(path, format!("must be a number (got {})", type_name(v)));
            None
        }
    }
}

pub(crate) fn array<'a>(v: &'a Value, path: &str, issues: &mut Issues) -> Option<&'a Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        other => {
            issues.push(path, format!("must be an array (got {})", type_name(other)));
            None
        }
    }
}

pub(crate) fn object<'a>(
    v: &'a Value,
    path: &str,
    issues: &mut Issues,
) -> Option<&'a Map<String, Value>> {
    match v {
        Value::Object(o) => Some(o),
        other => {
            issues.push(
                path,
                format!("must be an object (got {})", type_name(other)),
            );
            None
        }
    }
}

/// A string, trimmed, of `min..=max` characters.
pub(crate) fn text(
    v: &Value,
    path: &str,
    issues: &mut Issues,
    min: usize,
    max: usize,
) -> Option<String> {
    let s = string(v, path, issues)?.trim();
    check_len(s, path, issues, min, max).then(|| s.to_string())
}

/// An optional string, trimmed, of at most `max` characters; empty counts as absent.
pub(crate) fn optional_text(
    v: Option<&Value>,
    path: &str,
    issues: &mut Issues,
    max: usize,
) -> Option<String> {
    text(v?, path, issues, 0, max).filter(|s| !s.is_empty())
}

/// Checks a character count against `min..=max`, with a message that gives the count.
pub(crate) fn check_len(s: &str, path: &str, issues: &mut Issues, min: usize, max: usize) -> bool {
    // Counting stops early past the limit: a megabyte string costs no more than a short one.
    let n = s.chars().take(max.saturating_add(1)).count();
    if n >= min && n <= max {
        return true;
    }
    let got = if n > max { chars(s) } else { n };
    let message = if min == 0 {
        format!("must be at most {max} characters after trimming (got {got})")
    } else if n == 0 {
        format!("must not be empty (expected {min}–{max} characters after trimming)")
    } else {
        format!("must be {min}–{max} characters after trimming (got {got})")
    };
    issues.push(path, message);
    false
}

/// Warns about each member of `obj` not in `known`; `place` names the object (empty for
/// the request body).
pub(crate) fn warn_unknown(
    obj: &Map<String, Value>,
    known: &[&str],
    place: &str,
    warnings: &mut Vec<String>,
) {
    let unknown = obj.keys().filter(|k| !known.contains(&k.as_str()));
    let messages = unknown.map(|key| {
        if place.is_empty() {
            format!("unknown field {} ignored", quote_short(key))
        } else {
            format!("unknown field {} in {place} ignored", quote_short(key))
        }
    });
    push_capped(messages, warnings, |more| {
        let place = if place.is_empty() {
            "the request"
        } else {
            place
        };
        format!("{more} more unknown fields in {place} ignored")
    });
}

/// Pushes a handful of warnings one by one, then only a count of the rest: a request with
/// thousands of stray fields gets a short answer.
pub(crate) fn push_capped(
    messages: impl Iterator<Item = String>,
    warnings: &mut Vec<String>,
    more: impl FnOnce(usize) -> String,
) {
    const LISTED: usize = 10;
    let mut messages = messages;
    warnings.extend(messages.by_ref().take(LISTED));
    let rest = messages.count();
    if rest > 0 {
        warnings.push(more(rest));
    }
}

/// The longest URL a request may give (a callback, a completion).
pub const MAX_URL_CHARS: usize = 2000;

/// An absolute `http` or `https` URL; anything else (`javascript:`, `file:`, relative) is
/// refused, as the person would be sent there.
pub(crate) fn parse_http_url(s: &str, path: &str, issues: &mut Issues) -> Option<String> {
    if chars(s) > MAX_URL_CHARS {
        issues.push(
            path,
            format!(
                "must be at most {MAX_URL_CHARS} characters (got {})",
                chars(s)
            ),
        );
        return None;
    }
    match url::Url::parse(s) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Some(url.to_string()),
        Ok(url) => {
            issues.push(
                path,
                format!(
                    "must be an http or https URL (got a {}: URL)",
                    quote_short(url.scheme())
                ),
            );
            None
        }
        Err(e) => {
            issues.push(path, format!("must be an absolute http or https URL ({e})"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn null_members_count_as_absent() {
        let obj = json!({"a": null, "b": 1});
        let obj = obj.as_object().unwrap();
        assert!(get(obj, "a").is_none());
        assert!(get(obj, "b").is_some());
        assert!(get(obj, "c").is_none());
    }

    #[test]
    fn integers_accept_whole_floats_and_refuse_fractions_and_strings() {
        let mut issues = Issues::new();
        assert_eq!(integer(&json!(60), "t", &mut issues), Some(60));
        assert_eq!(integer(&json!(60.0), "t", &mut issues), Some(60));
        assert!(issues.is_empty());
        assert_eq!(integer(&json!(1.5), "t", &mut issues), None);
        assert_eq!(integer(&json!("60"), "t", &mut issues), None);
        let issues = issues.into_vec();
        assert_eq!(issues[0].message, "must be an integer (got 1.5)");
        assert_eq!(issues[1].message, "must be an integer (got a string)");
    }

    #[test]
    fn huge_integers_saturate_and_fail_range_checks() {
        let mut issues = Issues::new();
        let v: Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(integer_in(&v, "t", &mut issues, 1, 10), None);
        assert_eq!(issues.len(), 1);
    }

    #[test]
    fn get_finds_a_member_in_small_and_large_objects_alike() {
        let small = json!({"a": 1, "b": null, "c": "x"});
        let large: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
        for (obj, present, absent) in [
            (small.as_object().unwrap(), "c", "z"),
            (&large, "k39", "k40"),
        ] {
            assert_eq!(get(obj, present), obj.get(present));
            assert_eq!(get(obj, absent), None);
        }
        assert_eq!(get(small.as_object().unwrap(), "b"), None, "null is absent");
        assert_eq!(get(small.as_object().unwrap(), "a"), Some(&json!(1)));
    }

    #[test]
    fn text_counts_characters_not_bytes() {
        let mut issues = Issues::new();
        let s = "é".repeat(200);
        assert_eq!(text(&json!(s), "l", &mut issues, 1, 200), Some(s.clone()));
        assert!(issues.is_empty());
        let long = "é".repeat(201);
        assert_eq!(text(&json!(long), "l", &mut issues, 1, 200), None);
        assert_eq!(
            issues.into_vec()[0].message,
            "must be 1–200 characters after trimming (got 201)"
        );
    }

    #[test]
    fn blank_text_is_refused_when_required_and_absent_when_optional() {
        let mut issues = Issues::new();
        assert_eq!(text(&json!("   "), "q", &mut issues, 1, 10), None);
        assert_eq!(issues.len(), 1);
        assert_eq!(
            optional_text(Some(&json!("  ")), "p", &mut issues, 10),
            None
        );
        assert_eq!(issues.len(), 1);
    }

    #[test]
    fn quote_short_cuts_long_strings() {
        let q = quote_short(&"x".repeat(500));
        assert!(q.chars().count() < 90);
        assert_eq!(quote_short("a\"b"), r#""a\"b""#);
    }

    #[test]
    fn unknown_members_are_listed_then_counted() {
        let mut obj = Map::new();
        for i in 0..15 {
            obj.insert(format!("f{i}"), json!(1));
        }
        obj.insert("known".into(), json!(1));
        let mut warnings = vec![];
        warn_unknown(&obj, &["known"], "", &mut warnings);
        assert_eq!(warnings.len(), 11);
        assert_eq!(warnings[0], "unknown field \"f0\" ignored");
        assert_eq!(warnings[10], "5 more unknown fields in the request ignored");
    }
}
