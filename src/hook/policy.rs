//! The policy: which calls are allowed or denied at once, and which a person decides.
//!
//! Rules come from a JSON file (`SAYSO_HOOK_POLICY`, else the project's `.sayso/policy.json`,
//! found walking up from the working directory (`super::project`), else
//! `~/.config/sayso/policy.json`); the first rule that matches
//! decides. Without a matching rule, read-only tools are allowed (unless `read_only` says
//! `ask`) and everything else goes to the person. docs/HARNESSES.md shows the format.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::call::{Harness, ToolCall};
use super::glob::Glob;
use crate::domain::approval::StepUp;
use crate::domain::people::{self, MAX_NAMED};
use crate::domain::shell::{self, Parsed};

mod command;
use command::CommandPattern;

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
    command: Option<CommandPattern>,
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
    /// Why the policy cannot tell for certain what the command runs, or that its parts are
    /// gated by different rules: no allowance then stands for the person's answer.
    pub unsure: Option<String>,
}

impl Ruling {
    /// Whether "Allow for this session" (or a standing allowance) may stand for this call's
    /// approval: never where the rule wants a passkey or names who must agree, nor where
    /// what runs cannot be told for certain.
    pub fn session_answer_allowed(&self) -> bool {
        self.step_up.is_none() && self.people == People::default() && self.unsure.is_none()
    }

    /// A ruling no rule made: `decision` by default, for `why`.
    fn unruled(decision: Rule, why: String) -> Ruling {
        Ruling {
            decision,
            step_up: None,
            people: People::default(),
            rule: None,
            why,
            unsure: None,
        }
    }

    /// No rule matched a call that is not only a read: the person is asked.
    fn person_decides() -> Ruling {
        Ruling::unruled(Rule::Ask, "no rule matched: a person decides".into())
    }

    /// How strict the ruling is: a compound command takes the strictest of its parts.
    fn strictness(&self) -> u8 {
        match self.decision {
            Rule::Deny => 3,
            Rule::Ask if self.step_up.is_some() || self.people != People::default() => 2,
            Rule::Ask => 1,
            Rule::Allow => 0,
        }
    }
}

impl Policy {
    /// Finds and reads the policy file: `explicit`, else the first of the usual places that
    /// exists. None found is the default policy; a file that cannot be read, or one found
    /// that another user owns, is an error.
    pub fn load(explicit: Option<&Path>, cwd: Option<&str>) -> Result<Policy, String> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => default_places(cwd).into_iter().find(|p| p.is_file()),
        };
        let Some(path) = path else {
            return Ok(Policy::default());
        };
        if explicit.is_none() {
            super::project::check_owner(&path)?;
        }
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

    /// What the policy says about `call`. A shell command is read with the shell's grammar
    /// (`domain::shell`): each simple command it runs meets the rules on its own, and the
    /// call takes the strictest ruling of its parts. A command whose reading is in doubt
    /// meets every rule that could apply, and no allowance stands for it.
    pub fn decide(&self, call: &ToolCall) -> Ruling {
        let Some(text) = call.command() else {
            return self.first_rule(call, |_| true);
        };
        let parsed = shell::parse(text);
        if !parsed.certain() {
            return self.in_doubt(call, &parsed);
        }
        let text = text.trim();
        let mut rulings: Vec<Ruling> = parsed
            .parts
            .iter()
            .map(|part| {
                self.first_rule(call, |pattern| match pattern {
                    Matching::Allow(p) => p.allows(part),
                    Matching::Catch(p) => p.catches(part),
                })
            })
            .collect();
        // A deny or ask pattern may also span several commands (`curl*|*sh`): it meets the
        // text as written too. With nothing that runs, the text is all there is.
        let whole = self.first_rule(call, |pattern| match pattern {
            Matching::Allow(p) => rulings.is_empty() && p.matches_text(text),
            Matching::Catch(p) => p.matches_text(text),
        });
        if whole.rule.is_some() || rulings.is_empty() {
            rulings.push(whole);
        }
        strictest(rulings)
    }

    /// The first rule that matches `call`, its command read by `command`; else the default.
    fn first_rule(&self, call: &ToolCall, command: impl Fn(Matching) -> bool) -> Ruling {
        for (i, rule) in self.rules.iter().enumerate() {
            let command_matches = match &rule.command {
                None => true,
                // A rule about commands matches no other tool.
                Some(_) if call.command().is_none() => false,
                Some(p) if rule.decision == Rule::Allow => command(Matching::Allow(p)),
                Some(p) => command(Matching::Catch(p)),
            };
            if command_matches && rule.matches_besides_command(call) {
                return self.ruling_of(i, rule);
            }
        }
        self.default_ruling(call)
    }

    /// A command whose reading is in doubt: every rule that could apply counts (any rule
    /// whose other conditions hold, whatever its command pattern; an allow rule only when
    /// it names no command), the strictest decides, and no allowance stands for it.
    fn in_doubt(&self, call: &ToolCall, parsed: &Parsed) -> Ruling {
        let reason = parsed
            .doubts
            .first()
            .map(shell::Doubt::reason)
            .unwrap_or_default();
        let could_apply = self.rules.iter().enumerate().filter(|(_, r)| {
            r.matches_besides_command(call) && (r.decision != Rule::Allow || r.command.is_none())
        });
        let rulings: Vec<Ruling> = could_apply.map(|(i, r)| self.ruling_of(i, r)).collect();
        let mut ruling = if rulings.is_empty() {
            self.default_ruling(call)
        } else {
            strictest(rulings)
        };
        ruling.why = format!(
            "what runs cannot be told for certain ({reason}), so every rule that could apply \
             counts: {}",
            ruling.why
        );
        ruling.unsure = Some(reason);
        ruling
    }

    fn ruling_of(&self, i: usize, rule: &PolicyRule) -> Ruling {
        let from = match &self.source {
            Some(p) => format!(" of {}", p.display()),
            None => String::new(),
        };
        let which = format!("rule {}{from} ({})", i + 1, rule.text);
        let why = match &rule.reason {
            Some(reason) => format!("{reason} [{which}]"),
            None => which.clone(),
        };
        Ruling {
            decision: rule.decision,
            step_up: rule.step_up,
            people: rule.people.clone(),
            rule: Some(which),
            why,
            unsure: None,
        }
    }

    /// No rule matched: read-only tools are allowed (unless `read_only` says otherwise), the
    /// rest is asked.
    fn default_ruling(&self, call: &ToolCall) -> Ruling {
        if read_only_tools(call.harness).contains(&call.tool_name.as_str()) {
            let decision = self.read_only.unwrap_or(Rule::Allow);
            return Ruling::unruled(
                decision,
                format!(
                    "{} only reads (read_only: {})",
                    call.tool_name,
                    word(decision)
                ),
            );
        }
        Ruling::person_decides()
    }
}

/// How a rule's command pattern is to be read: to the letter (allow) or in every reading
/// (deny, ask).
enum Matching<'a> {
    Allow(&'a CommandPattern),
    Catch(&'a CommandPattern),
}

/// The strictest of the parts' rulings (the first of equals). Parts that are asked under
/// different rules leave no rule that an allowance could stand for alone.
fn strictest(rulings: Vec<Ruling>) -> Ruling {
    let asked: Vec<&Ruling> = rulings
        .iter()
        .filter(|r| r.decision != Rule::Allow)
        .collect();
    let mixed = asked.windows(2).any(|w| w[0].rule != w[1].rule);
    let mut best = rulings
        .iter()
        .fold(None::<&Ruling>, |best, r| match best {
            Some(b) if b.strictness() >= r.strictness() => Some(b),
            _ => Some(r),
        })
        .cloned()
        .unwrap_or_else(Ruling::person_decides);
    if mixed && best.unsure.is_none() {
        best.unsure = Some("its commands are gated by different rules".into());
    }
    best
}

fn word(rule: Rule) -> &'static str {
    match rule {
        Rule::Allow => "allow",
        Rule::Deny => "deny",
        Rule::Ask => "ask",
    }
}

/// The project's policy (the nearest `.sayso/policy.json` from the working directory up to
/// the project root), then the user-wide one.
fn default_places(cwd: Option<&str>) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(policy) = cwd
        .and_then(super::project::place_of)
        .and_then(|p| p.policy)
    {
        places.push(policy);
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
        command: r.command.as_deref().map(CommandPattern::new),
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

impl PolicyRule {
    /// Whether the rule's conditions other than its command hold for `call`.
    fn matches_besides_command(&self, call: &ToolCall) -> bool {
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
}

#[cfg(test)]
mod respellings;
#[cfg(test)]
mod tests;
