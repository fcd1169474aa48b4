//! Checking a `form` answer (and a form field's `default`) against its fields. Browser
//! forms send every value as a string, so numbers and booleans are also accepted as text.

use serde_json::{Map, Number, Value};
use time::format_description::well_known::Rfc3339;
use time::{Date, Month, OffsetDateTime};

use super::issues::{Issues, index, join};
use super::options::{check_typed, not_an_option};
use super::read::{self, quote_short};
use super::spec::{ChoiceOption, FieldInput, FormSource, FormSpec, StringFormat};

/// The longest text answer, and a form text field's cap.
pub const MAX_TEXT_ANSWER_CHARS: usize = 10_000;

/// Checks a form answer: every field, every problem listed at `path.<field>`. The
/// normalised outcome holds only the form's fields; unknown members are dropped.
pub(crate) fn check_form(
    form: &FormSpec,
    value: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    let Value::Object(given) = value else {
        issues.push(
            path,
            format!(
                "must be an object with one member per form field (got {})",
                read::type_name(value)
            ),
        );
        return None;
    };
    let before = issues.len();
    let mut outcome = Map::new();
    let mut custom = false;
    for field in &form.fields {
        let field_path = join(path, &field.name);
        match given.get(&field.name).filter(|v| !is_blank(v)) {
            None if field.required => issues.push(field_path, "is required"),
            None => {}
            Some(v) => {
                // A question's picks keep the order given (the order ticked); a schema
                // array's are put in option order.
                let given_order = form.source == FormSource::Questions;
                if let Some((v, typed)) =
                    check_field(&field.input, v, given_order, &field_path, issues)
                {
                    custom |= typed;
                    outcome.insert(field.name.clone(), v);
                }
            }
        }
    }
    (issues.len() == before).then_some((Value::Object(outcome), custom))
}

/// What a browser sends for an input left empty: a list of nothing but blanks (`[""]`) is
/// blank too, so a checked answer reads the same as it was stored.
fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.iter().all(is_blank),
        _ => false,
    }
}

/// Checks one present, non-blank value against its field's input; returns it normalised,
/// with whether it is a typed "Other" answer. `given_order` keeps a multi-select's picks in
/// the order given rather than in option order.
pub(crate) fn check_field(
    input: &FieldInput,
    v: &Value,
    given_order: bool,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    match input {
        FieldInput::Text {
            min_length,
            max_length,
            format,
            ..
        } => check_text(v, *min_length, *max_length, *format, path, issues)
            .map(|s| (Value::String(s), false)),
        FieldInput::Choice {
            options,
            allow_other,
            ..
        } => check_choice(options, *allow_other, v, path, issues),
        FieldInput::MultiChoice {
            options,
            min_items,
            max_items,
            allow_other,
            ..
        } => check_multi(
            MultiRules {
                options,
                min_items: *min_items,
                max_items: *max_items,
                allow_other: *allow_other,
                given_order,
            },
            v,
            path,
            issues,
        ),
        FieldInput::Number {
            integer,
            minimum,
            maximum,
        } => check_number(v, *integer, *minimum, *maximum, path, issues).map(|n| (n, false)),
        FieldInput::Boolean => check_boolean(v, path, issues).map(|b| (Value::Bool(b), false)),
    }
}

fn check_text(
    v: &Value,
    min_length: Option<u64>,
    max_length: Option<u64>,
    format: Option<StringFormat>,
    path: &str,
    issues: &mut Issues,
) -> Option<String> {
    let s = read::string(v, path, issues)?.trim();
    let max = max_length.map_or(MAX_TEXT_ANSWER_CHARS, |m| {
        usize::try_from(m)
            .unwrap_or(usize::MAX)
            .min(MAX_TEXT_ANSWER_CHARS)
    });
    let n = s.chars().take(max.saturating_add(1)).count();
    if n > max {
        issues.push(
            path,
            format!("must be at most {max} characters (got {})", read::chars(s)),
        );
        return None;
    }
    if let Some(min) = min_length.filter(|min| (n as u64) < *min) {
        issues.push(path, format!("must be at least {min} characters (got {n})"));
        return None;
    }
    if let Some(format) = format
        && let Err(expected) = check_format(s, format)
    {
        issues.push(path, format!("must be {expected}"));
        return None;
    }
    Some(s.to_string())
}

/// Checks a string against a format; `Err` says what was expected.
fn check_format(s: &str, format: StringFormat) -> Result<(), &'static str> {
    let ok = match format {
        StringFormat::Email => is_email(s),
        StringFormat::Uri => url::Url::parse(s).is_ok(),
        StringFormat::Date => parse_date(s).is_some(),
        StringFormat::DateTime => OffsetDateTime::parse(s, &Rfc3339).is_ok(),
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        StringFormat::Email => "an email address like name@example.com",
        StringFormat::Uri => "an absolute URL like https://example.com/page",
        StringFormat::Date => "a date like 2025-01-31 (YYYY-MM-DD)",
        StringFormat::DateTime => "a date and time like 2025-01-31T18:00:00Z (RFC 3339)",
    })
}

/// One `@` between a non-empty local part and a non-empty domain, and no whitespace.
fn is_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !s.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// A calendar date written `YYYY-MM-DD`.
pub(crate) fn parse_date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return None;
    }
    let year: i32 = s[..4].parse().ok()?;
    let month: u8 = s[5..7].parse().ok()?;
    let day: u8 = s[8..].parse().ok()?;
    Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()
}

/// The option a submitted value names: by value, else by its label (what a person reads).
fn find_option<'a>(options: &'a [ChoiceOption], s: &str) -> Option<&'a ChoiceOption> {
    options
        .iter()
        .find(|o| o.value == s)
        .or_else(|| options.iter().find(|o| o.label == s))
}

/// A yes/no choice also takes a boolean.
fn choice_string(options: &[ChoiceOption], v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Bool(b) => {
            let word = if *b { "yes" } else { "no" };
            options
                .iter()
                .any(|o| o.value == word)
                .then(|| word.to_string())
        }
        _ => None,
    }
}

fn check_choice(
    options: &[ChoiceOption],
    allow_other: bool,
    v: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    let Some(s) = choice_string(options, v) else {
        issues.push(
            path,
            format!(
                "must be one of the options, as a string (got {})",
                read::type_name(v)
            ),
        );
        return None;
    };
    if let Some(o) = find_option(options, &s) {
        return Some((Value::String(o.value.clone()), false));
    }
    if !allow_other {
        issues.push(path, not_an_option(options, &s));
        return None;
    }
    check_typed(&s, path, issues).then_some((Value::String(s), true))
}

/// What a multi-select field takes.
struct MultiRules<'a> {
    options: &'a [ChoiceOption],
    min_items: Option<u64>,
    max_items: Option<u64>,
    allow_other: bool,
    given_order: bool,
}

fn check_multi(
    rules: MultiRules<'_>,
    v: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    let MultiRules {
        options,
        min_items,
        max_items,
        allow_other,
        given_order,
    } = rules;
    let items: Vec<&Value> = match v {
        Value::Array(items) => items.iter().collect(),
        // One ticked box arrives from a browser as a single value.
        Value::String(_) => vec![v],
        other => {
            issues.push(
                path,
                format!(
                    "must be an array of the chosen options (got {})",
                    read::type_name(other)
                ),
            );
            return None;
        }
    };
    let before = issues.len();
    let mut picked = vec![false; options.len()];
    let mut typed: Vec<String> = vec![];
    // In the order given: the page sends the order the boxes were ticked.
    let mut chosen: Vec<Value> = vec![];
    for (i, item) in items.iter().enumerate() {
        let item_path = if v.is_array() {
            index(path, i)
        } else {
            path.to_string()
        };
        let Some(s) = read::string(item, &item_path, issues).map(str::trim) else {
            continue;
        };
        if s.is_empty() {
            continue;
        }
        if let Some(at) = find_option(options, s).and_then(|o| options.iter().position(|x| x == o))
        {
            if picked[at] {
                issues.push(
                    &item_path,
                    format!("{} is given twice", quote_short(&options[at].value)),
                );
            }
            picked[at] = true;
            chosen.push(Value::String(options[at].value.clone()));
        } else if !allow_other {
            issues.push(&item_path, not_an_option(options, s));
        } else if typed.iter().any(|t| t == s) {
            issues.push(&item_path, format!("{} is given twice", quote_short(s)));
        } else if check_typed(s, &item_path, issues) {
            typed.push(s.to_string());
            chosen.push(Value::String(s.to_string()));
        }
    }
    if issues.len() != before {
        return None;
    }
    let custom = !typed.is_empty();
    if !given_order {
        // Options in their order, then typed answers.
        let mut in_order: Vec<Value> = options
            .iter()
            .zip(&picked)
            .filter(|(_, p)| **p)
            .map(|(o, _)| Value::String(o.value.clone()))
            .collect();
        in_order.extend(typed.into_iter().map(Value::String));
        chosen = in_order;
    }
    let n = chosen.len() as u64;
    if let Some(min) = min_items.filter(|min| n < *min) {
        issues.push(path, format!("must have at least {min} chosen (got {n})"));
        return None;
    }
    if let Some(max) = max_items.filter(|max| n > *max) {
        issues.push(path, format!("must have at most {max} chosen (got {n})"));
        return None;
    }
    Some((Value::Array(chosen), custom))
}

fn check_number(
    v: &Value,
    integer: bool,
    minimum: Option<f64>,
    maximum: Option<f64>,
    path: &str,
    issues: &mut Issues,
) -> Option<Value> {
    let (number, f) = match v {
        Value::Number(n) => (n.clone(), n.as_f64()?),
        Value::String(s) => match parse_number(s.trim()) {
            Some(parsed) => parsed,
            None => {
                issues.push(
                    path,
                    format!("must be a number (got {})", quote_short(s.trim())),
                );
                return None;
            }
        },
        other => {
            issues.push(
                path,
                format!("must be a number (got {})", read::type_name(other)),
            );
            return None;
        }
    };
    if integer && f.fract() != 0.0 {
        issues.push(path, format!("must be a whole number (got {f})"));
        return None;
    }
    if let Some(min) = minimum.filter(|min| f < *min) {
        issues.push(path, format!("must be at least {min} (got {f})"));
        return None;
    }
    if let Some(max) = maximum.filter(|max| f > *max) {
        issues.push(path, format!("must be at most {max} (got {f})"));
        return None;
    }
    // An integer field answers with an integer, even when `3.0` was sent.
    if integer && !number.is_i64() && !number.is_u64() && f.abs() < 9.0e15 {
        return Some(Value::from(f as i64));
    }
    Some(Value::Number(number))
}

/// A number typed as text: an integer stays an integer.
fn parse_number(s: &str) -> Option<(Number, f64)> {
    if let Ok(i) = s.parse::<i64>() {
        return Some((Number::from(i), i as f64));
    }
    // Rust also parses "inf" and "NaN", which are not numbers a person means.
    let f: f64 = s.parse().ok().filter(|f: &f64| f.is_finite())?;
    Some((Number::from_f64(f)?, f))
}

fn check_boolean(v: &Value, path: &str, issues: &mut Issues) -> Option<bool> {
    let parsed = match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => {
            let s = s.trim().to_ascii_lowercase();
            match s.as_str() {
                "true" | "on" | "yes" => Some(true),
                "false" | "off" | "no" => Some(false),
                _ => None,
            }
        }
        _ => None,
    };
    if parsed.is_none() {
        issues.push(path, "must be true or false");
    }
    parsed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(input: &FieldInput, v: Value) -> Result<(Value, bool), String> {
        let mut issues = Issues::new();
        check_field(input, &v, false, "f", &mut issues)
            .ok_or_else(|| issues.into_vec().remove(0).message)
    }

    fn text(format: StringFormat) -> FieldInput {
        FieldInput::Text {
            min_length: None,
            max_length: None,
            format: Some(format),
            placeholder: None,
            multiline: false,
        }
    }

    #[test]
    fn dates_must_be_real_calendar_days() {
        assert!(parse_date("2024-02-29").is_some());
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-1-01",
            "24-01-01",
            "2024/01/01",
            "２０２４-01-01",
        ] {
            assert!(parse_date(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn emails_need_one_at_between_non_empty_parts() {
        let email = text(StringFormat::Email);
        assert!(check(&email, json!("ada@example.com")).is_ok());
        for bad in ["ada", "@example.com", "ada@", "a@b@c", "ada @example.com"] {
            assert!(check(&email, json!(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn uris_and_date_times_are_parsed() {
        assert!(check(&text(StringFormat::Uri), json!("mailto:ada@example.com")).is_ok());
        assert!(check(&text(StringFormat::Uri), json!("/relative")).is_err());
        let dt = text(StringFormat::DateTime);
        assert!(check(&dt, json!("2025-01-31T18:00:00Z")).is_ok());
        assert!(check(&dt, json!("2025-01-31 18:00")).is_err());
    }

    #[test]
    fn numbers_typed_as_text_keep_integers_as_integers() {
        let number = FieldInput::Number {
            integer: false,
            minimum: None,
            maximum: None,
        };
        assert_eq!(check(&number, json!("42")).unwrap().0, json!(42));
        assert_eq!(check(&number, json!(" 2.5 ")).unwrap().0, json!(2.5));
        for bad in ["inf", "NaN", "1e400", "", "12abc"] {
            assert!(check(&number, json!(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn booleans_take_browser_checkbox_values() {
        for (v, b) in [
            ("on", true),
            ("true", true),
            ("FALSE", false),
            ("off", false),
        ] {
            assert_eq!(check(&FieldInput::Boolean, json!(v)).unwrap().0, json!(b));
        }
        assert_eq!(
            check(&FieldInput::Boolean, json!(1)).unwrap_err(),
            "must be true or false"
        );
    }
}
