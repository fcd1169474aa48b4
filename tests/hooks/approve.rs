//! The `approve` MCP tool through the official Python MCP SDK: the person's Allow (here with
//! the command edited) comes back as `{"behavior": "allow", "updatedInput": …}`, a Deny with its remark as the message, and
//! no answer in time as a deny (the question withdrawn); a client that goes away mid-call has
//! its question withdrawn too.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::mcp_py::{mcp_script, talked};
use crate::run::{abandoned, pending_decision, server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_answers_claude_codes_permission_json() {
    let (_db, srv) = server().await;
    let Some((child, mut lines)) = mcp_script(&srv, "hooks/approve_client.py") else {
        return;
    };
    let answers = [
        json!({"value": "Allow", "command": "rm -rf build/cache"}),
        json!({"value": "Deny", "remark": "no secrets in .env"}),
    ];
    let mut texts: Vec<Value> = Vec::new();
    let mut questions = Vec::new();
    let run = async {
        for answer in answers {
            let d = pending_decision(&srv).await;
            questions.push(d["question"].as_str().unwrap().to_string());
            srv.answer_ok(d["web_url"].as_str().unwrap(), answer).await;
            let line = lines.next_line().await.unwrap().expect("a line per call");
            texts.push(serde_json::from_str(&line).unwrap());
        }
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the third call's line");
        texts.push(serde_json::from_str(&line).unwrap());
    };
    talked(child, run, "approve_client.py").await;
    let text =
        |i: usize| -> Value { serde_json::from_str(texts[i]["text"].as_str().unwrap()).unwrap() };
    assert_eq!(
        text(0),
        json!({"behavior": "allow", "updatedInput": {"command": "rm -rf build/cache", "description": "clean"}})
    );
    assert_eq!(
        text(1),
        json!({"behavior": "deny", "message": "The person denied this on sayso: no secrets in .env"})
    );
    let third = text(2);
    assert_eq!(third["behavior"], "deny");
    let message = third["message"].as_str().unwrap();
    assert!(
        message == "sayso: no answer in 1 s; the question is withdrawn; denied",
        "{message}"
    );
    assert_eq!(
        questions,
        [
            "Claude Code wants to run: rm -rf build/",
            "Claude Code wants to write /srv/app/.env (4 bytes)"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_approve_has_its_question_withdrawn() {
    let (_db, srv) = server().await;
    let Some((mut child, mut lines)) = mcp_script(&srv, "hooks/abandon_client.py") else {
        return;
    };
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the client starts its call")
        .unwrap()
        .expect("a line");
    assert_eq!(line, r#"{"step": "calling"}"#);
    let d = pending_decision(&srv).await;
    assert_eq!(d["question"], "Claude Code wants to run: make deploy");
    // The client dies mid-call: its connection closes, and nothing is left to read an answer.
    child.kill().await.unwrap();
    let d = abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 409, "{body}");
}
