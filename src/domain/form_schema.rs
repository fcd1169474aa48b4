//! The flat JSON Schema of a `form` decision (the MCP elicitation subset, DESIGN.md §2.1).

use serde_json::Value;

use super::issues::Issues;
use super::spec::FormSpec;

/// Parses `schema` into a form; problems go to `issues` under `path`, ignored annotation
/// keywords to `warnings`.
pub fn parse_form_schema(
    schema: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormSpec> {
    let _ = (schema, path, issues, warnings);
    todo!()
}
