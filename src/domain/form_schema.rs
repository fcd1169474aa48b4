//! The flat JSON Schema of a `form` decision (the MCP elicitation subset, docs/API.md).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::form_answer::check_field;
use super::issues::{Issues, index, join};
use super::options::{MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS};
use super::read::{self, quote_short};
use super::spec::{ChoiceOption, FieldInput, FormField, FormSource, FormSpec, StringFormat};

pub const MAX_FIELDS: usize = 30;
pub const MAX_FIELD_NAME_CHARS: usize = 100;
/// The most values an `enum` (or `oneOf`) may list.
pub const MAX_ENUM_VALUES: usize = 100;

const ITEMS: &str = "{\"type\": \"string\", \"enum\": [...]} or {\"anyOf\": [{\"const\": ..., \"title\": ...}]} (a form takes arrays of choices only)";
const TYPES: &str = "string, number, integer, boolean, array (of enum strings)";
/// The keywords any form property may have, whatever its type.
pub const PROPERTY_KEYWORDS: &[&str] = &["type", "title", "description", "default"];

/// The keywords a property of type `ty` may have besides `PROPERTY_KEYWORDS`; `None` for a
/// type a form does not take.
pub fn type_keywords(ty: &str) -> Option<&'static [&'static str]> {
    Some(match ty {
        "string" => &[
            "minLength",
            "maxLength",
            "format",
            "enum",
            "enumNames",
            "oneOf",
        ],
        "number" | "integer" => &["minimum", "maximum"],
        "boolean" => &[],
        "array" => &["items", "minItems", "maxItems", "uniqueItems"],
        _ => return None,
    })
}

/// Parses `schema` into a form; problems go to `issues` under `path`, ignored annotation
/// keywords to `warnings`.
pub fn parse_form_schema(
    schema: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormSpec> {
    let root = read::object(schema, path, issues)?;
    let before = issues.len();
    let ignored = root
        .keys()
        .filter(|k| !["type", "properties", "required"].contains(&k.as_str()));
    read::push_capped(
        ignored.map(|key| {
            format!(
                "{path} keyword {} is not used by sayso and was ignored",
                quote_short(key)
            )
        }),
        warnings,
        |more| format!("{more} more keywords of {path} ignored"),
    );
    if let Some(t) = read::get(root, "type")
        && t.as_str() != Some("object")
    {
        issues.push(join(path, "type"), "must be \"object\"");
    }
    let properties_path = join(path, "properties");
    let properties = match read::get(root, "properties") {
        Some(p) => read::object(p, &properties_path, issues),
        None => {
            issues.push(&properties_path, "is required: a form needs 1–30 fields");
            None
        }
    };
    let required = read::get(root, "required")
        .map(|r| parse_required(r, &join(path, "required"), properties, issues))
        .unwrap_or_default();
    let properties = properties?;
    if properties.is_empty() || properties.len() > MAX_FIELDS {
        issues.push(
            &properties_path,
            format!(
                "must have 1–{MAX_FIELDS} properties (got {})",
                properties.len()
            ),
        );
        return None;
    }
    let mut fields = Vec::with_capacity(properties.len());
    for (name, property) in properties {
        let property_path = join(&properties_path, name);
        if name.is_empty() || read::chars(name) > MAX_FIELD_NAME_CHARS {
            issues.push(
                &property_path,
                format!("property names must be 1–{MAX_FIELD_NAME_CHARS} characters"),
            );
            continue;
        }
        let required = required.contains(name.as_str());
        if let Some(field) =
            parse_property(name, property, required, &property_path, issues, warnings)
        {
            fields.push(field);
        }
    }
    (issues.len() == before).then_some(FormSpec {
        source: FormSource::Schema,
        fields,
    })
}

/// `required`: names of existing properties. An unknown name would make the form
/// unanswerable, so it is refused.
fn parse_required<'a>(
    v: &'a Value,
    path: &str,
    properties: Option<&Map<String, Value>>,
    issues: &mut Issues,
) -> HashSet<&'a str> {
    let mut names = HashSet::new();
    let Some(items) = read::array(v, path, issues) else {
        return names;
    };
    for (i, item) in items.iter().enumerate() {
        let item_path = index(path, i);
        let Some(name) = read::string(item, &item_path, issues) else {
            continue;
        };
        if properties.is_some_and(|p| !p.contains_key(name)) {
            issues.push(
                item_path,
                format!("names no property: {}", quote_short(name)),
            );
            continue;
        }
        names.insert(name);
    }
    names
}

fn parse_property(
    name: &str,
    property: &Value,
    required: bool,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormField> {
    let obj = read::object(property, path, issues)?;
    let before = issues.len();
    let title = read::optional_text(
        read::get(obj, "title"),
        &join(path, "title"),
        issues,
        MAX_LABEL_CHARS,
    );
    let description = read::optional_text(
        read::get(obj, "description"),
        &join(path, "description"),
        issues,
        MAX_DESCRIPTION_CHARS,
    );
    let type_path = join(path, "type");
    let input = match obj.get("type") {
        None | Some(Value::Null) => {
            issues.push(&type_path, format!("is required: one of {TYPES}"));
            None
        }
        Some(t) => match t.as_str() {
            Some("string") => parse_string(obj, path, issues, warnings),
            Some(t @ ("number" | "integer")) => parse_number(obj, t == "integer", path, issues),
            Some("boolean") => Some(FieldInput::Boolean),
            Some("array") => parse_array(obj, path, issues, warnings),
            Some(other) => {
                issues.push(
                    &type_path,
                    format!(
                        "{} is not supported: a form field must be one of {TYPES}",
                        quote_short(other)
                    ),
                );
                None
            }
            None => {
                issues.push(
                    &type_path,
                    format!(
                        "must be a string, one of {TYPES} (got {})",
                        read::type_name(t)
                    ),
                );
                None
            }
        },
    };
    if input.is_some() {
        let known = obj
            .get("type")
            .and_then(Value::as_str)
            .and_then(type_keywords)
            .unwrap_or_default();
        let ignored = obj
            .keys()
            .filter(|k| !PROPERTY_KEYWORDS.contains(&k.as_str()) && !known.contains(&k.as_str()));
        read::push_capped(
            ignored.map(|key| {
                format!(
                    "{path} keyword {} is not supported and was ignored",
                    quote_short(key)
                )
            }),
            warnings,
            |more| format!("{more} more keywords of {path} ignored"),
        );
    }
    let input = input?;
    if issues.len() != before {
        return None;
    }
    let default = read::get(obj, "default").and_then(|d| {
        let mut scratch = Issues::new();
        let checked = check_field(&input, d, false, &join(path, "default"), &mut scratch);
        if checked.is_none() {
            let why = scratch.into_vec().into_iter().next().map(|i| i.message);
            warnings.push(format!(
                "{path}.default does not fit its field and was ignored ({})",
                why.unwrap_or_default()
            ));
        }
        checked.map(|(v, _)| v)
    });
    Some(FormField {
        name: name.to_string(),
        title,
        description,
        header: None,
        placeholder: None,
        required,
        default,
        input,
    })
}

fn parse_string(
    obj: &Map<String, Value>,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FieldInput> {
    let options = match (read::get(obj, "enum"), read::get(obj, "oneOf")) {
        (Some(values), one_of) => {
            if one_of.is_some() {
                warnings.push(format!("{path} has both enum and oneOf; oneOf was ignored"));
            }
            Some(parse_enum(obj, values, path, issues, warnings))
        }
        (None, Some(one_of)) => Some(parse_consts(one_of, &join(path, "oneOf"), issues, warnings)),
        (None, None) => None,
    };
    if let Some(options) = options {
        return Some(FieldInput::Choice {
            options: options?,
            allow_other: false,
            recommended: None,
        });
    }
    let min_length =
        read::get(obj, "minLength").and_then(|v| read::count(v, &join(path, "minLength"), issues));
    let max_length =
        read::get(obj, "maxLength").and_then(|v| read::count(v, &join(path, "maxLength"), issues));
    if let (Some(min), Some(max)) = (min_length, max_length)
        && min > max
    {
        issues.push(
            join(path, "maxLength"),
            format!("must be at least minLength ({min}), got {max}"),
        );
    }
    let format = read::get(obj, "format").and_then(|f| {
        let s = read::string(f, &join(path, "format"), issues)?;
        let format = match s {
            "email" => StringFormat::Email,
            "uri" => StringFormat::Uri,
            "date" => StringFormat::Date,
            "date-time" => StringFormat::DateTime,
            other => {
                warnings.push(format!(
                    "{path}.format {} is not supported and was ignored (supported: email, uri, date, date-time)",
                    quote_short(other)
                ));
                return None;
            }
        };
        Some(format)
    });
    Some(FieldInput::Text {
        min_length,
        max_length,
        format,
        placeholder: None,
        multiline: false,
    })
}

fn parse_number(
    obj: &Map<String, Value>,
    integer: bool,
    path: &str,
    issues: &mut Issues,
) -> Option<FieldInput> {
    let minimum =
        read::get(obj, "minimum").and_then(|v| read::number(v, &join(path, "minimum"), issues));
    let maximum =
        read::get(obj, "maximum").and_then(|v| read::number(v, &join(path, "maximum"), issues));
    if let (Some(min), Some(max)) = (minimum, maximum)
        && min > max
    {
        issues.push(
            join(path, "maximum"),
            format!("must be at least minimum ({min}), got {max}"),
        );
        return None;
    }
    Some(FieldInput::Number {
        integer,
        minimum,
        maximum,
    })
}

fn parse_array(
    obj: &Map<String, Value>,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FieldInput> {
    let items_path = join(path, "items");
    let expected = format!("must be {ITEMS}");
    let options = match read::get(obj, "items") {
        Some(Value::Object(items)) => {
            if let Some(any_of) = read::get(items, "anyOf") {
                parse_consts(any_of, &join(&items_path, "anyOf"), issues, warnings)
            } else if let Some(values) = read::get(items, "enum").filter(|_| {
                items
                    .get("type")
                    .is_none_or(|t| t.as_str() == Some("string"))
            }) {
                parse_enum(items, values, &items_path, issues, warnings)
            } else {
                issues.push(&items_path, expected.clone());
                None
            }
        }
        Some(_) => {
            issues.push(&items_path, expected.clone());
            None
        }
        None => {
            issues.push(&items_path, format!("is required: {ITEMS}"));
            None
        }
    };
    let min_items =
        read::get(obj, "minItems").and_then(|v| read::count(v, &join(path, "minItems"), issues));
    let max_items =
        read::get(obj, "maxItems").and_then(|v| read::count(v, &join(path, "maxItems"), issues));
    if let (Some(min), Some(max)) = (min_items, max_items)
        && min > max
    {
        issues.push(
            join(path, "maxItems"),
            format!("must be at least minItems ({min}), got {max}"),
        );
    }
    let options = options?;
    if let Some(min) = min_items.filter(|min| *min > options.len() as u64) {
        issues.push(
            join(path, "minItems"),
            format!(
                "asks for {min} choices but there are only {} options",
                options.len()
            ),
        );
    }
    Some(FieldInput::MultiChoice {
        options,
        min_items,
        max_items,
        allow_other: false,
        recommended: None,
    })
}

/// `enum` of strings, with optional `enumNames` of the same length as labels.
fn parse_enum(
    obj: &Map<String, Value>,
    values: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<Vec<ChoiceOption>> {
    let enum_path = join(path, "enum");
    let values = read::array(values, &enum_path, issues)?;
    if !check_option_count(values.len(), &enum_path, issues) {
        return None;
    }
    let names_path = join(path, "enumNames");
    let names = match read::get(obj, "enumNames") {
        Some(n) => {
            let names = read::array(n, &names_path, issues)?;
            if names.len() != values.len() {
                issues.push(
                    &names_path,
                    format!(
                        "must have as many entries as enum ({}), got {}",
                        values.len(),
                        names.len()
                    ),
                );
                return None;
            }
            Some(names)
        }
        None => None,
    };
    let before = issues.len();
    let mut entries = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let value = enum_value(v, &index(&enum_path, i), issues);
        let label =
            names.map(|n| read::text(&n[i], &index(&names_path, i), issues, 1, MAX_LABEL_CHARS));
        if let Some(value) = value {
            entries.push(Entry {
                label: label.flatten().unwrap_or_else(|| value.clone()),
                value,
                description: None,
                path: index(&enum_path, i),
            });
        }
    }
    (issues.len() == before).then(|| dedupe(entries, warnings))
}

/// `oneOf` (or `items.anyOf`) of `{const, title}`.
fn parse_consts(
    v: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<Vec<ChoiceOption>> {
    let items = read::array(v, path, issues)?;
    if !check_option_count(items.len(), path, issues) {
        return None;
    }
    let before = issues.len();
    let mut entries = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = index(path, i);
        let Some(obj) = read::object(item, &item_path, issues) else {
            continue;
        };
        read::warn_unknown(
            obj,
            &["const", "title", "description"],
            &item_path,
            warnings,
        );
        let const_path = join(&item_path, "const");
        let value = match obj.get("const") {
            Some(c) => enum_value(c, &const_path, issues),
            None => {
                issues.push(&const_path, "is required");
                None
            }
        };
        let label = read::get(obj, "title")
            .and_then(|t| read::text(t, &join(&item_path, "title"), issues, 1, MAX_LABEL_CHARS));
        let description = read::optional_text(
            read::get(obj, "description"),
            &join(&item_path, "description"),
            issues,
            MAX_DESCRIPTION_CHARS,
        );
        if let Some(value) = value {
            entries.push(Entry {
                label: label.unwrap_or_else(|| value.clone()),
                value,
                description,
                path: item_path,
            });
        }
    }
    (issues.len() == before).then(|| dedupe(entries, warnings))
}

fn check_option_count(n: usize, path: &str, issues: &mut Issues) -> bool {
    if n == 0 || n > MAX_ENUM_VALUES {
        issues.push(
            path,
            format!("must list 1–{MAX_ENUM_VALUES} values (got {n})"),
        );
        return false;
    }
    true
}

/// An enum value: a non-empty string (an empty one is what a browser sends for nothing).
fn enum_value(v: &Value, path: &str, issues: &mut Issues) -> Option<String> {
    let s = read::string(v, path, issues)?;
    if s.trim().is_empty() {
        issues.push(path, "must not be empty");
        return None;
    }
    read::check_len(s, path, issues, 1, MAX_LABEL_CHARS).then(|| s.to_string())
}

/// One listed value, before repeated values are dropped.
struct Entry {
    value: String,
    label: String,
    description: Option<String>,
    path: String,
}

/// Builds the options, dropping repeated values with a warning.
fn dedupe(entries: Vec<Entry>, warnings: &mut Vec<String>) -> Vec<ChoiceOption> {
    let mut seen = HashSet::new();
    let mut options = Vec::with_capacity(entries.len());
    for entry in entries {
        if !seen.insert(entry.value.clone()) {
            warnings.push(format!(
                "{} repeats the value {} and was ignored",
                entry.path,
                quote_short(&entry.value)
            ));
            continue;
        }
        options.push(ChoiceOption {
            value: entry.value,
            label: entry.label,
            description: entry.description,
            preview: None,
        });
    }
    options
}

#[cfg(test)]
mod tests;
