//! `ask_user_question` on `/mcp` (Claude Code's AskUserQuestion shape): answered within the
//! call's wait, or later through await_decision.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::server::{TestServer, fresh_server, s, send};
use crate::{call, connect, ok, text};

fn claude_questions() -> Value {
    json!([
        {
            "question": "Which database should we use?",
            "header": "Database",
            "options": [
                {"label": "PostgreSQL", "description": "for production"},
                {"label": "SQLite", "description": "embedded", "preview": "```toml\nurl = \"sqlite://x.db\"\n```"}
            ],
            "multiSelect": false
        },
        {
            "question": "Which features do you want?",
            "header": "Features",
            "options": [
                {"label": "Search", "description": "full text"},
                {"label": "Export", "description": "CSV"},
                {"label": "Sharing", "description": "links"}
            ],
            "multiSelect": true
        }
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_answered_within_the_wait_returns_the_answers_in_one_call() {
    let (_db, srv) = fresh_server().await;
    let client = connect(&srv).await;
    let answerer = {
        let probe = ProbeServer::of(&srv);
        tokio::spawn(async move {
            let web_url = probe.pending_web_url().await;
            probe
                .client
                .post(&web_url)
                .json(&json!({"value": {
                    "Which database should we use?": "SQLite",
                    "Which features do you want?": ["Search", "Sharing"]
                }}))
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    let started = Instant::now();
    let r = call(
        &client,
        "ask_user_question",
        json!({"questions": claude_questions(), "wait_s": 30}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(answerer.await.unwrap(), StatusCode::OK);
    assert_eq!(
        text(&r),
        "User has answered your questions: \"Which database should we use?\"=\"SQLite\" \
         selected preview:\n```toml\nurl = \"sqlite://x.db\"\n```, \
         \"Which features do you want?\"=\"Search, Sharing\". You can now continue with the \
         user's answers in mind."
    );
    // The structured result is the tool's own data: the questions and the answers.
    let d = ok(&r);
    assert_eq!(d["questions"][0]["header"], "Database");
    assert_eq!(
        d["answers"]["Which features do you want?"],
        json!(["Search", "Sharing"])
    );
    client.cancel().await.unwrap();
}

/// What a concurrent task needs to look at the server (the `TestServer` stays with the test).
struct ProbeServer {
    base: String,
    key: String,
    client: reqwest::Client,
}

impl ProbeServer {
    fn of(srv: &TestServer) -> Self {
        ProbeServer {
            base: srv.base.clone(),
            key: srv.key.clone(),
            client: srv.client.clone(),
        }
    }

    /// The web_url of the inbox's newest pending decision, once there is one.
    async fn pending_web_url(&self) -> String {
        for _ in 0..400 {
            let (_, list) = send(
                self.client
                    .get(format!("{}/v1/decisions?status=pending", self.base))
                    .bearer_auth(&self.key),
            )
            .await;
            if let Some(first) = list["items"].as_array().and_then(|a| a.first()) {
                return s(first, "web_url").to_string();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no pending decision appeared");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_still_pending_returns_the_handle_and_how_to_wait() {
    let (_db, srv) = fresh_server().await;
    let client = connect(&srv).await;
    let r = call(
        &client,
        "ask_user_question",
        json!({"questions": claude_questions(), "wait_s": 1, "project": "mcp"}),
    )
    .await;
    let d = ok(&r).clone();
    assert_eq!(d["status"], "pending");
    assert_eq!(d["project"], "mcp");
    let id = s(&d, "decision_id");
    assert!(
        text(&r).contains(&format!("Call await_decision with decision_id \"{id}\"")),
        "{}",
        text(&r)
    );
    // The text the model reads carries no link; the handle, for a client to share, does.
    assert!(!text(&r).contains(s(&d, "web_url")), "{}", text(&r));
    assert!(s(&d, "web_url").contains("/d/"));
    // The page answers it later; await_decision then has the answers.
    let web_url = ProbeServer::of(&srv).pending_web_url().await;
    assert_eq!(web_url, s(&d, "web_url"));
    srv.answer_ok(
        &web_url,
        json!({"value": {
            "Which database should we use?": "PostgreSQL",
            "Which features do you want?": ["Export"]
        }}),
    )
    .await;
    let awaited = call(&client, "await_decision", json!({"decision_id": id})).await;
    assert_eq!(
        ok(&awaited)["answers"]["Which database should we use?"],
        "PostgreSQL"
    );
    assert!(text(&awaited).starts_with("User has answered your questions:"));
    client.cancel().await.unwrap();
}
