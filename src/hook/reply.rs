//! What the hook answers, before a harness puts it in its own words.

use serde_json::Value;

/// The hook's answer about one tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run it; with `updated_input`, run this input instead (an edited command).
    Allow {
        reason: String,
        updated_input: Option<Value>,
    },
    /// Do not run it; the reason reaches the model.
    Deny { reason: String },
    /// Hand the question back to the harness's own prompt in the terminal.
    Ask { reason: String },
}

impl Verdict {
    pub fn allow(reason: impl Into<String>) -> Verdict {
        Verdict::Allow {
            reason: reason.into(),
            updated_input: None,
        }
    }

    /// Run `input` in place of the call's own: the command as the person edited it.
    pub fn allow_edited(reason: impl Into<String>, input: Value) -> Verdict {
        Verdict::Allow {
            reason: reason.into(),
            updated_input: Some(input),
        }
    }

    pub fn deny(reason: impl Into<String>) -> Verdict {
        Verdict::Deny {
            reason: reason.into(),
        }
    }

    pub fn ask(reason: impl Into<String>) -> Verdict {
        Verdict::Ask {
            reason: reason.into(),
        }
    }

    /// `allow`, `deny` or `ask`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Allow { .. } => "allow",
            Verdict::Deny { .. } => "deny",
            Verdict::Ask { .. } => "ask",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Verdict::Allow { reason, .. } | Verdict::Deny { reason } | Verdict::Ask { reason } => {
                reason
            }
        }
    }
}

/// What the process prints on stdout, and its exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// One line of JSON, or nothing at all.
    pub stdout: Option<Value>,
    pub exit: u8,
}

impl Reply {
    /// Exit 0 with this JSON.
    pub fn json(v: Value) -> Reply {
        Reply {
            stdout: Some(v),
            exit: 0,
        }
    }

    /// Exit 0, printing nothing: the harness goes on its normal way.
    pub fn nothing() -> Reply {
        Reply {
            stdout: None,
            exit: 0,
        }
    }

    /// Exit 2 with nothing on stdout: the "blocking error" of Claude Code, Codex, gemini-cli
    /// and Cursor, whose stderr line is the reason.
    pub fn block() -> Reply {
        Reply {
            stdout: None,
            exit: 2,
        }
    }
}

/// `reason` with every web address put as "sayso": a harness that hands the reason to the
/// model (gemini-cli as the tool's result, pi always) must not give it the open question's
/// page, whose link answers the question, and a model with a shell could answer itself.
pub fn without_links(reason: &str) -> String {
    reason
        .split(' ')
        .map(|word| {
            let start = word.find("http://").or_else(|| word.find("https://"));
            match start {
                None => word.to_string(),
                Some(at) => {
                    let end = word[at..]
                        .find([')', ';', ',', '"'])
                        .map_or(word.len(), |e| at + e);
                    format!("{}sayso{}", &word[..at], &word[end..])
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
