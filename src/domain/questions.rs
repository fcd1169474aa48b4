//! Coding-agent `questions` (Claude Code's AskUserQuestion, gemini-cli's and pi's ask_user),
//! DESIGN.md §2.2, turned into a form.

use serde_json::Value;

use super::issues::Issues;
use super::spec::FormSpec;

/// Parses `questions` into a form; problems go to `issues` under `path`.
pub fn parse_questions(
    questions: &Value,
    path: &str,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<FormSpec> {
    let _ = (questions, path, issues, warnings);
    todo!()
}
