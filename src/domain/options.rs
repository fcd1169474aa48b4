//! The options of a `choose` decision or of a coding-agent choice question: each a plain
//! string (shorthand for `{label}`) or `{label, description?, preview?}`.

use std::collections::HashSet;

use serde_json::Value;

use super::issues::{Issues, index, join};
use super::read::{self, quote_short};
use super::spec::ChoiceOption;

/// The longest typed "Other" answer.
pub const MAX_OTHER_CHARS: usize = 2000;
/// What a page's "Other" radio or checkbox sends; it stands for the typed text, never for an
/// answer of its own.
pub const OTHER_MARKER: &str = "__other__";
pub const MAX_LABEL_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Option previews are Markdown, limited in bytes.
pub const MAX_PREVIEW_BYTES: usize = 16 * 1024;

/// Parses a list of `min..=max` options with unique labels (compared exactly, after
/// trimming); the outcome of each option is its label. `None` when anything is wrong.
pub fn parse_options(
    v: &Value,
    path: &str,
    min: usize,
    max: usize,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<Vec<ChoiceOption>> {
    let items = read::array(v, path, issues)?;
    if items.len() < min || items.len() > max {
        issues.push(
            path,
            format!("must have {min}–{max} options (got {})", items.len()),
        );
        // Listing every problem of a thousand items helps nobody.
        return None;
    }
    let before = issues.len();
    let mut seen = HashSet::new();
    let mut options = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = index(path, i);
        let Some(option) = parse_option(item, &item_path, issues, warnings) else {
            continue;
        };
        if !seen.insert(option.label.clone()) {
            issues.push(
                join(&item_path, "label"),
                format!(
                    "duplicate label {}: labels must be unique",
                    read::quote_short(&option.label)
                ),
            );
            continue;
        }
        options.push(option);
    }
    (issues.len() == before).then_some(options)
}

fn parse_option(
    item: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<ChoiceOption> {
    if let Value::String(_) = item {
        let label = read::text(item, path, issues, 1, MAX_LABEL_CHARS)?;
        return Some(ChoiceOption {
            value: label.clone(),
            label,
            description: None,
            preview: None,
        });
    }
    let Value::Object(obj) = item else {
        issues.push(
            path,
            format!(
                "must be a string or an object {{label, description?, preview?}} (got {})",
                read::type_name(item)
            ),
        );
        return None;
    };
    read::warn_unknown(obj, &["label", "description", "preview"], path, warnings);
    let label_path = join(path, "label");
    let label = match read::get(obj, "label") {
        Some(v) => read::text(v, &label_path, issues, 1, MAX_LABEL_CHARS),
        None => {
            issues.push(&label_path, "is required");
            None
        }
    };
    let description = read::optional_text(
        read::get(obj, "description"),
        &join(path, "description"),
        issues,
        MAX_DESCRIPTION_CHARS,
    );
    let preview = parse_preview(read::get(obj, "preview"), &join(path, "preview"), issues);
    let label = label?;
    Some(ChoiceOption {
        value: label.clone(),
        label,
        description,
        preview,
    })
}

/// Markdown shown beside an option, at most 16 KiB; kept as given (no trimming: code
/// blocks care about whitespace), blank counts as absent.
fn parse_preview(v: Option<&Value>, path: &str, issues: &mut Issues) -> Option<String> {
    let s = read::string(v?, path, issues)?;
    if s.len() > MAX_PREVIEW_BYTES {
        issues.push(
            path,
            format!("must be at most 16 KiB of Markdown (got {} bytes)", s.len()),
        );
        return None;
    }
    (!s.trim().is_empty()).then(|| s.to_string())
}

/// A `recommended` index: the wrong type is an issue, an index out of range only a warning.
pub fn parse_recommended(
    v: Option<&Value>,
    path: &str,
    option_count: Option<usize>,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<usize> {
    let i = read::integer(v?, path, issues)?;
    let count = option_count?;
    if i < 0 || i as u64 >= count as u64 {
        warnings.push(format!(
            "{path} index {i} is out of range and was ignored (there are {count} options, counted from 0)"
        ));
        return None;
    }
    Some(i as usize)
}

pub(crate) fn not_an_option(options: &[ChoiceOption], s: &str) -> String {
    let names: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
    format!(
        "{} is not one of the options: {}",
        quote_short(s.trim()),
        names.join(", ")
    )
}

/// Text typed as "Other": not empty, not too long, and not the "Other" marker itself (a page
/// that sent the marker with an empty box).
pub(crate) fn check_typed(s: &str, path: &str, issues: &mut Issues) -> bool {
    if s.trim() == OTHER_MARKER {
        issues.push(
            path,
            "\"Other\" was picked with nothing typed: type your own answer, or pick an option",
        );
        return false;
    }
    read::check_len(s, path, issues, 1, MAX_OTHER_CHARS)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    type PathAndMessage = (String, String);

    fn parse(v: Value) -> (Option<Vec<ChoiceOption>>, Vec<PathAndMessage>, Vec<String>) {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let options = parse_options(&v, "options", 2, 20, &mut issues, &mut warnings);
        let issues = issues
            .into_vec()
            .into_iter()
            .map(|i| (i.path, i.message))
            .collect();
        (options, issues, warnings)
    }

    #[test]
    fn plain_strings_are_shorthand_for_labels() {
        let (options, issues, _) = parse(json!([" A ", {"label": "B", "description": "bee"}]));
        assert!(issues.is_empty());
        let options = options.unwrap();
        assert_eq!(options[0].label, "A");
        assert_eq!(options[0].value, "A");
        assert_eq!(options[1].description.as_deref(), Some("bee"));
    }

    #[test]
    fn duplicate_labels_are_refused_at_the_duplicate() {
        let (options, issues, _) = parse(json!(["A", "B", "C", "B"]));
        assert!(options.is_none());
        assert_eq!(issues[0].0, "options[3].label");
    }

    #[test]
    fn too_few_or_too_many_options_are_refused() {
        assert_eq!(parse(json!(["A"])).1[0].0, "options");
        let many: Vec<String> = (0..21).map(|i| i.to_string()).collect();
        assert_eq!(parse(json!(many)).1[0].1, "must have 2–20 options (got 21)");
    }

    #[test]
    fn every_bad_option_is_listed() {
        let (_, issues, _) = parse(json!([
            {"label": ""},
            {"description": "no label"},
            42,
            {"label": "ok", "description": "d".repeat(1001), "preview": "p".repeat(16 * 1024 + 1)}
        ]));
        let paths: Vec<&str> = issues.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "options[0].label",
                "options[1].label",
                "options[2]",
                "options[3].description",
                "options[3].preview"
            ]
        );
    }

    #[test]
    fn unknown_option_fields_are_warned_about() {
        let (options, _, warnings) = parse(json!([{"label": "A", "color": "red"}, "B"]));
        assert!(options.is_some());
        assert_eq!(warnings, ["unknown field \"color\" in options[0] ignored"]);
    }

    #[test]
    fn recommended_out_of_range_is_a_warning() {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let r = parse_recommended(
            Some(&json!(7)),
            "recommended",
            Some(3),
            &mut issues,
            &mut warnings,
        );
        assert_eq!(r, None);
        assert!(issues.is_empty());
        assert!(warnings[0].starts_with("recommended index 7 is out of range and was ignored"));
        let r = parse_recommended(
            Some(&json!("1")),
            "recommended",
            Some(3),
            &mut issues,
            &mut warnings,
        );
        assert_eq!(r, None);
        assert_eq!(issues.len(), 1);
        let r = parse_recommended(
            Some(&json!(2)),
            "recommended",
            Some(3),
            &mut issues,
            &mut warnings,
        );
        assert_eq!(r, Some(2));
    }
}
