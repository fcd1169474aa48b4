//! The MCP profiles: one endpoint per ask tool that agents already know (docs/SEEDS.md),
//! each listing that tool under its own name and input schema, and wording its results the
//! way that tool does. A profile is only a shape: the same auth, service, storage and pages
//! serve them all.
//!
//! A decision asked through a profile keeps its shape (`DecisionSpec::shape`), so an
//! `await_decision` or `get_decision` hours later, on any endpoint, returns that tool's
//! result rather than sayso's own sentence.

pub mod answers;
pub mod claude;
pub mod gemini;
pub mod omp;
pub mod pi;

use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::domain::spec::Shape;

/// Which tools an endpoint lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `/mcp`: sayso's own tools, with `ask_user_question` in Claude Code's shape.
    Hosted,
    /// `/mcp/omp`: oh-my-pi's `ask`.
    Omp,
    /// `/mcp/gemini`: gemini-cli's `ask_user`.
    Gemini,
    /// `/mcp/claude`: Claude Code's `AskUserQuestion`.
    Claude,
    /// `/mcp/pi`: pi's `ask_user`.
    Pi,
}

impl Profile {
    /// The profiles with an endpoint of their own under `/mcp/`.
    pub const NAMED: [Profile; 4] = [Profile::Omp, Profile::Gemini, Profile::Claude, Profile::Pi];

    /// The profile's name, as in `/mcp/<name>` and `sayso mcp --profile <name>`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Hosted => "hosted",
            Profile::Omp => "omp",
            Profile::Gemini => "gemini",
            Profile::Claude => "claude",
            Profile::Pi => "pi",
        }
    }

    /// The endpoint's path.
    pub fn path(self) -> String {
        match self {
            Profile::Hosted => "/mcp".to_string(),
            named => format!("/mcp/{}", named.name()),
        }
    }

    /// The profile named `name`; `hosted` (or nothing) is `/mcp`'s own.
    pub fn parse(name: &str) -> Result<Profile, String> {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() || name == "hosted" {
            return Ok(Profile::Hosted);
        }
        Profile::NAMED
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| format!("there is no profile {name:?}: use omp, gemini, claude or pi"))
    }
}

/// A result as a profile's tool words it.
#[derive(Debug)]
pub struct Worded {
    pub text: String,
    /// The tool's structured result (its `details` or data object), when it has one.
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl Worded {
    pub fn ok(text: String, structured: Option<Value>) -> Self {
        Worded {
            text,
            structured,
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Worded {
            text: text.into(),
            structured: None,
            is_error: true,
        }
    }

    pub fn into_result(self) -> CallToolResult {
        let content = vec![rmcp::model::ContentBlock::text(self.text)];
        let mut r = if self.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        r.structured_content = self.structured;
        r
    }
}

/// A resolved decision worded as its shape's tool words it.
/// A result as `/mcp/claude` and `/mcp/omp` send it: the text alone, whether the person
/// answered or not yet. Both clients put a result's structured content before their model:
/// Claude Code in place of the text (the model would read `{"questions":…,"answers":…}` and
/// never the tool's sentence), oh-my-pi as a second block of fenced JSON after it (the
/// decision's details, which its native `ask` keeps from the model). The text is the contract.
pub fn text_only(mut result: CallToolResult) -> CallToolResult {
    result.structured_content = None;
    result
}

pub fn word(shape: Shape, asked: &answers::Asked<'_>) -> Worded {
    match shape {
        Shape::Omp => omp::word(asked),
        Shape::Gemini => gemini::word(asked),
        Shape::Claude => claude::word(asked),
        Shape::Pi => pi::word(asked),
    }
}

/// The longest decision question (docs/API.md).
const MAX_TITLE_CHARS: usize = 2000;

/// One line naming the questions, for the feed and the notification.
pub fn title(questions: Option<&Value>) -> String {
    let texts: Vec<&str> = questions
        .and_then(Value::as_array)
        .map(|qs| {
            qs.iter()
                .filter_map(|q| q.get("question").and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let title = match texts.as_slice() {
        [] => "Questions from your agent".to_string(),
        [one] => one.to_string(),
        many => many.join(" · "),
    };
    title.chars().take(MAX_TITLE_CHARS).collect()
}

/// How long a question asked through a profile stays open when nothing else says: the
/// documented tools wait for the person indefinitely; sayso keeps it a week.
pub const PROFILE_TTL_MINUTES: u64 = 7 * 24 * 60;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_named_as_their_paths() {
        assert_eq!(Profile::parse("OMP").unwrap(), Profile::Omp);
        assert_eq!(Profile::parse("").unwrap(), Profile::Hosted);
        assert_eq!(Profile::Gemini.path(), "/mcp/gemini");
        assert_eq!(Profile::Hosted.path(), "/mcp");
        assert!(
            Profile::parse("cursor")
                .unwrap_err()
                .contains("omp, gemini, claude or pi")
        );
    }

    #[test]
    fn the_title_joins_the_questions() {
        let qs = serde_json::json!([{"question": "A?"}, {"question": " B? "}]);
        assert_eq!(title(Some(&qs)), "A? · B?");
        assert_eq!(title(None), "Questions from your agent");
    }
}
