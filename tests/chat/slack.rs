//! Slack as a person's channel. Slack cannot run here: its Web API is a recording stand-in on
//! loopback (slack_standin.rs) that checks every call against Slack's documented shapes, and
//! every message and modal sayso sent is checked once more with the Block Kit models of
//! Slack's official Python SDK (slack_sdk). The person's presses are built as Slack sends
//! them and signed with slack_sdk's own signature helper, so sayso's verifier is checked
//! against Slack's code, not against itself. Socket Mode runs over a websocket stand-in.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sayso::notify::chat::slack_api::{CallError, SlackApi};
use sayso::notify::chat::slack_blocks::{self, SlackMessage};
use sayso::notify::chat::slack_signature;
use sayso::notify::chat::slack_socket::{self, Envelope, Handler};
use sayso::notify::chat::{ButtonStyle, ChatAsk, ChatButton, Controls};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::common;
use crate::slack_standin::{APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, SlackStandIn};

// ---- Slack's SDK ----

/// The pinned slack_sdk release the helper runs with.
const SLACK_SDK: &str = "slack_sdk==3.48.0";

fn slack_sdk() -> Option<&'static PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    common::python::venv_python(
        &PYTHON,
        common::python::Venv {
            dir: "slack-sdk-venv",
            modules: "slack_sdk.signature, slack_sdk.models.blocks",
            packages: &[SLACK_SDK],
            purpose: "Slack's Python SDK (slack_sdk)",
        },
    )
}

/// Runs the helper (slack_helper.py) with `input` on its standard input.
fn helper(python: &PathBuf, command: &str, input: &Value) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/chat/slack_helper.py");
    let mut child = Command::new(python)
        .args([script, command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the slack helper starts");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "slack_helper.py {command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The X-Slack-Signature slack_sdk makes for `body` at `timestamp`.
pub fn sdk_sign(python: &PathBuf, secret: &str, timestamp: &str, body: &str) -> String {
    helper(
        python,
        "sign",
        &json!({"secret": secret, "timestamp": timestamp, "body": body, "check_now": false}),
    )
}

/// What slack_sdk's Block Kit models find wrong in these messages' blocks and these modals.
pub fn sdk_problems(python: &PathBuf, items: &[Value]) -> Vec<String> {
    serde_json::from_str(&helper(python, "validate", &json!(items))).unwrap()
}

/// Everything sayso sent to the stand-in, for slack_sdk's check: each message's blocks and
/// each modal.
pub fn sent_items(standin: &SlackStandIn) -> Vec<Value> {
    standin
        .calls()
        .iter()
        .filter_map(|c| match c.method.as_str() {
            "chat.postMessage" | "chat.update" => Some(json!({"blocks": c.body["blocks"]})),
            "views.open" => Some(json!({"view": c.body["view"]})),
            _ => None,
        })
        .collect()
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

// ---- what sayso renders, without the server ----

fn sample_asks() -> Vec<(&'static str, ChatAsk)> {
    let base = ChatAsk {
        title: "deploy-bot".into(),
        heading: None,
        question: "Deploy v1.2 to production?".into(),
        context: Some(
            "## Changes\n\n- **3** files, see [CI](https://ci.example/7)\n- <!channel> & <@U1>\n\n```\nmake deploy\n```"
                .into(),
        ),
        command: None,
        controls: Controls::Link,
        link: "http://127.0.0.1:9/a/abc".into(),
        notes: vec![],
    };
    let button = |label: &str, code: &str, style, recommended| ChatButton {
        label: label.into(),
        code: code.into(),
        style,
        recommended,
    };
    let mut approval = base.clone();
    approval.command = Some("$ kubectl rollout restart deploy/web && echo '<!here>'".into());
    approval.controls = Controls::Buttons(vec![
        button("Allow", "a", ButtonStyle::Primary, false),
        button("Deny", "d", ButtonStyle::Danger, false),
    ]);
    let mut choose = base.clone();
    choose.controls = Controls::Buttons(
        (0..5)
            .map(|i| {
                button(
                    &format!("Option {i} {}", "w".repeat(i * 30)),
                    &format!("o{i}"),
                    ButtonStyle::Plain,
                    i == 2,
                )
            })
            .collect(),
    );
    let mut text = base.clone();
    text.controls = Controls::Reply {
        placeholder: Some("e.g. blue".into()),
    };
    let mut huge = approval.clone();
    huge.title = "P".repeat(500);
    huge.heading = Some("Reminder".into());
    huge.question = "Q <!channel> & ".repeat(600);
    huge.context = Some(
        (0..3000)
            .map(|i| format!("* item {i} `x`"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    huge.notes = (0..30).map(|i| format!("{i} more are waiting")).collect();
    vec![
        ("approval", approval),
        ("choose", choose),
        ("text", text),
        ("link", base),
        ("huge", huge),
    ]
}

#[tokio::test]
async fn slack_messages_and_modals_keep_to_block_kit() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = SlackApi::new(&standin.api_url, BOT_TOKEN).unwrap();
    let decision = Uuid::now_v7();
    for (name, ask) in sample_asks() {
        let msg = slack_blocks::ask_message(&ask, decision, Some("1 of 2 allowed: ana"));
        let (channel, ts) = api
            .post_message("U0ANA", &msg)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(channel, "D0ANA");
        let settled = slack_blocks::settled_message(&ask, "Allowed by ana from Slack, 04:12 UTC");
        api.update(&channel, &ts, &settled).await.unwrap();
        api.open_view(
            &standin.trigger(),
            &slack_blocks::text_modal(&ask, decision, Some("e.g. blue")),
        )
        .await
        .unwrap();
        api.open_view(
            &standin.trigger(),
            &slack_blocks::deny_modal(&ask, decision),
        )
        .await
        .unwrap();
    }
    assert_eq!(standin.problems(), Vec::<String>::new());
    if let Some(python) = slack_sdk() {
        let items = sent_items(&standin);
        assert_eq!(items.len(), 5 * 4);
        assert_eq!(sdk_problems(python, &items), Vec::<String>::new());
    }
}

/// The checks above can fail: a message or modal out of Slack's shapes is refused by the
/// stand-in and by slack_sdk alike.
#[tokio::test]
async fn slack_standin_and_sdk_refuse_what_slack_would() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = SlackApi::new(&standin.api_url, BOT_TOKEN).unwrap();
    let button = |text: &str, action: &str| json!({"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action, "value": "v"});
    let bad: Vec<(&str, Vec<Value>)> = vec![
        (
            "a long button",
            vec![json!({"type": "actions", "elements": [button(&"x".repeat(76), "a")]})],
        ),
        (
            "a long section",
            vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": "x".repeat(3001)}})],
        ),
        (
            "a mention",
            vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": "hi <!channel>"}})],
        ),
        (
            "a disguised link",
            vec![
                json!({"type": "section", "text": {"type": "mrkdwn", "text": "<https://evil.example|Allow>"}}),
            ],
        ),
        (
            "26 buttons",
            vec![
                json!({"type": "actions", "elements": (0..26).map(|i| button("b", &format!("a{i}"))).collect::<Vec<_>>()}),
            ],
        ),
        ("51 blocks", vec![json!({"type": "divider"}); 51]),
        ("an unknown block", vec![json!({"type": "bogus"})]),
    ];
    for (name, blocks) in &bad {
        let msg = SlackMessage {
            text: "t".into(),
            blocks: blocks.clone(),
        };
        let err = api.post_message("U0ANA", &msg).await.unwrap_err();
        assert!(matches!(err, CallError::Failed(_)), "{name}: {err:?}");
    }
    let calls = standin.calls_to("chat.postMessage");
    assert_eq!(calls.len(), bad.len());
    for (call, (name, _)) in calls.iter().zip(&bad) {
        assert!(!call.problems.is_empty(), "the stand-in let {name} through");
    }
    // chat.update only on a ts the stand-in returned, in its conversation.
    let ok = SlackMessage {
        text: "t".into(),
        blocks: vec![],
    };
    let (channel, ts) = api.post_message("U0ANA", &ok).await.unwrap();
    assert!(
        api.update(&channel, "1712000000.999999", &ok)
            .await
            .is_err()
    );
    assert!(api.update("D0BO", &ts, &ok).await.is_err());
    // A modal whose title is too long, and a trigger that was never issued.
    let mut view = slack_blocks::deny_modal(&sample_asks()[0].1, Uuid::now_v7());
    view["title"]["text"] = json!("x".repeat(25));
    assert!(api.open_view(&standin.trigger(), &view).await.is_err());
    assert!(
        api.open_view(
            "1.2.3",
            &slack_blocks::deny_modal(&sample_asks()[0].1, Uuid::now_v7())
        )
        .await
        .is_err()
    );
    // Another token is not the bot's.
    let stranger = SlackApi::new(&standin.api_url, "xoxb-someone-else").unwrap();
    let err = stranger.post_message("U0ANA", &ok).await.unwrap_err();
    assert!(err.text().contains("invalid_auth"), "{err:?}");
    if let Some(python) = slack_sdk() {
        // slack_sdk's models check lengths and types, not mentions or counts of elements.
        let items: Vec<Value> = bad
            .iter()
            .filter(|(name, _)| {
                matches!(
                    *name,
                    "a long button" | "a long section" | "an unknown block"
                )
            })
            .map(|(_, b)| json!({"blocks": b}))
            .chain([json!({"view": view})])
            .collect();
        let problems = sdk_problems(python, &items);
        assert_eq!(problems.len(), items.len(), "{problems:?}");
    }
}

#[test]
fn slack_signatures_made_by_slack_sdk_verify() {
    let Some(python) = slack_sdk() else { return };
    let body = format!(
        "payload={}",
        url::form_urlencoded::byte_serialize(
            json!({"type": "block_actions", "user": {"id": "U0ANA"}})
                .to_string()
                .as_bytes()
        )
        .collect::<String>()
    );
    let ts = now().to_string();
    let signature = sdk_sign(python, SIGNING_SECRET, &ts, &body);
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&signature),
            body.as_bytes(),
            now()
        ),
        Ok(())
    );
    // sayso's signer agrees with Slack's byte for byte.
    assert_eq!(
        slack_signature::sign(SIGNING_SECRET, &ts, body.as_bytes()),
        signature
    );
    // Another secret, another body, an old timestamp: refused.
    let other = sdk_sign(python, "another-secret", &ts, &body);
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&other),
            body.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Mismatch)
    );
    let changed = body.replace("U0ANA", "U0BO");
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&signature),
            changed.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Mismatch)
    );
    let old = (now() - 301).to_string();
    let old_signature = sdk_sign(python, SIGNING_SECRET, &old, &body);
    assert!(matches!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&old),
            Some(&old_signature),
            body.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Stale(_))
    ));
}

#[tokio::test]
async fn slack_outage_is_retried_and_named() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = SlackApi::new(&standin.api_url, BOT_TOKEN).unwrap();
    let msg = slack_blocks::ask_message(&sample_asks()[0].1, Uuid::now_v7(), None);
    standin.fail_next(2);
    for _ in 0..2 {
        let err = api.post_message("U0ANA", &msg).await.unwrap_err();
        assert!(
            matches!(&err, CallError::Retry(why) if why.contains("503")),
            "{err:?}"
        );
    }
    api.post_message("U0ANA", &msg).await.unwrap();
    // A person who left the workspace is a failure for good, named.
    let err = api.post_message("U0GONE", &msg).await.unwrap_err();
    assert_eq!(
        err,
        CallError::Failed("slack chat.postMessage: user_not_found".into())
    );
}

#[tokio::test]
async fn slack_socket_mode_acks_reconnects_and_answers_modals() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = SlackApi::new(&standin.api_url, BOT_TOKEN).unwrap();
    let seen: Arc<Mutex<Vec<Envelope>>> = Arc::default();
    let handler: Handler = {
        let seen = seen.clone();
        Arc::new(move |envelope: Envelope| {
            let seen = seen.clone();
            Box::pin(async move {
                let answer = (envelope.payload["type"] == "view_submission").then(
                    || json!({"response_action": "errors", "errors": {"answer": "too long"}}),
                );
                seen.lock().unwrap().push(envelope);
                answer
            })
        })
    };
    let task = tokio::spawn(slack_socket::run(api, APP_TOKEN.into(), handler));
    let press = json!({"type": "block_actions", "user": {"id": "U0ANA"}, "actions": []});
    standin
        .send_envelope(json!({"envelope_id": "e1", "type": "interactive", "accepts_response_payload": false, "payload": press}))
        .await;
    standin
        .wait_for("the ack of e1", |s| (s.acks().len() == 1).then_some(()))
        .await;
    assert_eq!(standin.acks()[0], json!({"envelope_id": "e1"}));
    // A modal's answer goes back with its ack.
    standin
        .send_envelope(json!({"envelope_id": "e2", "type": "interactive", "accepts_response_payload": true, "payload": {"type": "view_submission", "user": {"id": "U0ANA"}}}))
        .await;
    standin
        .wait_for("the ack of e2", |s| (s.acks().len() == 2).then_some(()))
        .await;
    assert_eq!(standin.acks()[1]["payload"]["response_action"], "errors");
    // Events that are not interactions are acknowledged and not handled.
    standin
        .send_envelope(json!({"envelope_id": "e3", "type": "events_api", "payload": {}}))
        .await;
    standin
        .wait_for("the ack of e3", |s| (s.acks().len() == 3).then_some(()))
        .await;
    assert_eq!(seen.lock().unwrap().len(), 2);
    // Slack asks for a new connection: one is opened at once.
    assert_eq!(standin.socket_connections(), 1);
    standin
        .send_envelope(json!({"type": "disconnect", "reason": "refresh_requested"}))
        .await;
    standin
        .wait_for("a second connection", |s| {
            (s.socket_connections() == 2).then_some(())
        })
        .await;
    // A connection that drops without a word is opened again too, after a pause.
    tokio::time::sleep(Duration::from_millis(200)).await;
    standin.drop_socket();
    standin
        .wait_for("a third connection", |s| {
            (s.socket_connections() == 3).then_some(())
        })
        .await;
    standin
        .send_envelope(json!({"envelope_id": "e4", "type": "interactive", "payload": press}))
        .await;
    standin
        .wait_for("the ack of e4", |s| (s.acks().len() == 4).then_some(()))
        .await;
    // Each connection was asked for with the app-level token (the stand-in refuses others).
    let opens = standin.calls_to("apps.connections.open");
    assert_eq!(opens.len(), 3);
    assert!(opens.iter().all(|c| c.answer.is_ok()));
    task.abort();
}
