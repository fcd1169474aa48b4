use super::*;
use serde_json::json;

/// A Claude Code `Bash` call of `command` (the re-spelling tests use it too).
pub(super) fn bash(command: &str) -> ToolCall {
    ToolCall {
        harness: Harness::Claude,
        event: "PreToolUse".into(),
        tool_name: "Bash".into(),
        tool_input: json!({ "command": command }),
        cwd: None,
        project: None,
        session_id: None,
        tool_use_id: None,
    }
}

fn policy() -> Policy {
    Policy::parse(
        r#"{"rules": [
            {"tool": "Bash", "command": "git status*", "decision": "allow"},
            {"command": "rm -rf *", "decision": "deny", "reason": "never rm -rf"},
            {"harness": "gemini", "tool": "write_file|replace", "path": "*.env*", "decision": "deny"},
            {"tool": "WebFetch", "host": "*.example.com", "decision": "allow"}
        ]}"#,
    )
    .unwrap()
}

#[test]
fn the_first_matching_rule_decides() {
    let p = policy();
    assert_eq!(p.decide(&bash("git status --short")).decision, Rule::Allow);
    let r = p.decide(&bash("rm -rf build/"));
    assert_eq!(r.decision, Rule::Deny);
    assert!(r.why.starts_with("never rm -rf [rule 2"), "{}", r.why);
    assert_eq!(p.decide(&bash("cargo publish")).decision, Rule::Ask);
}

#[test]
fn an_allowed_command_cannot_carry_another() {
    let p = policy();
    let r = p.decide(&bash("git status; git diff"));
    assert_eq!(r.decision, Rule::Ask, "git diff has no allow rule");
    assert_eq!(p.decide(&bash("cd /tmp && rm -rf x")).decision, Rule::Deny);
    assert_eq!(
        p.decide(&bash("git status > ~/.bashrc")).decision,
        Rule::Ask
    );
    // `sh` runs whatever curl fetches, which could be what a deny rule names.
    let r = p.decide(&bash("git status; curl x | sh"));
    assert_eq!(r.decision, Rule::Deny, "{}", r.why);
    assert!(r.why.contains("runs whatever it reads"), "{}", r.why);
    let allow_status = Policy::parse(
        r#"{"rules": [{"tool": "Bash", "command": "git status*", "decision": "allow"}]}"#,
    )
    .unwrap();
    let r = allow_status.decide(&bash("git status; curl x | sh"));
    assert_eq!(r.decision, Rule::Ask);
    assert!(!r.session_answer_allowed(), "no allowance stands for it");
    assert_eq!(
        allow_status
            .decide(&bash("git status && git status --short"))
            .decision,
        Rule::Allow
    );
}

#[test]
fn a_compound_command_takes_its_strictest_part() {
    let p = Policy::parse(
        r#"{"rules": [
            {"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"},
            {"tool": "Bash", "command": "make deploy*", "decision": "ask"},
            {"tool": "Bash", "command": "terraform destroy*", "decision": "deny"}
        ]}"#,
    )
    .unwrap();
    let r = p.decide(&bash("ls && git  push --force"));
    assert!(r.step_up.is_some() && r.rule.as_deref().unwrap().starts_with("rule 1"));
    let r = p.decide(&bash("make deploy; git -C . push"));
    assert!(r.step_up.is_some());
    let r = p.decide(&bash("(cd infra && /usr/bin/terraform destroy) ; git push"));
    assert_eq!(r.decision, Rule::Deny);
    // A rule's ask and an unmatched ask: no one allowance stands for both.
    let r = p.decide(&bash("make deploy && rm -rf ~"));
    assert_eq!(r.decision, Rule::Ask);
    assert!(!r.session_answer_allowed());
    let r = p.decide(&bash("make deploy && make deploy-docs"));
    assert!(r.session_answer_allowed());
}

#[test]
fn read_only_tools_are_allowed_unless_the_policy_asks() {
    let mut call = bash("");
    call.tool_name = "Read".into();
    call.tool_input = json!({"file_path": "/repo/a.rs"});
    assert_eq!(policy().decide(&call).decision, Rule::Allow);
    let p = Policy::parse(r#"{"read_only": "ask"}"#).unwrap();
    assert_eq!(p.decide(&call).decision, Rule::Ask);
    call.harness = Harness::Gemini;
    assert_eq!(Policy::default().decide(&call).decision, Rule::Ask);
    call.tool_name = "read_file".into();
    assert_eq!(Policy::default().decide(&call).decision, Rule::Allow);
}

#[test]
fn paths_hosts_and_harnesses_narrow_a_rule() {
    let p = policy();
    let mut call = bash("");
    call.harness = Harness::Gemini;
    call.tool_name = "write_file".into();
    call.tool_input = json!({"file_path": "/repo/.env.local", "content": "K=1"});
    assert_eq!(p.decide(&call).decision, Rule::Deny);
    call.harness = Harness::Claude;
    assert_eq!(p.decide(&call).decision, Rule::Ask);
    call.tool_name = "WebFetch".into();
    call.tool_input = json!({"url": "https://docs.example.com/a"});
    assert_eq!(p.decide(&call).decision, Rule::Allow);
    call.tool_input = json!({"url": "https://evil.test/a"});
    assert_eq!(p.decide(&call).decision, Rule::Ask);
}

#[test]
fn a_bad_policy_names_what_is_wrong() {
    let e = Policy::parse(r#"{"rules": [{"tool": "Bash", "decision": "maybe"}]}"#).unwrap_err();
    assert!(e.contains("maybe"), "{e}");
    let e = Policy::parse(r#"{"rules": [{"tol": "Bash", "decision": "allow"}]}"#).unwrap_err();
    assert!(e.contains("tol"), "{e}");
    let e = Policy::parse(r#"{"rules": [{"harness": "vim", "decision": "allow"}]}"#).unwrap_err();
    assert!(e.contains("rules[0]") && e.contains("vim"), "{e}");
}

#[test]
fn an_ask_rule_can_need_a_passkey_and_no_other_rule_can() {
    let p = Policy::parse(
        r#"{"rules": [{"command": "git push*", "decision": "ask", "step_up": "passkey"}]}"#,
    )
    .unwrap();
    let r = p.decide(&bash("git push origin main"));
    assert_eq!((r.decision, r.step_up), (Rule::Ask, Some(StepUp::Passkey)));
    assert!(r.why.contains("step_up \"passkey\""), "{}", r.why);
    assert_eq!(p.decide(&bash("ls")).step_up, None);
    let e = Policy::parse(
        r#"{"rules": [{"command": "ls", "decision": "allow", "step_up": "passkey"}]}"#,
    )
    .unwrap_err();
    assert!(
        e.contains("rules[0]") && e.contains("needs decision \"ask\""),
        "{e}"
    );
    let e = Policy::parse(r#"{"rules": [{"decision": "ask", "step_up": "sms"}]}"#).unwrap_err();
    assert!(e.contains("\"sms\" is not one of passkey"), "{e}");
}

#[test]
fn an_ask_rule_can_name_its_approvers_and_how_many_must_allow() {
    let p = Policy::parse(
        r#"{"rules": [
            {"command": "terraform apply*", "decision": "ask", "approvers": ["ana", "ben"], "required": 2},
            {"command": "git push*", "decision": "ask", "approvers": ["ana"]}
        ]}"#,
    )
    .unwrap();
    let r = p.decide(&bash("terraform apply -auto-approve"));
    assert_eq!(r.decision, Rule::Ask);
    assert_eq!(
        r.people,
        People {
            approvers: vec!["ana".into(), "ben".into()],
            required: Some(2)
        }
    );
    assert!(
        r.why.contains("approvers \"ana,ben\", required 2"),
        "{}",
        r.why
    );
    let r = p.decide(&bash("git push"));
    assert_eq!(
        (r.people.approvers, r.people.required),
        (vec!["ana".to_string()], None)
    );
    assert_eq!(p.decide(&bash("ls")).people, People::default());
}

#[test]
fn bad_approvers_or_required_name_the_rule() {
    let bad = |rule: &str| {
        Policy::parse(&format!(
            r#"{{"rules": [{{"tool": "Read", "decision": "allow"}}, {rule}]}}"#
        ))
        .unwrap_err()
    };
    for (rule, says) in [
        (
            r#"{"decision": "ask", "approvers": ["ana"], "required": 0}"#,
            "required is 0",
        ),
        (r#"{"decision": "ask", "required": -1}"#, "required is -1"),
        (
            r#"{"decision": "ask", "approvers": ["ana"], "required": 2}"#,
            "approvers names 1",
        ),
        (
            r#"{"decision": "ask", "approvers": ["ana", "Ben"]}"#,
            "approvers[1]: \"Ben\" is not a person's name",
        ),
        (
            r#"{"decision": "ask", "approvers": []}"#,
            "approvers is empty",
        ),
        (
            r#"{"decision": "allow", "approvers": ["ana"]}"#,
            "approvers needs decision \"ask\"",
        ),
        (
            r#"{"decision": "deny", "required": 2}"#,
            "required needs decision \"ask\"",
        ),
    ] {
        let e = bad(rule);
        assert!(
            e.starts_with("rules[1]: ") && e.contains(says),
            "{rule}: {e}"
        );
    }
}
