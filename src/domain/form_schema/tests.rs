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
    let schema = json!({"properties": {"f": {"type": "string", "minLength": 5, "maxLength": 2}}});
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
    let schema =
        json!({"properties": {"f": {"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}}});
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
    let schema = json!({"properties": {"f": {"type": "string", "title": 3, "description": []}}});
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
