//! The calls a standing allowance let through. The hook records each one before it lets it
//! run (`POST /v1/allowances/{id}/uses`), so no call passes on an allowance without a trace:
//! a use is an event of the approval whose Allow made the allowance, in its audit trail, and
//! nothing the API key reaches edits or deletes one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use super::Scope;
use crate::domain::approval::{MAX_NAME_CHARS, MAX_PATH_CHARS, read_tool_input};
use crate::domain::read;
use crate::domain::{Issue, Issues};

/// The most characters of a policy rule a use names (a scope's, as `GET /v1/allowances`
/// takes it).
const MAX_RULE_CHARS: usize = crate::domain::approval::MAX_RULE_CHARS;

const FIELDS: &[&str] = &[
    "harness",
    "tool_name",
    "tool_input",
    "cwd",
    "project",
    "rule",
    "session_id",
    "tool_use_id",
];

/// One call, as the hook read it from its harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UsedCall {
    pub harness: String,
    pub tool_name: String,
    /// The tool's arguments (at most 256 KiB as JSON).
    #[schema(value_type = Object)]
    pub tool_input: Map<String, Value>,
    pub cwd: Option<String>,
    /// The project folder the call was filed under.
    pub project: Option<String>,
    /// The policy rule that gated it (`null`: none matched).
    pub rule: Option<String>,
    /// The harness's session.
    pub session_id: Option<String>,
    /// The harness's id of this call.
    pub tool_use_id: Option<String>,
}

impl UsedCall {
    /// The issue naming the first part of the call that `scope` does not cover.
    pub fn outside(&self, scope: &Scope) -> Option<Issue> {
        let (path, theirs) = if self.harness != scope.harness {
            ("harness", Some(&scope.harness))
        } else if self.tool_name != scope.tool_name {
            ("tool_name", Some(&scope.tool_name))
        } else if self.project != scope.project {
            ("project", scope.project.as_ref())
        } else if self.rule != scope.rule {
            ("rule", scope.rule.as_ref())
        } else {
            return None;
        };
        let covers = match theirs {
            Some(v) => format!("it covers {}", read::quote_short(v)),
            None => "it covers calls without one".to_string(),
        };
        Some(Issue {
            path: path.into(),
            message: format!("is not the allowance's: {covers}"),
        })
    }

    /// The event detail a use is stored as: the call and the allowance it ran on.
    pub fn detail(&self, allowance_id: Uuid) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["allowance_id"] = Value::from(allowance_id.to_string());
        v
    }
}

/// A recorded use.
#[derive(Debug, Clone, PartialEq)]
pub struct AllowanceUse {
    /// Its event's id: increasing, the order uses were recorded in.
    pub id: i64,
    pub allowance_id: Uuid,
    /// The approval whose Allow made the allowance: the use is in its audit trail.
    pub decision_id: Uuid,
    /// When the server recorded it (just before the call ran).
    pub at: OffsetDateTime,
    pub call: UsedCall,
}

/// Reads a use's body: every text bounded as an approval's, each issue naming its field.
pub fn parse_use(body: &Value, warnings: &mut Vec<String>) -> Result<UsedCall, Vec<Issue>> {
    let mut issues = Issues::new();
    let Some(obj) = body.as_object() else {
        issues.push("", "the request body must be a JSON object");
        return Err(issues.into_vec());
    };
    read::warn_unknown(obj, FIELDS, "", warnings);
    let required = |key: &str, issues: &mut Issues| match read::get(obj, key) {
        Some(v) => read::text(v, key, issues, 1, MAX_NAME_CHARS),
        None => {
            issues.push(key, "is required");
            None
        }
    };
    let harness = required("harness", &mut issues);
    let tool_name = required("tool_name", &mut issues);
    let tool_input = read_tool_input(obj, "tool_input", &mut issues);
    let mut optional =
        |key: &str, max: usize| read::optional_text(read::get(obj, key), key, &mut issues, max);
    let cwd = optional("cwd", MAX_PATH_CHARS);
    let project = optional("project", MAX_PATH_CHARS);
    let rule = optional("rule", MAX_RULE_CHARS);
    let session_id = optional("session_id", MAX_NAME_CHARS);
    let tool_use_id = optional("tool_use_id", MAX_NAME_CHARS);
    let call = match (harness, tool_name, tool_input) {
        (Some(harness), Some(tool_name), Some(tool_input)) => Some(UsedCall {
            harness,
            tool_name,
            tool_input,
            cwd,
            project,
            rule,
            session_id,
            tool_use_id,
        }),
        _ => None,
    };
    issues
        .finish(call)
        .map(|c| c.expect("a call without issues is whole"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> Scope {
        Scope {
            harness: "claude".into(),
            project: Some("/home/ana/shop".into()),
            tool_name: "Bash".into(),
            rule: None,
        }
    }

    #[test]
    fn a_use_reads_back_and_matches_its_scope() {
        let body = json!({"harness": "claude", "tool_name": "Bash",
            "tool_input": {"command": "git status"}, "project": "/home/ana/shop",
            "session_id": "s1", "cwd": "/home/ana/shop/src"});
        let mut warnings = vec![];
        let call = parse_use(&body, &mut warnings).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(call.outside(&scope()), None);
        let d = call.detail(Uuid::nil());
        assert_eq!(d["allowance_id"], Uuid::nil().to_string());
        assert_eq!(d["tool_input"]["command"], "git status");
    }

    #[test]
    fn each_bad_field_is_named() {
        let mut w = vec![];
        let err = parse_use(&json!({"tool_input": []}), &mut w).unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["harness", "tool_name", "tool_input"]);
        let big = "x".repeat(crate::domain::approval::MAX_TOOL_INPUT_BYTES);
        let err = parse_use(
            &json!({"harness": "claude", "tool_name": "Bash", "tool_input": {"command": big},
                    "session_id": "s".repeat(MAX_NAME_CHARS + 1)}),
            &mut w,
        )
        .unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["tool_input", "session_id"]);
        assert!(parse_use(&json!("x"), &mut w).is_err());
    }

    #[test]
    fn a_call_outside_the_scope_says_which_part() {
        let mut call = parse_use(
            &json!({"harness": "claude", "tool_name": "Write", "project": "/home/ana/shop"}),
            &mut vec![],
        )
        .unwrap();
        let issue = call.outside(&scope()).unwrap();
        assert_eq!(issue.path, "tool_name");
        assert!(issue.message.contains("\"Bash\""), "{}", issue.message);
        call.tool_name = "Bash".into();
        call.project = None;
        assert_eq!(call.outside(&scope()).unwrap().path, "project");
        call.project = Some("/home/ana/shop".into());
        call.rule = Some("rule 1".into());
        let issue = call.outside(&scope()).unwrap();
        assert_eq!(issue.path, "rule");
        assert!(issue.message.contains("without one"), "{}", issue.message);
    }
}
