//! The flat JSON Schema of a `form` decision (the MCP elicitation subset, DESIGN.md §2.1).

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
    let (input, known): (Option<FieldInput>, &[&str]) = match obj.get("type") {
        None | Some(Value::Null) => {
            issues.push(&type_path, format!("is required: one of {TYPES}"));
            (None, &[])
        }
        Some(t) => match t.as_str() {
            Some("string") => (
                parse_string(obj, path, issues, warnings),
                &[
                    "minLength",
                    "maxLength",
                    "format",
                    "enum",
                    "enumNames",
                    "oneOf",
                ],
            ),
            Some(t @ ("number" | "integer")) => (
                parse_number(obj, t == "integer", path, issues),
                &["minimum", "maximum"],
            ),
            Some("boolean") => (Some(FieldInput::Boolean), &[]),
            Some("array") => (
                parse_array(obj, path, issues, warnings),
                &["items", "minItems", "maxItems", "uniqueItems"],
            ),
            Some(other) => {
                issues.push(
                    &type_path,
                    format!(
                        "{} is not supported: a form field must be one of {TYPES}",
                        quote_short(other)
                    ),
                );
                (None, &[])
            }
            None => {
                issues.push(
                    &type_path,
                    format!(
                        "must be a string, one of {TYPES} (got {})",
                        read::type_name(t)
                    ),
                );
                (None, &[])
            }
        },
    };
    if input.is_some() {
        let ignored = obj.keys().filter(|k| {
            !["type", "title", "description", "default"].contains(&k.as_str())
                && !known.contains(&k.as_str())
        });
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
        let checked = check_field(&input, d, &join(path, "default"), &mut scratch);
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::issues::Issue;

    fn parse(schema: Value) -> (FormSpec, Vec<String>) {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let form = parse_form_schema(&schema, "schema", &mut issues, &mut warnings);
        assert!(issues.is_empty(), "{:?}", issues.into_vec());
        (form.unwrap(), warnings)
    }

    fn refused(schema: Value) -> Vec<Issue> {
        let mut issues = Issues::new();
        let form = parse_form_schema(&schema, "schema", &mut issues, &mut vec![]);
        assert!(form.is_none());
        issues.into_vec()
    }

    fn message_at(schema: Value, path: &str) -> String {
        let issues = refused(schema);
        issues
            .iter()
            .find(|i| i.path == path)
            .map(|i| i.message.clone())
            .unwrap_or_else(|| panic!("no issue at {path}: {issues:?}"))
    }

    fn one(property: Value) -> FormField {
        parse(json!({"properties": {"f": property}}))
            .0
            .fields
            .remove(0)
    }

    #[test]
    fn fields_keep_the_order_of_the_properties() {
        let (form, warnings) = parse(json!({
            "type": "object",
            "properties": {
                "zeta": {"type": "string", "title": "Zeta"},
                "alpha": {"type": "integer", "minimum": 1},
                "mid": {"type": "boolean", "description": "tick it"}
            },
            "required": ["alpha"]
        }));
        assert!(warnings.is_empty());
        assert_eq!(form.source, FormSource::Schema);
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        assert_eq!(form.fields[0].title.as_deref(), Some("Zeta"));
        assert!(!form.fields[0].required);
        assert!(form.fields[1].required);
        assert_eq!(form.fields[2].description.as_deref(), Some("tick it"));
        assert_eq!(form.fields[2].input, FieldInput::Boolean);
    }

    #[test]
    fn string_fields_take_lengths_and_formats() {
        let f = one(json!({"type": "string", "minLength": 2, "maxLength": 5, "format": "email"}));
        assert_eq!(
            f.input,
            FieldInput::Text {
                min_length: Some(2),
                max_length: Some(5),
                format: Some(StringFormat::Email),
                placeholder: None,
                multiline: false
            }
        );
        for (name, format) in [
            ("uri", StringFormat::Uri),
            ("date", StringFormat::Date),
            ("date-time", StringFormat::DateTime),
        ] {
            let f = one(json!({"type": "string", "format": name}));
            assert!(matches!(f.input, FieldInput::Text { format: Some(f), .. } if f == format));
        }
    }

    #[test]
    fn an_unknown_format_is_a_warning_and_ignored() {
        let (form, warnings) =
            parse(json!({"properties": {"ip": {"type": "string", "format": "ipv4"}}}));
        assert!(matches!(
            form.fields[0].input,
            FieldInput::Text { format: None, .. }
        ));
        assert!(warnings[0].starts_with("schema.properties.ip.format \"ipv4\" is not supported"));
    }

    #[test]
    fn min_length_above_max_length_is_refused() {
        let schema =
            json!({"properties": {"f": {"type": "string", "minLength": 5, "maxLength": 2}}});
        message_at(schema, "schema.properties.f.maxLength");
        let schema = json!({"properties": {"f": {"type": "string", "minLength": -1}}});
        message_at(schema, "schema.properties.f.minLength");
    }

    #[test]
    fn enum_with_enum_names_becomes_a_closed_choice() {
        let f = one(
            json!({"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"]}),
        );
        let FieldInput::Choice {
            options,
            allow_other,
            ..
        } = f.input
        else {
            panic!()
        };
        assert!(!allow_other);
        assert_eq!(options[1].value, "m");
        assert_eq!(options[1].label, "Medium");
        let f = one(json!({"type": "string", "enum": ["a", "b"]}));
        let FieldInput::Choice { options, .. } = f.input else {
            panic!()
        };
        assert_eq!(options[0].label, "a");
    }

    #[test]
    fn enum_names_of_another_length_are_refused() {
        let schema = json!({"properties": {"f": {"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}}});
        assert_eq!(
            message_at(schema, "schema.properties.f.enumNames"),
            "must have as many entries as enum (2), got 1"
        );
    }

    #[test]
    fn enum_entries_must_be_non_empty_strings() {
        let schema = json!({"properties": {"f": {"type": "string", "enum": ["a", 2, ""]}}});
        let issues = refused(schema);
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            ["schema.properties.f.enum[1]", "schema.properties.f.enum[2]"]
        );
        message_at(
            json!({"properties": {"f": {"type": "string", "enum": []}}}),
            "schema.properties.f.enum",
        );
    }

    #[test]
    fn repeated_enum_values_are_dropped_with_a_warning() {
        let (form, warnings) =
            parse(json!({"properties": {"f": {"type": "string", "enum": ["a", "b", "a"]}}}));
        let FieldInput::Choice { options, .. } = &form.fields[0].input else {
            panic!()
        };
        assert_eq!(options.len(), 2);
        assert_eq!(
            warnings,
            ["schema.properties.f.enum[2] repeats the value \"a\" and was ignored"]
        );
    }

    #[test]
    fn one_of_consts_become_a_choice() {
        let f = one(json!({"type": "string", "oneOf": [
            {"const": "pg", "title": "PostgreSQL"},
            {"const": "sqlite"}
        ]}));
        let FieldInput::Choice { options, .. } = f.input else {
            panic!()
        };
        assert_eq!(options[0].value, "pg");
        assert_eq!(options[0].label, "PostgreSQL");
        assert_eq!(options[1].label, "sqlite");
        let schema = json!({"properties": {"f": {"type": "string", "oneOf": [{"title": "x"}]}}});
        message_at(schema, "schema.properties.f.oneOf[0].const");
    }

    #[test]
    fn numbers_take_bounds() {
        let f = one(json!({"type": "number", "minimum": 0.5, "maximum": 10}));
        assert_eq!(
            f.input,
            FieldInput::Number {
                integer: false,
                minimum: Some(0.5),
                maximum: Some(10.0)
            }
        );
        let f = one(json!({"type": "integer"}));
        assert!(matches!(f.input, FieldInput::Number { integer: true, .. }));
        message_at(
            json!({"properties": {"f": {"type": "number", "minimum": 5, "maximum": 1}}}),
            "schema.properties.f.maximum",
        );
        message_at(
            json!({"properties": {"f": {"type": "number", "minimum": "5"}}}),
            "schema.properties.f.minimum",
        );
    }

    #[test]
    fn arrays_of_enum_strings_become_multi_choices() {
        let f = one(json!({
            "type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true,
            "items": {"type": "string", "enum": ["a", "b", "c"]}
        }));
        let FieldInput::MultiChoice {
            options,
            min_items,
            max_items,
            allow_other,
            ..
        } = f.input
        else {
            panic!()
        };
        assert_eq!(options.len(), 3);
        assert_eq!(
            (min_items, max_items, allow_other),
            (Some(1), Some(2), false)
        );
        let f = one(json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}]}}));
        let FieldInput::MultiChoice { options, .. } = f.input else {
            panic!()
        };
        assert_eq!(options[0].label, "Ex");
    }

    #[test]
    fn arrays_of_anything_else_are_refused_at_items() {
        for items in [
            json!({"type": "object", "properties": {}}),
            json!({"type": "string"}),
            json!({"type": "integer", "enum": [1, 2]}),
        ] {
            let schema = json!({"properties": {"tags": {"type": "array", "items": items}}});
            message_at(schema, "schema.properties.tags.items");
        }
        message_at(
            json!({"properties": {"tags": {"type": "array"}}}),
            "schema.properties.tags.items",
        );
        message_at(
            json!({"properties": {"tags": {"type": "array", "minItems": 3, "maxItems": 1, "items": {"enum": ["a"]}}}}),
            "schema.properties.tags.maxItems",
        );
    }

    #[test]
    fn other_types_are_refused_with_the_property_path() {
        for t in [json!("object"), json!("null"), json!(["string", "null"])] {
            let schema = json!({"properties": {"address": {"type": t}}});
            message_at(schema, "schema.properties.address.type");
        }
        let schema = json!({"properties": {"address": {"title": "no type"}}});
        assert!(message_at(schema, "schema.properties.address.type").starts_with("is required"));
        message_at(json!({"properties": {"x": 1}}), "schema.properties.x");
    }

    #[test]
    fn annotation_keywords_are_warnings() {
        let (_, warnings) = parse(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Deploy form",
            "additionalProperties": false,
            "properties": {"f": {"type": "string", "examples": ["x"], "pattern": "^a"}}
        }));
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        assert!(warnings[0].starts_with("schema keyword \"$schema\""));
        assert!(warnings[3].starts_with("schema.properties.f keyword \"examples\""));
    }

    #[test]
    fn root_type_must_be_object_when_given() {
        message_at(
            json!({"type": "array", "properties": {"f": {"type": "string"}}}),
            "schema.type",
        );
        message_at(json!("string"), "schema");
    }

    #[test]
    fn a_form_needs_1_to_30_properties() {
        message_at(json!({"properties": {}}), "schema.properties");
        message_at(json!({"type": "object"}), "schema.properties");
        let mut many = Map::new();
        for i in 0..31 {
            many.insert(format!("f{i}"), json!({"type": "string"}));
        }
        assert_eq!(
            message_at(json!({ "properties": many }), "schema.properties"),
            "must have 1–30 properties (got 31)"
        );
    }

    #[test]
    fn property_names_are_1_to_100_chars() {
        message_at(
            json!({"properties": {"": {"type": "string"}}}),
            "schema.properties.",
        );
        let long = "n".repeat(101);
        let schema = json!({ "properties": { long.clone(): {"type": "string"} } });
        message_at(schema, &format!("schema.properties.{long}"));
    }

    #[test]
    fn required_must_name_existing_properties() {
        let schema = json!({"properties": {"a": {"type": "string"}}, "required": ["a", "b"]});
        assert_eq!(
            message_at(schema, "schema.required[1]"),
            "names no property: \"b\""
        );
        message_at(
            json!({"properties": {"a": {"type": "string"}}, "required": "a"}),
            "schema.required",
        );
        message_at(
            json!({"properties": {"a": {"type": "string"}}, "required": [1]}),
            "schema.required[0]",
        );
    }

    #[test]
    fn a_fitting_default_is_kept_normalised() {
        let f = one(json!({"type": "integer", "default": "4"}));
        assert_eq!(f.default, Some(json!(4)));
        let f = one(json!({"type": "string", "enum": ["a", "b"], "default": "b"}));
        assert_eq!(f.default, Some(json!("b")));
        let f = one(json!({"type": "boolean", "default": false}));
        assert_eq!(f.default, Some(json!(false)));
    }

    #[test]
    fn a_default_that_does_not_fit_is_a_warning_and_dropped() {
        let (form, warnings) = parse(json!({"properties": {
            "n": {"type": "integer", "maximum": 3, "default": 9},
            "c": {"type": "string", "enum": ["a"], "default": "z"}
        }}));
        assert_eq!(form.fields[0].default, None);
        assert_eq!(form.fields[1].default, None);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].starts_with("schema.properties.n.default does not fit its field"));
    }

    #[test]
    fn title_and_description_are_type_checked() {
        let schema =
            json!({"properties": {"f": {"type": "string", "title": 3, "description": []}}});
        let issues = refused(schema);
        assert_eq!(issues.len(), 2);
    }

    #[test]
    fn thousands_of_stray_keywords_get_a_short_warning_list() {
        let mut root = Map::new();
        for i in 0..5000 {
            root.insert(format!("x-{i}"), json!(i));
        }
        root.insert("properties".into(), json!({"f": {"type": "string"}}));
        let (_, warnings) = parse(Value::Object(root));
        assert_eq!(warnings.len(), 11);
        assert_eq!(warnings[10], "4990 more keywords of schema ignored");
    }
}
