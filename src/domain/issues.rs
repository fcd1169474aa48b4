//! Validation problems, each tied to the JSON path of the value at fault, so that one
//! response can list every problem of a request at once.

use serde::Serialize;

/// One problem with one value of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Issue {
    /// JSON path of the value, e.g. `options[2].label`; empty for the whole body.
    pub path: String,
    pub message: String,
}

/// Collects problems while a request is parsed.
#[derive(Debug, Default)]
pub struct Issues(Vec<Issue>);

impl Issues {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(Issue {
            path: path.into(),
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn into_vec(self) -> Vec<Issue> {
        self.0
    }

    /// `Ok(value)` when nothing was found wrong, else every problem found.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<Issue>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}

/// Joins a parent path and a field name: `join("options[2]", "label")` → `options[2].label`.
pub fn join(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_string()
    } else {
        format!("{parent}.{field}")
    }
}

/// Joins a parent path and an index: `index("options", 2)` → `options[2]`.
pub fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_like_json_paths() {
        assert_eq!(join("", "question"), "question");
        assert_eq!(join(&index("options", 2), "label"), "options[2].label");
    }

    #[test]
    fn finish_returns_every_issue() {
        let mut issues = Issues::new();
        assert_eq!(Issues::new().finish(1), Ok(1));
        issues.push("a", "bad");
        issues.push("b", "worse");
        assert_eq!(issues.finish(()).unwrap_err().len(), 2);
    }
}
