//! Every field of a tool's input, by its path. The readable rendering of a call (the command,
//! the diff, the file, the URL) shows the fields it is made of; every other field is listed
//! beside it, so none that changes what runs goes unseen: puppeteer's
//! `launchOptions.executablePath`, a GitHub write's `repo` and `branch`, an ssh edit's `host`,
//! an HTTP call's `method` and `body`, `replace_all`, `dangerouslyDisableSandbox`.
//!
//! A field is a leaf of the input: a string, a number, a boolean, `null`, or an empty list or
//! object; a list or object that holds something is walked into.

use serde_json::Value;

use crate::domain::approval::Action;

/// One field of a tool's input.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    /// `launchOptions.executablePath`, `edits[1].oldText`, `headers["X-Api-Key"]`: as it is
    /// (the caller makes it visible).
    pub path: String,
    pub value: FieldValue<'a>,
}

/// A field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue<'a> {
    /// A string, as it is.
    Text(&'a str),
    /// Any other value, as JSON: `true`, `120000`, `null`, `[]`, `{}`.
    Json(String),
}

impl FieldValue<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            FieldValue::Text(s) => s,
            FieldValue::Json(s) => s,
        }
    }
}

/// Every field of `input`, in the order the input holds them.
pub fn all(input: &Value) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    walk(input, String::new(), &mut out);
    out
}

/// The fields of `input` that none of `shown` is: the strings a readable rendering shows
/// whole. A string counts as shown only when it is that very string of the input (the
/// same bytes at the same place), never because another field holds the same text.
pub fn rest<'a>(input: &'a Value, shown: &[&str]) -> Vec<Field<'a>> {
    all(input)
        .into_iter()
        .filter(|f| match f.value {
            FieldValue::Text(s) => !shown.iter().any(|x| same(x, s)),
            FieldValue::Json(_) => true,
        })
        .collect()
}

/// The strings of the input that the readable rendering of `action` is made of.
pub fn rendered<'a>(action: &Action<'a>) -> Vec<&'a str> {
    match *action {
        Action::Shell { command } => vec![command],
        Action::Write { path, content } => vec![path, content],
        Action::Edit { path, old, new } => path.into_iter().chain([old, new]).collect(),
        Action::Patch { patch } => vec![patch],
        Action::Fetch { url } => vec![url],
        Action::Other => Vec::new(),
    }
}

/// Whether `a` and `b` are the same string of the input, not merely equal text.
fn same(a: &str, b: &str) -> bool {
    std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
}

fn walk<'a>(v: &'a Value, path: String, out: &mut Vec<Field<'a>>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                walk(child, join_key(&path, k), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                walk(child, format!("{path}[{i}]"), out);
            }
        }
        Value::String(s) => out.push(Field {
            path,
            value: FieldValue::Text(s),
        }),
        other => out.push(Field {
            path,
            value: FieldValue::Json(other.to_string()),
        }),
    }
}

/// `parent.key`, or `parent["key"]` for a key that is not a plain name (one holding a dot,
/// a bracket, a space, or nothing at all), so no two fields read as the same path.
fn join_key(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (plain, parent.is_empty()) {
        (true, true) => key.to_string(),
        (true, false) => format!("{parent}.{key}"),
        (false, _) => format!("{parent}[{}]", Value::from(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::approval::action_of;
    use serde_json::json;

    fn paths(fields: &[Field]) -> Vec<(String, String)> {
        fields
            .iter()
            .map(|f| (f.path.clone(), f.value.as_str().to_string()))
            .collect()
    }

    #[test]
    fn nested_fields_are_named_by_their_path() {
        let input = json!({"url": "https://example.com",
            "launchOptions": {"executablePath": "/bin/sh", "args": ["-c", "id"], "env": {}},
            "a.b": {"": 1}, "n": null});
        assert_eq!(
            paths(&all(&input)),
            [
                ("url".into(), "https://example.com".into()),
                ("launchOptions.executablePath".into(), "/bin/sh".into()),
                ("launchOptions.args[0]".into(), "-c".into()),
                ("launchOptions.args[1]".into(), "id".into()),
                ("launchOptions.env".into(), "{}".into()),
                ("[\"a.b\"][\"\"]".into(), "1".into()),
                ("n".into(), "null".into()),
            ]
        );
    }

    #[test]
    fn only_the_fields_the_rendering_is_made_of_are_left_out() {
        let input = json!({"file_path": "/a", "old_string": "x", "new_string": "x",
            "replace_all": true, "host": "x"});
        let action = action_of("Edit", &input);
        let rest = rest(&input, &rendered(&action));
        // `host` holds the same text as the edit's strings, and is still listed.
        assert_eq!(
            paths(&rest),
            [
                ("replace_all".into(), "true".into()),
                ("host".into(), "x".into())
            ]
        );
        let input = json!({"query": "select 1"});
        assert_eq!(rest_of(&input).len(), 1);
    }

    fn rest_of(input: &Value) -> Vec<Field<'_>> {
        rest(input, &rendered(&action_of("mcp__db__query", input)))
    }
}
