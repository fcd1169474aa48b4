//! A command the person edited before allowing is a call of its own, and the policy decides
//! it again: the person's Allow was given under the rule that decided the agent's command,
//! and an edit must not carry it past a rule that decides the edited one differently.
//!
//! - A `deny` rule denies the edit: the harness is told which rule refused it.
//! - An `allow` rule, a plain `ask` rule, or no rule: the person's Allow is all that needs,
//!   and the edit runs.
//! - An `ask` rule that wants a passkey or names its people: the edit runs on the person's
//!   Allow only if the approval just answered was put by that same rule (so the server
//!   already held the Allow to it). Otherwise the edit is put to the person again as an
//!   approval of its own carrying that rule, shown as it is and not editable, and runs only
//!   once that one is allowed.

use std::time::Duration;

use serde_json::Value;

use super::ask::{self, Asking, NoAnswer};
use super::call::ToolCall;
use super::policy::{Policy, Rule, Ruling};
use super::reply::Verdict;
use crate::client::args::NotifyArg;
use crate::client::http::Api;
use crate::domain::receipt::PublicKey;

/// What the policy makes of the person's edit.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    /// The person's Allow suffices: the edit runs.
    Runs,
    /// A rule refuses it; the reason names the rule.
    Refused(String),
    /// The rule that decides the edit wants what the answered approval did not carry.
    AskAgain(Ruling),
}

/// How the policy rules on `edited` (the call with the person's command), given the
/// ruling `asked` under which the person allowed the agent's call.
pub fn judge(policy: &Policy, edited: &ToolCall, asked: &Ruling) -> Judged {
    let ruling = policy.decide(edited);
    match ruling.decision {
        Rule::Deny => Judged::Refused(format!(
            "sayso policy refused the person's edited command: {}",
            ruling.why
        )),
        Rule::Allow => Judged::Runs,
        Rule::Ask if ruling.session_answer_allowed() => Judged::Runs,
        // One person's Allow under the same rule; where several must agree, the others
        // allowed the agent's command, not this one.
        Rule::Ask
            if ruling.rule.is_some()
                && ruling.rule == asked.rule
                && ruling.people.required.unwrap_or(1) <= 1 =>
        {
            Judged::Runs
        }
        Rule::Ask => Judged::AskAgain(ruling),
    }
}

/// The verdict once the policy has had its say on an edit: `verdict` as it is when the
/// person made no edit (or denied), else the edit run, refused or put to the person again
/// within `left` of the hook's wait.
// The asking's own settings (server, notify, pinned key) ride along with the edit's.
#[allow(clippy::too_many_arguments)]
pub async fn hold_to_policy(
    api: &Api,
    policy: &Policy,
    call: &ToolCall,
    asked: &Ruling,
    verdict: Verdict,
    left: Duration,
    notify: Option<NotifyArg>,
    key: Option<&PublicKey>,
) -> Result<Verdict, NoAnswer> {
    let Verdict::Allow {
        updated_input: Some(input),
        ..
    } = &verdict
    else {
        return Ok(verdict);
    };
    let edited = edited_call(call, input);
    match judge(policy, &edited, asked) {
        Judged::Runs => Ok(verdict),
        Judged::Refused(why) => Ok(Verdict::deny(why)),
        Judged::AskAgain(ruling) => {
            let again = ask::ask(api, &edited, left, notify, &ruling, key, Asking::Edit).await?;
            Ok(match again {
                Verdict::Allow { reason, .. } => Verdict::allow_edited(
                    format!(
                        "{reason} (the person's edited command, allowed again as {} asks)",
                        ruling.rule.as_deref().unwrap_or("the policy")
                    ),
                    input.clone(),
                ),
                other => other,
            })
        }
    }
}

/// The agent's call with the input the person's edit gives it.
fn edited_call(call: &ToolCall, input: &Value) -> ToolCall {
    ToolCall {
        tool_input: input.clone(),
        ..call.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::call::Harness;
    use serde_json::json;

    const POLICY: &str = r#"{"rules": [
        {"command": "rm -rf /*", "decision": "deny", "reason": "never the root"},
        {"command": "git push*", "decision": "ask", "step_up": "passkey"},
        {"command": "make deploy*", "decision": "ask", "approvers": ["ana"]},
        {"command": "ls*", "decision": "allow"},
        {"command": "rm *", "decision": "ask"}
    ]}"#;

    fn bash(command: &str) -> ToolCall {
        ToolCall {
            harness: Harness::Claude,
            event: "PreToolUse".into(),
            tool_name: "Bash".into(),
            tool_input: json!({ "command": command }),
            cwd: Some("/home/me/shop".into()),
            project: Some("/home/me/shop".into()),
            session_id: Some("s1".into()),
            tool_use_id: Some("toolu_1".into()),
        }
    }

    fn judged(asked: &str, edit: &str) -> Judged {
        let p = Policy::parse(POLICY).unwrap();
        judge(&p, &bash(edit), &p.decide(&bash(asked)))
    }

    #[test]
    fn a_deny_rule_refuses_the_edit_and_names_itself() {
        let Judged::Refused(why) = judged("rm -rf build", "rm -rf /") else {
            panic!("refused")
        };
        assert!(
            why.contains("never the root") && why.contains("rule 1"),
            "{why}"
        );
    }

    #[test]
    fn a_rule_that_wants_more_than_the_answered_approval_carried_asks_again() {
        let Judged::AskAgain(r) = judged("rm -rf build", "git push --force") else {
            panic!("asked again")
        };
        assert!(r.step_up.is_some() && r.rule.as_deref().unwrap().starts_with("rule 2"));
        let Judged::AskAgain(r) = judged("rm -rf build", "make deploy-prod") else {
            panic!("asked again")
        };
        assert_eq!(r.people.approvers, ["ana"]);
        // Under the same rule the server already held the Allow to the passkey.
        assert_eq!(judged("git push", "git push origin main"), Judged::Runs);
    }

    #[test]
    fn an_edit_the_policy_allows_or_asks_plainly_about_runs() {
        assert_eq!(judged("rm -rf build", "rm -rf build/cache"), Judged::Runs);
        assert_eq!(judged("rm -rf build", "ls build"), Judged::Runs);
        assert_eq!(judged("rm -rf build", "cargo clean"), Judged::Runs);
    }
}
