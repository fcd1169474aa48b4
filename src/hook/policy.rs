//! The policy: which calls are allowed or denied at once, and which a person decides.
//!
//! Rules come from a JSON file (`SAYSO_HOOK_POLICY`, else `.sayso/policy.json` under the
//! working directory, else `~/.config/sayso/policy.json`); the first rule that matches
//! decides. Without a matching rule, read-only tools are allowed (unless `read_only` says
//! `ask`) and everything else goes to the person. docs/HARNESSES.md shows the format.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::call::{Harness, ToolCall};
use super::glob::Glob;
use crate::domain::approval::StepUp;
use crate::domain::people::{self, MAX_NAMED};

/// What a rule (or the default) does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    Allow,
    Deny,
    Ask,
}

/// Tools that only read, by harness: allowed without asking by default.
pub fn read_only_tools(harness: Harness) -> &'static [&'static str] {
    match harness {
        Harness::Claude | Harness::Codex => &[
            "Read",
            "Glob",
            "Grep",
            "LS",
            "WebSearch",
            "TodoWrite",
            "NotebookRead",
        ],
        Harness::Gemini => &[
            "read_file",
            "read_many_files",
            "glob",
            "search_file_content",
            "list_directory",
        ],
        Harness::Copilot => &["view", "grep", "glob", "search"],
        // Cursor asks its hooks about shell commands and MCP calls only.
        Harness::Cursor => &[],
        Harness::Pi => &["read", "grep", "find", "ls"],
    }
}

/// The policy file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    read_only: Option<Rule>,
    #[serde(default)]
    rules: Vec<RuleFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    harness: Option<String>,
    tool: Option<String>,
    command: Option<String>,
    path: Option<String>,
    host: Option<String>,
    decision: Rule,
    reason: Option<String>,
    /// `passkey`: the person's Allow counts only with their passkey (an `ask` rule only).
    step_up: Option<String>,
    /// The people of the inbox asked, by name (an `ask` rule only).
    approvers: Option<Vec<String>>,
    /// How many of them must Allow (an `ask` rule only).
    required: Option<i64>,
}

/// One rule, its patterns compiled.
#[derive(Debug, Clone)]
struct PolicyRule {
    harness: Option<Vec<String>>,
    tool: Option<Vec<Glob>>,
    command: Option<Glob>,
    path: Option<Glob>,
    host: Option<Glob>,
    decision: Rule,
    reason: Option<String>,
    step_up: Option<StepUp>,
    people: People,
    /// How the rule reads, for `--explain`.
    text: String,
}

/// The rules in force, and where they came from.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    source: Option<PathBuf>,
    read_only: Option<Rule>,
    rules: Vec<PolicyRule>,
}

/// Who answers a question an `ask` rule puts: its `approvers` and `required`, sent with the
/// approval as the create request's fields of the same names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct People {
    /// The people of the inbox asked, by name; empty for everyone in the inbox.
    pub approvers: Vec<String>,
    /// How many of them must Allow; `None` for the server's default (one).
    pub required: Option<u32>,
}

/// Which rule decided, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub decision: Rule,
    /// What the person's Allow needs besides the tap (an `ask` rule's `step_up`).
    pub step_up: Option<StepUp>,
    /// Who is asked and how many must Allow (an `ask` rule's `approvers` and `required`).
    pub people: People,
    /// The rule that decided, as `rule 2 of /path/policy.json (tool "Bash", …)`; `None` when
    /// no rule matched. An approval carries it, and an "Allow for this session" counts only
    /// for calls the same rule decides.
    pub rule: Option<String>,
    /// One line for `--explain` and the reason the harness shows.
    pub why: String,
}

impl Ruling {
    /// Whether "Allow for this session" may stand for this call's approval: never where the
    /// rule wants a passkey or names who must agree.
    pub fn session_answer_allowed(&self) -> bool {
        self.step_up.is_none() && self.people == People::default()
    }
}

impl Policy {
    /// Finds and reads the policy file: `explicit`, else the first of the usual places that
    /// exists. None found is the default policy; a file that cannot be read is an error.
    pub fn load(explicit: Option<&Path>, cwd: Option<&str>) -> Result<Policy, String> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => default_places(cwd).into_iter().find(|p| p.is_file()),
        };
        let Some(path) = path else {
            return Ok(Policy::default());
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the policy {}: {e}", path.display()))?;
        let mut policy = Policy::parse(&text)
            .map_err(|e| format!("the policy {} is not valid: {e}", path.display()))?;
        policy.source = Some(path);
        Ok(policy)
    }

    /// Reads a policy from its JSON text.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let file: PolicyFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let rules = file
            .rules
            .into_iter()
            .enumerate()
            .map(|(i, r)| compile(r).map_err(|e| format!("rules[{i}]: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Policy {
            source: None,
            read_only: file.read_only,
            rules,
        })
    }

    /// What the policy says about `call`.
    pub fn decide(&self, call: &ToolCall) -> Ruling {
        let from = match &self.source {
            Some(p) => format!(" of {}", p.display()),
            None => String::new(),
        };
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.matches(call) {
                let which = format!("rule {}{from} ({})", i + 1, rule.text);
                let why = match &rule.reason {
                    Some(reason) => format!("{reason} [{which}]"),
                    None => which.clone(),
                };
                return Ruling {
                    decision: rule.decision,
                    step_up: rule.step_up,
                    people: rule.people.clone(),
                    rule: Some(which),
                    why,
                };
            }
        }
        if read_only_tools(call.harness).contains(&call.tool_name.as_str()) {
            let decision = self.read_only.unwrap_or(Rule::Allow);
            return Ruling {
                decision,
                step_up: None,
                people: People::default(),
                rule: None,
                why: format!(
                    "{} only reads (read_only: {})",
                    call.tool_name,
                    word(decision)
                ),
            };
        }
        Ruling {
            decision: Rule::Ask,
            step_up: None,
            people: People::default(),
            rule: None,
            why: "no rule matched: a person decides".into(),
        }
    }
}

fn word(rule: Rule) -> &'static str {
    match rule {
        Rule::Allow => "allow",
        Rule::Deny => "deny",
        Rule::Ask => "ask",
    }
}

fn default_places(cwd: Option<&str>) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(cwd) = cwd {
        places.push(Path::new(cwd).join(".sayso").join("policy.json"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        places.push(
            Path::new(&home)
                .join(".config")
                .join("sayso")
                .join("policy.json"),
        );
    }
    places
}

fn compile(r: RuleFile) -> Result<PolicyRule, String> {
    let mut text = Vec::new();
    let mut note = |name: &str, v: &Option<String>| {
        if let Some(v) = v {
            text.push(format!("{name} {v:?}"));
        }
    };
    note("harness", &r.harness);
    note("tool", &r.tool);
    note("command", &r.command);
    note("path", &r.path);
    note("host", &r.host);
    text.push(format!("decision {}", word(r.decision)));
    let step_up = match r.step_up.as_deref() {
        None => None,
        Some(s) if r.decision != Rule::Ask => {
            return Err(format!(
                "step_up {s:?} needs decision \"ask\": only a person's answer can need a passkey \
                 (this rule's decision is {:?})",
                word(r.decision)
            ));
        }
        Some(s) => match StepUp::parse(s) {
            Some(step) => {
                text.push(format!("step_up {s:?}"));
                Some(step)
            }
            None => {
                return Err(format!(
                    "step_up {s:?} is not one of {}",
                    StepUp::NAMES.join(", ")
                ));
            }
        },
    };
    let people = compile_people(&r)?;
    if !people.approvers.is_empty() {
        text.push(format!("approvers {:?}", people.approvers.join(",")));
    }
    if let Some(n) = people.required {
        text.push(format!("required {n}"));
    }
    let harness = match &r.harness {
        None => None,
        Some(h) => {
            let names: Vec<String> = h.split('|').map(|s| s.trim().to_string()).collect();
            for n in &names {
                if !["claude", "codex", "gemini", "copilot", "cursor", "pi"].contains(&n.as_str()) {
                    return Err(format!(
                        "harness {n:?} is not one of claude, codex, gemini, copilot, cursor, pi"
                    ));
                }
            }
            Some(names)
        }
    };
    Ok(PolicyRule {
        harness,
        tool: r
            .tool
            .as_deref()
            .map(|t| t.split('|').map(|p| Glob::new(p.trim())).collect()),
        command: r.command.as_deref().map(Glob::new),
        path: r.path.as_deref().map(Glob::new),
        host: r.host.as_deref().map(Glob::new),
        decision: r.decision,
        reason: r.reason,
        step_up,
        people,
        text: text.join(", "),
    })
}

/// A rule's `approvers` and `required`, checked as the server will check them, so a policy
/// that would have every question refused is not valid to begin with.
fn compile_people(r: &RuleFile) -> Result<People, String> {
    if r.approvers.is_none() && r.required.is_none() {
        return Ok(People::default());
    }
    if r.decision != Rule::Ask {
        let field = if r.approvers.is_some() {
            "approvers"
        } else {
            "required"
        };
        return Err(format!(
            "{field} needs decision \"ask\": only a question put to people has approvers \
             (this rule's decision is {:?})",
            word(r.decision)
        ));
    }
    let mut approvers: Vec<String> = Vec::new();
    if let Some(names) = &r.approvers {
        if names.is_empty() {
            return Err("approvers is empty: name at least one person, or leave it out".into());
        }
        if names.len() > MAX_NAMED {
            return Err(format!("approvers names more than {MAX_NAMED} people"));
        }
        for (i, name) in names.iter().enumerate() {
            let name = name.trim();
            people::check_name(name).map_err(|e| format!("approvers[{i}]: {e}"))?;
            if !approvers.iter().any(|a| a == name) {
                approvers.push(name.to_string());
            }
        }
    }
    let required = match r.required {
        None => None,
        Some(n) if n < 1 || n > MAX_NAMED as i64 => {
            return Err(format!(
                "required is {n}: it is how many people must Allow, 1 to {MAX_NAMED}"
            ));
        }
        Some(n) if !approvers.is_empty() && n as usize > approvers.len() => {
            return Err(format!(
                "required is {n}, but approvers names {}: that many could never Allow",
                approvers.len()
            ));
        }
        Some(n) => Some(n as u32),
    };
    Ok(People {
        approvers,
        required,
    })
}

/// Shell operators that join or redirect commands.
const SHELL_OPERATORS: &[&str] = &[";", "&", "|", "`", "$(", ">", "<", "\n"];

impl PolicyRule {
    fn matches(&self, call: &ToolCall) -> bool {
        if let Some(names) = &self.harness
            && !names.iter().any(|n| n == call.harness.as_str())
        {
            return false;
        }
        if let Some(tools) = &self.tool
            && !tools.iter().any(|g| g.matches(&call.tool_name))
        {
            return false;
        }
        if let Some(glob) = &self.command {
            let Some(command) = call.command() else {
                return false;
            };
            if !self.command_matches(glob, command.trim()) {
                return false;
            }
        }
        if let Some(glob) = &self.path {
            match call.path() {
                Some(path) if glob.matches(path) => {}
                _ => return false,
            }
        }
        if let Some(glob) = &self.host {
            let host = call.tool_input["url"]
                .as_str()
                .and_then(|u| url::Url::parse(u).ok())
                .and_then(|u| u.host_str().map(str::to_string));
            match host {
                Some(h) if glob.matches(&h) => {}
                _ => return false,
            }
        }
        true
    }

    /// An allow rule matches a command only when the command does one thing: `git status*`
    /// must not allow `git status; rm -rf ~`. A deny or ask rule matches the whole command
    /// or any part of it, so `rm -rf *` also catches `cd x && rm -rf y`.
    fn command_matches(&self, glob: &Glob, command: &str) -> bool {
        if self.decision == Rule::Allow {
            let compound = SHELL_OPERATORS.iter().any(|op| command.contains(op));
            return !compound && glob.matches(command);
        }
        glob.matches(command)
            || command
                .split(['\n', ';', '&', '|'])
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .any(|part| glob.matches(part))
    }
}

#[cfg(test)]
mod tests;
