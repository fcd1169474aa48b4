//! "Allow for this session" stands for one person's tap on one kind of call: it never passes
//! a rule that wants a passkey or more people, and never a call that a policy rule of its own
//! gates. Each test here is an attack: the agent's session already holds an allowance, and
//! the call it makes next must still reach the person.

use serde_json::{Value, json};

use crate::common::server::TestServer;
use crate::run::{Project, finish, pending_decision, run, run_answered, server, start};

/// A step-up rule for pushes, an ask rule of its own for deploys; everything else falls to
/// the default (ask).
const POLICY: &str = r#"{"rules": [
    {"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"},
    {"tool": "Bash", "command": "make deploy*", "decision": "ask"}
]}"#;

/// A project in which one session makes the calls.
type Session = Project;

impl Session {
    fn input(&self, command: &str) -> String {
        self.bash("sess-attack", command)
    }

    /// Runs `command` through the hook and has the person answer "Allow for this session".
    async fn allow_for_session(&self, srv: &TestServer, command: &str) -> Value {
        let (out, d) = run_answered(
            srv,
            self.hook(srv),
            &self.input(command),
            json!({"value": "Allow for this session"}),
        )
        .await;
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
            "{out:?}"
        );
        d
    }

    /// Runs `command`; it must reach the person as a new question, which they deny.
    async fn must_be_asked(&self, srv: &TestServer, command: &str) -> Value {
        let (child, started) = start(self.hook(srv), &self.input(command)).await;
        let d = pending_decision(srv).await;
        srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
            .await;
        let out = finish(child, started).await;
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command}: {out:?}"
        );
        d
    }
}

/// The answers the person is offered, as the server stored them.
async fn options(srv: &TestServer, d: &Value) -> Vec<String> {
    let id = uuid::Uuid::parse_str(d["decision_id"].as_str().unwrap()).unwrap();
    let stored = srv.svc.store().decision(None, id).await.unwrap().unwrap();
    match stored.spec.body {
        sayso::domain::spec::KindSpec::Choose { options, .. } => {
            options.into_iter().map(|o| o.label).collect()
        }
        other => panic!("an approval is a choose: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_allowance_never_passes_a_passkey_rule() {
    let (_db, srv) = server().await;
    let s = Session::with_policy(POLICY);
    s.allow_for_session(&srv, "ls -la").await;
    let d = s.must_be_asked(&srv, "git push --force origin main").await;
    assert_eq!(d["step_up"], "passkey", "{d}");
    assert_eq!(
        options(&srv, &d).await,
        ["Allow", "Deny"],
        "no session answer under a step-up: {d}"
    );
    assert!(
        d["approval"]["rule"]
            .as_str()
            .unwrap()
            .starts_with("rule 1 of "),
        "{d}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_allowance_never_covers_a_call_a_rule_of_its_own_gates() {
    let (_db, srv) = server().await;
    let s = Session::with_policy(POLICY);
    // Allowed where no rule matched: it does not reach the deploys' rule.
    let first = s.allow_for_session(&srv, "make build").await;
    assert!(first["approval"].get("rule").is_none(), "{first}");
    s.must_be_asked(&srv, "make deploy-prod").await;

    // Allowed under the deploys' rule: it covers that rule's calls, and nothing else.
    s.allow_for_session(&srv, "make deploy-staging").await;
    let out = run(s.hook(&srv), &s.input("make deploy-qa")).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );
    let out = run(s.hook(&srv), &s.input("make lint")).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "the first allowance (no rule) still covers calls no rule matches: {out:?}"
    );
    s.must_be_asked(&srv, "git push origin main").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_under_a_step_up_cannot_be_given_a_session_answer() {
    let (_db, srv) = server().await;
    let (status, body) = crate::common::server::send(
        srv.req(reqwest::Method::POST, "/v1/decisions")
            .json(&json!({
                "question": "Claude Code wants to run: git push --force",
                "kind": "choose",
                "options": ["Allow", "Deny", "Allow for this session"],
                "approval": {"harness": "claude", "tool_name": "Bash", "session_id": "s",
                             "tool_input": {"command": "git push --force"}, "step_up": "passkey"}
            })),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.to_string().contains("never for a whole session"),
        "{body}"
    );
}
