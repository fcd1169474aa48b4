//! Slack as a person's channel. Slack cannot run here: its Web API is a recording stand-in on
//! loopback (slack_standin.rs) that checks every call against Slack's documented shapes, and
//! every message and modal sayso sent is checked once more with the Block Kit models of
//! Slack's official Python SDK (slack_sdk). The person's presses are built as Slack sends
//! them and signed with slack_sdk's own signature helper, so sayso's verifier is checked
//! against Slack's code, not against itself. Socket Mode runs over a websocket stand-in.

mod fields;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sayso::chat::slack::api::CallError;
use sayso::chat::slack::blocks::{self as slack_blocks, SlackMessage};
use sayso::chat::slack::signature as slack_signature;
use sayso::chat::slack::socket::{self as slack_socket, Envelope, Handler};
use sayso::chat::{ButtonStyle, ChatAsk, ChatButton, Controls};
use sayso::domain::chat::button_value;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::common;
use crate::common::people::feed_link;
use crate::slack_standin::{APP_TOKEN, BOT_TOKEN, Posted, SIGNING_SECRET, SlackStandIn};

// ---- Slack's SDK ----

/// The pinned slack_sdk release the helper runs with.
const SLACK_SDK: &str = "slack_sdk==3.48.0";

fn slack_sdk() -> Option<&'static PathBuf> {
    static VENV: common::python::Venv = common::python::Venv::new(
        "slack-sdk-venv",
        "slack_sdk.signature, slack_sdk.models.blocks",
        &[SLACK_SDK],
        "Slack's Python SDK (slack_sdk)",
    );
    VENV.python()
}

/// Runs the helper (slack_helper.py) with `input` on its standard input.
fn helper(python: &Path, command: &str, input: &Value) -> String {
    let out = common::python::run_script(
        python,
        "tests/chat/slack_helper.py",
        &[command],
        input.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "slack_helper.py {command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The X-Slack-Signature slack_sdk makes for `body` at `timestamp`.
pub fn sdk_sign(python: &Path, secret: &str, timestamp: &str, body: &str) -> String {
    helper(
        python,
        "sign",
        &json!({"secret": secret, "timestamp": timestamp, "body": body, "check_now": false}),
    )
}

/// What slack_sdk's Block Kit models find wrong in these messages' blocks and these modals.
pub fn sdk_problems(python: &Path, items: &[Value]) -> Vec<String> {
    serde_json::from_str(&helper(python, "validate", &json!(items))).unwrap()
}

/// Everything sayso sent to the stand-in, for slack_sdk's check: each message's blocks and
/// each modal.
pub fn sent_items(standin: &SlackStandIn) -> Vec<Value> {
    standin
        .calls()
        .iter()
        .filter(|c| !c.body.is_null())
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
        t: Default::default(),
    };
    let button = |label: &str, code: &str, style, recommended| ChatButton {
        label: label.into(),
        value: button_value(Uuid::nil(), code),
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
    let api = standin.api(BOT_TOKEN);
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
            &slack_blocks::text_modal(
                &ask.question,
                ask.command.as_deref(),
                decision,
                Some("e.g. blue"),
            ),
        )
        .await
        .unwrap();
        api.open_view(
            &standin.trigger(),
            &slack_blocks::deny_modal(&ask.question, ask.command.as_deref(), decision),
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
    let api = standin.api(BOT_TOKEN);
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
    let mut view = slack_blocks::deny_modal("Deploy?", Some("make deploy"), Uuid::now_v7());
    view["title"]["text"] = json!("x".repeat(25));
    assert!(api.open_view(&standin.trigger(), &view).await.is_err());
    assert!(
        api.open_view(
            "1.2.3",
            &slack_blocks::deny_modal("Deploy?", Some("make deploy"), Uuid::now_v7())
        )
        .await
        .is_err()
    );
    // Another token is not the bot's.
    let stranger = standin.api("xoxb-someone-else");
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
    let api = standin.api(BOT_TOKEN);
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
    let api = standin.api(BOT_TOKEN);
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
    standin.acked("the ack of e1", 1).await;
    assert_eq!(standin.acks()[0], json!({"envelope_id": "e1"}));
    // A modal's answer goes back with its ack.
    standin
        .send_envelope(json!({"envelope_id": "e2", "type": "interactive", "accepts_response_payload": true, "payload": {"type": "view_submission", "user": {"id": "U0ANA"}}}))
        .await;
    standin.acked("the ack of e2", 2).await;
    assert_eq!(standin.acks()[1]["payload"]["response_action"], "errors");
    // Events that are not interactions are acknowledged and not handled.
    standin
        .send_envelope(json!({"envelope_id": "e3", "type": "events_api", "payload": {}}))
        .await;
    standin.acked("the ack of e3", 3).await;
    standin
        .wait_for("both interactions handled", |_| {
            (seen.lock().unwrap().len() == 2).then_some(())
        })
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the events_api envelope was handled"
    );
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
    standin.acked("the ack of e4", 4).await;
    // Each connection was asked for with the app-level token (the stand-in refuses others).
    let opens = standin.calls_to("apps.connections.open");
    assert_eq!(opens.len(), 3);
    assert!(opens.iter().all(|c| c.answer.is_ok()));
    task.abort();
}

// ---- sayso's server with Slack on, against the stand-in ----

/// A server with Slack on (interactivity URL, or Socket Mode), its stand-in, and Slack's SDK.
struct Slack {
    srv: common::server::TestServer,
    standin: SlackStandIn,
    python: &'static PathBuf,
    /// The test's own database, removed when it is dropped.
    _db: Box<dyn std::any::Any + Send + Sync>,
}

impl Slack {
    /// `None` (after a loud SKIPPED) when slack_sdk cannot be installed, outside CI.
    async fn start(socket_mode: bool) -> Option<Slack> {
        let db = common::db::fresh_sqlite_url();
        let url = db.url.clone();
        Self::start_on(socket_mode, Box::new(db), &url).await
    }

    /// The same on a fresh PostgreSQL database; `None` when there is none to be had.
    async fn start_on_postgres() -> Option<Slack> {
        let db = common::db::fresh_pg_url().await?;
        let url = db.url.clone();
        Self::start_on(false, Box::new(db), &url).await
    }

    async fn start_on(
        socket_mode: bool,
        db: Box<dyn std::any::Any + Send + Sync>,
        url: &str,
    ) -> Option<Slack> {
        let python = slack_sdk()?;
        let standin = SlackStandIn::start().await;
        let chats = sayso::chat::ChatSettings {
            slack: Some(sayso::chat::SlackSettings {
                bot_token: BOT_TOKEN.into(),
                signing_secret: Some(SIGNING_SECRET.into()),
                app_token: socket_mode.then(|| APP_TOKEN.into()),
                api_url: standin.api_url.parse().unwrap(),
            }),
            ..Default::default()
        };
        let srv = common::server::TestServer::start_chatting(url, chats).await;
        Some(Slack {
            srv,
            standin,
            python,
            _db: db,
        })
    }

    /// Adds a person with a Slack user id (none for `None`).
    async fn person(&self, name: &str, slack: Option<&str>) -> sayso::domain::people::Person {
        let mut p = self.srv.add_person(name).await;
        p.chats.slack = slack.map(str::to_string);
        self.srv.svc.store().update_person(&p).await.unwrap();
        p
    }

    async fn create(&self, body: Value) -> String {
        let h = self.srv.create(body).await;
        h["decision_id"]
            .as_str()
            .unwrap_or_else(|| panic!("not created: {h}"))
            .to_string()
    }

    async fn decision(&self, id: &str) -> Value {
        self.srv.get(id).await
    }

    /// Waits until the decision's status is `status`.
    async fn wait_status(&self, id: &str, status: &str) -> Value {
        for _ in 0..200 {
            let d = self.decision(id).await;
            if d["status"] == status {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{id} never became {status}: {}", self.decision(id).await);
    }

    /// Posts a form body to the interactivity URL with the headers given.
    async fn post_raw(&self, body: &str, ts: &str, signature: &str) -> (u16, String) {
        let resp = self
            .srv
            .client
            .post(self.srv.url("/chat/slack/interactivity"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-slack-request-timestamp", ts)
            .header("x-slack-signature", signature)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }

    /// Sends `payload` as Slack does: form-encoded, signed now with slack_sdk. Returns the
    /// status, the answer, and what was sent (to replay it).
    async fn send(&self, payload: &Value) -> (u16, String, (String, String, String)) {
        let body = form(payload);
        let ts = now().to_string();
        let signature = sdk_sign(self.python, SIGNING_SECRET, &ts, &body);
        let (status, text) = self.post_raw(&body, &ts, &signature).await;
        (status, text, (body, ts, signature))
    }

    /// Presses the button labelled `label` (its start) on `message`, as `user`.
    async fn press(
        &self,
        message: &Posted,
        label: &str,
        user: &str,
    ) -> (u16, String, (String, String, String)) {
        let payload = block_actions(&self.standin, message, button(message, label), user);
        self.send(&payload).await
    }

    /// Submits the last modal sayso opened, as `user`, with `text` in its field.
    async fn submit(&self, user: &str, text: Option<&str>) -> (u16, String) {
        let view = self
            .standin
            .calls_to("views.open")
            .last()
            .expect("a modal was opened")
            .body["view"]
            .clone();
        let (status, answer, _) = self.send(&view_submission(&view, user, text)).await;
        (status, answer)
    }

    /// Nothing sayso sent broke Slack's shapes, by the stand-in's checks and slack_sdk's.
    fn assert_well_formed(&self) {
        assert_eq!(self.standin.problems(), Vec::<String>::new());
        assert_eq!(
            sdk_problems(self.python, &sent_items(&self.standin)),
            Vec::<String>::new()
        );
    }
}

fn form(payload: &Value) -> String {
    format!(
        "payload={}",
        url::form_urlencoded::byte_serialize(payload.to_string().as_bytes()).collect::<String>()
    )
}

/// The button whose text starts with `label`.
fn button<'a>(message: &'a Posted, label: &str) -> &'a Value {
    message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .find(|e| {
            e["text"]["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with(label)
        })
        .unwrap_or_else(|| panic!("no button {label:?} in {:#?}", message.blocks))
}

/// Waits until the message `ts` shows `text`, and returns it as it is now.
async fn showing(standin: &SlackStandIn, what: &str, ts: &str, text: &str) -> Posted {
    standin
        .wait_for(what, |s| {
            s.messages()
                .into_iter()
                .find(|m| m.ts == ts && shown_text(m).contains(text))
        })
        .await
}

/// Waits until the messages `ts` all show `text` at once.
async fn all_showing(standin: &SlackStandIn, what: &str, ts: &[&str], text: &str) {
    standin
        .wait_for(what, |s| {
            let messages = s.messages();
            let all = ts.iter().all(|&ts| {
                messages
                    .iter()
                    .any(|m| m.ts == ts && shown_text(m).contains(text))
            });
            all.then_some(())
        })
        .await
}

/// The texts of a message's blocks, joined: what the person reads.
fn shown_text(message: &Posted) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(t)) = o.get("text") {
                    out.push_str(t);
                    out.push('\n');
                }
                o.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(&json!(message.blocks), &mut out);
    out
}

/// A block_actions payload as Slack sends it when `user` presses `button` on `message`.
fn block_actions(standin: &SlackStandIn, message: &Posted, button: &Value, user: &str) -> Value {
    json!({
        "type": "block_actions",
        "user": {"id": user, "username": user.to_lowercase(), "name": user.to_lowercase(), "team_id": crate::slack_standin::TEAM},
        "api_app_id": "A0SAYSO",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel, "is_ephemeral": false},
        "trigger_id": standin.trigger(),
        "team": {"id": crate::slack_standin::TEAM, "domain": "acme"},
        "enterprise": null,
        "is_enterprise_install": false,
        "channel": {"id": message.channel, "name": "directmessage"},
        "message": {"type": "message", "user": "U0SAYSOBOT", "ts": message.ts, "bot_id": "B0SAYSO", "text": message.text, "blocks": message.blocks},
        "state": {"values": {}},
        "response_url": standin.response_url(),
        "actions": [{
            "action_id": button["action_id"], "block_id": "b", "text": button["text"],
            "value": button["value"], "type": "button", "action_ts": format!("{}.000200", now()),
        }],
    })
}

/// A view_submission payload for `view` (as sayso opened it), its one input holding `text`.
fn view_submission(view: &Value, user: &str, text: Option<&str>) -> Value {
    let input = view["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "input")
        .unwrap();
    let (block, action) = (
        input["block_id"].as_str().unwrap(),
        input["element"]["action_id"].as_str().unwrap(),
    );
    let mut submitted = view.clone();
    submitted["id"] = json!("V0SAYSO");
    submitted["team_id"] = json!(crate::slack_standin::TEAM);
    submitted["state"] =
        json!({"values": {block: {action: {"type": "plain_text_input", "value": text}}}});
    submitted["hash"] = json!("1712000000.abc");
    submitted["app_id"] = json!("A0SAYSO");
    json!({
        "type": "view_submission",
        "team": {"id": crate::slack_standin::TEAM, "domain": "acme"},
        "user": {"id": user, "username": user.to_lowercase(), "name": user.to_lowercase(), "team_id": crate::slack_standin::TEAM},
        "api_app_id": "A0SAYSO",
        "token": "legacy-verification-token",
        "trigger_id": format!("{}.1.abc", now()),
        "view": submitted,
        "response_urls": [],
        "is_enterprise_install": false,
    })
}

fn approval(command: &str, approvers: &[&str]) -> Value {
    json!({
        "question": "Run a command?", "kind": "choose", "options": ["Allow", "Deny"],
        "project": "shop",
        "approval": {"harness": "claude", "tool_name": "Bash", "tool_input": {"command": command}},
        "approvers": approvers,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_allow_from_the_message_and_a_second_press_says_who() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(approval("cargo publish --dry-run <!channel>", &["ana"]))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert_eq!(message.channel, "D0ANA");
    // What runs, set apart exactly; the buttons carry only the decision and the answer.
    let shown = shown_text(&message);
    assert!(
        shown.contains("cargo publish --dry-run <!channel>"),
        "{shown}"
    );
    let allow = button(&message, "Allow");
    assert_eq!(allow["style"], "primary");
    assert_eq!(button(&message, "Deny")["style"], "danger");
    assert_eq!(
        allow["value"],
        format!("{}.a", Uuid::parse_str(&id).unwrap().simple())
    );

    let (status, _, _) = slack.press(&message, "Allow", "U0ANA").await;
    assert_eq!(status, 200);
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], "Allow");
    assert_eq!(d["answers"][0]["person"], "ana");
    assert_eq!(d["answers"][0]["channel"], "slack");
    // The message changes in place: same conversation and ts, no buttons left.
    let updated = slack
        .standin
        .updated("the message settled", &message.ts)
        .await;
    assert!(
        shown_text(&updated).contains("Allowed by ana from Slack"),
        "{}",
        shown_text(&updated)
    );
    assert!(updated.blocks.iter().all(|b| b["type"] != "actions"));
    // A second press (an old copy of the message) changes nothing and says who decided.
    let (status, _, _) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let said = slack.standin.response("the private note", 0).await;
    assert_eq!(said.1["response_type"], "ephemeral");
    assert!(
        said.1["text"]
            .as_str()
            .unwrap()
            .contains("Allowed by ana from Slack"),
        "{}",
        said.1
    );
    assert_eq!(slack.decision(&id).await["outcome"], "Allow");
    assert!(
        slack.standin.calls_to("views.open").is_empty(),
        "Deny on a settled approval opens no modal"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_deny_asks_a_reason_in_a_modal() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack.create(approval("rm -rf ./target", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let (status, _, _) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let opened = slack.standin.view_opened("the Deny modal", 0).await;
    assert_eq!(opened.answer, Ok(()));
    assert_eq!(opened.body["view"]["callback_id"], "sayso.deny");
    // Pressing Deny alone records nothing yet.
    assert_eq!(slack.decision(&id).await["status"], "pending");
    let (status, answer) = slack.submit("U0ANA", Some("not on a Friday")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], "Deny");
    assert_eq!(d["remark"], "not on a Friday");
    assert_eq!(d["answers"][0]["channel"], "slack");
    let updated = slack
        .standin
        .wait_for("the message settled", |s| {
            s.messages().into_iter().find(|m| m.updates > 0)
        })
        .await;
    let shown = shown_text(&updated);
    assert!(
        shown.contains("Denied by ana from Slack") && shown.contains("not on a Friday"),
        "{shown}"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_choose_and_text_through_a_modal() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let choose = slack
        .create(json!({"question": "Which colour?", "kind": "choose",
                       "options": ["Red", "Blue", "Green"], "recommended": 1, "allow_other": false, "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert_eq!(button(&message, "★")["text"]["text"], "★ Blue");
    slack.press(&message, "Green", "U0ANA").await;
    let d = slack.wait_status(&choose, "answered").await;
    assert_eq!(d["outcome"], "Green");

    // A choice that takes an answer of one's own: "Other…" opens a dialog for it.
    let other = slack
        .create(json!({"question": "Which colour?", "kind": "choose",
                       "options": ["Red", "Blue"], "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    assert!(
        !shown_text(&message).contains("reply to this message"),
        "{}",
        shown_text(&message)
    );
    slack.press(&message, "Other", "U0ANA").await;
    slack.standin.view_opened("the own-answer modal", 0).await;
    let (status, answer) = slack.submit("U0ANA", Some("Purple")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    assert_eq!(
        slack.wait_status(&other, "answered").await["outcome"],
        "Purple"
    );

    let text = slack
        .create(json!({"question": "Name the release?", "kind": "text", "placeholder": "e.g. Aurora", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 2).await;
    slack.press(&message, "Answer", "U0ANA").await;
    let opened = slack.standin.view_opened("the answer modal", 1).await;
    assert_eq!(opened.body["view"]["callback_id"], "sayso.text");
    // An empty answer is refused under the field; the modal stays open.
    let (status, answer) = slack.submit("U0ANA", Some("  ")).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response_action"], "errors");
    assert!(
        answer["errors"]["answer"]
            .as_str()
            .unwrap()
            .contains("empty"),
        "{answer}"
    );
    let (status, answer) = slack.submit("U0ANA", Some("Aurora <!here>")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    let d = slack.wait_status(&text, "answered").await;
    assert_eq!(d["outcome"], "Aurora <!here>");
    let updated = slack
        .standin
        .updated("the text message settled", &message.ts)
        .await;
    // The answer is shown escaped: no broadcast in the settled line.
    assert!(
        shown_text(&updated).contains("&lt;!here&gt;"),
        "{}",
        shown_text(&updated)
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_quorum_of_two_across_slack_and_the_feed_and_a_veto() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    let _ana = slack.person("ana", Some("U0ANA")).await;
    let bo = slack.person("bo", Some("U0BO")).await;
    let id = slack
        .create(json!({"question": "Ship it?", "kind": "bool", "approvers": ["ana", "bo"], "required": 2}))
        .await;
    let to_ana = slack.standin.message_to("U0ANA", 0).await;
    let to_bo = slack.standin.message_to("U0BO", 0).await;
    slack.press(&to_ana, "Yes", "U0ANA").await;
    // Counted, not resolved: both messages show the tally, buttons kept; ana is told.
    all_showing(
        &slack.standin,
        "both messages with the tally",
        &[&to_ana.ts, &to_bo.ts],
        "1 of 2 said yes: ana",
    )
    .await;
    let bo_now = slack
        .standin
        .messages()
        .into_iter()
        .find(|m| m.ts == to_bo.ts)
        .unwrap();
    assert!(bo_now.blocks.iter().any(|b| b["type"] == "actions"));
    let note = slack.standin.response("ana's note", 0).await;
    assert!(
        note.1["text"].as_str().unwrap().contains("1 of 2"),
        "{}",
        note.1
    );
    assert_eq!(slack.decision(&id).await["status"], "pending");
    // bo answers from the feed: resolved, and both Slack messages say so.
    let link = feed_link(&slack.srv, &id, bo.id).await;
    let (status, body) =
        common::server::send(slack.srv.client.post(link).json(&json!({"value": "yes"}))).await;
    assert_eq!(status, 200, "{body}");
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], true);
    all_showing(
        &slack.standin,
        "both messages settled",
        &[&to_ana.ts, &to_bo.ts],
        "by bo from the feed",
    )
    .await;

    // A veto: a No from one of two resolves at once.
    let veto = slack
        .create(json!({"question": "Drop the table?", "kind": "bool", "approvers": ["ana", "bo"], "required": 2}))
        .await;
    let to_bo = slack.standin.message_to("U0BO", 1).await;
    slack.press(&to_bo, "No", "U0BO").await;
    let d = slack.wait_status(&veto, "answered").await;
    assert_eq!(d["outcome"], false);
    assert_eq!(d["answers"][0]["person"], "bo");
    let to_ana = slack.standin.message_to("U0ANA", 1).await;
    showing(
        &slack.standin,
        "ana's message settled by bo's No",
        &to_ana.ts,
        "by bo from Slack",
    )
    .await;
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_forged_replayed_and_strangers_presses_change_nothing() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("cy", Some("U0CY")).await;
    let id = slack.create(approval("make deploy", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let payload = block_actions(&slack.standin, &message, button(&message, "Allow"), "U0ANA");
    let body = form(&payload);
    let ts = now().to_string();
    // Signed with another secret, unsigned, signed for another body, stale.
    let forged = sdk_sign(slack.python, "not-the-secret", &ts, &body);
    let (status, why) = slack.post_raw(&body, &ts, &forged).await;
    assert_eq!(status, 401);
    assert!(why.contains("does not match"), "{why}");
    let (status, why) = slack.post_raw(&body, &ts, "").await;
    assert_eq!(status, 401, "{why}");
    let other = sdk_sign(slack.python, SIGNING_SECRET, &ts, "payload=%7B%7D");
    assert_eq!(slack.post_raw(&body, &ts, &other).await.0, 401);
    let old = (now() - 600).to_string();
    let stale = sdk_sign(slack.python, SIGNING_SECRET, &old, &body);
    let (status, why) = slack.post_raw(&body, &old, &stale).await;
    assert_eq!(status, 401);
    assert!(why.contains("from now"), "{why}");
    assert_eq!(slack.decision(&id).await["status"], "pending");

    // Someone not asked, pressing (a real, signed press): told privately, nothing recorded.
    let (status, _, _) = slack.press(&message, "Allow", "U0CY").await;
    assert_eq!(status, 200);
    let note = slack.standin.response("cy's note", 0).await;
    assert_eq!(note.1["response_type"], "ephemeral");
    assert!(
        note.1["text"].as_str().unwrap().contains("not yours"),
        "{}",
        note.1
    );
    let d = slack.decision(&id).await;
    assert_eq!(d["status"], "pending");
    assert_eq!(d["answers"], json!([]));
    // Their Deny opens no modal either: they are told the same, privately.
    slack.press(&message, "Deny", "U0CY").await;
    slack
        .standin
        .wait_for("cy's second note", |s| {
            (s.responses().len() == 2).then_some(())
        })
        .await;
    assert!(
        slack.standin.responses()[1].1["text"]
            .as_str()
            .unwrap()
            .contains("not yours")
    );
    assert!(slack.standin.calls_to("views.open").is_empty());

    // ana's real press counts once; the same request again is refused as a replay.
    let (status, _, (body, ts, signature)) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let modal = slack.standin.view_opened("the Deny modal", 0).await;
    assert_eq!(modal.answer, Ok(()));
    let (status, why) = slack.post_raw(&body, &ts, &signature).await;
    assert_eq!(status, 401);
    assert!(why.contains("replay"), "{why}");
    // The same request with its signature's hex in upper case still verifies, and is still
    // the same request.
    let upper = format!("v0={}", signature["v0=".len()..].to_uppercase());
    assert_ne!(upper, signature);
    let (status, why) = slack.post_raw(&body, &ts, &upper).await;
    assert_eq!(status, 401, "{upper}: {why}");
    assert!(why.contains("replay"), "{upper}: {why}");
    assert_eq!(
        slack.standin.calls_to("views.open").len(),
        1,
        "the replays opened nothing"
    );
    // A press naming this decision from a message that is not its own is not taken.
    let mut elsewhere = block_actions(&slack.standin, &message, button(&message, "Allow"), "U0ANA");
    elsewhere["container"]["message_ts"] = json!("1712000000.424242");
    elsewhere["channel"]["id"] = json!("C0PUBLIC");
    elsewhere["container"]["channel_id"] = json!("C0PUBLIC");
    assert_eq!(slack.send(&elsewhere).await.0, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(slack.decision(&id).await["status"], "pending");
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_expiry_updates_the_message() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(
            json!({"question": "Quick?", "kind": "bool", "ttl_seconds": 10, "approvers": ["ana"]}),
        )
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    slack.wait_status(&id, "expired").await;
    let updated = slack
        .standin
        .updated("the message expired", &message.ts)
        .await;
    assert!(
        shown_text(&updated).contains("Expired"),
        "{}",
        shown_text(&updated)
    );
    assert!(updated.blocks.iter().all(|b| b["type"] != "actions"));
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_outage_then_the_message_arrives() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("gone", Some("U0GONE")).await;
    slack.standin.fail_next(3);
    let id = slack
        .create(json!({"question": "Still there?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert!(shown_text(&message).contains("Still there?"));
    let failed = slack
        .standin
        .calls()
        .iter()
        .filter(|c| c.answer == Err("503".into()))
        .count();
    assert_eq!(failed, 3);
    // The retries are in the decision's history, with Slack's answer named.
    let events = common::server::send(
        slack
            .srv
            .req(reqwest::Method::GET, &format!("/v1/decisions/{id}/events")),
    )
    .await
    .1;
    let text = events.to_string();
    assert!(text.contains("503"), "{text}");
    // A user who left the workspace: failed for good, with Slack's error named.
    let gone = slack
        .create(json!({"question": "Anyone?", "kind": "bool", "approvers": ["gone"]}))
        .await;
    let mut seen = String::new();
    for _ in 0..100 {
        seen = common::server::send(slack.srv.req(
            reqwest::Method::GET,
            &format!("/v1/decisions/{gone}/events"),
        ))
        .await
        .1
        .to_string();
        if seen.contains("user_not_found") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen.contains("user_not_found"), "{seen}");
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_socket_mode_answers_once_per_envelope() {
    let Some(slack) = Slack::start(true).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(json!({"question": "Over the socket?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let press = block_actions(&slack.standin, &message, button(&message, "Yes"), "U0ANA");
    let envelope = json!({"envelope_id": "57d6a792-4d35-4d0b-b6aa-3361493e1caf", "type": "interactive",
                          "accepts_response_payload": false, "payload": press});
    slack.standin.send_envelope(envelope.clone()).await;
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], true);
    assert_eq!(d["answers"][0]["channel"], "slack");
    // Slack sends an envelope again when it missed the ack: acked, not taken twice.
    slack.standin.send_envelope(envelope).await;
    slack.standin.acked("two acks", 2).await;
    assert!(
        slack
            .standin
            .acks()
            .iter()
            .all(|a| a["envelope_id"] == "57d6a792-4d35-4d0b-b6aa-3361493e1caf")
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        slack.standin.responses().is_empty(),
        "the second copy said nothing: {:?}",
        slack.standin.responses()
    );
    assert_eq!(
        slack.decision(&id).await["answers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A text through its modal: the refusal goes back with the submission's ack.
    let text = slack
        .create(json!({"question": "Release name?", "kind": "text", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    let press = block_actions(
        &slack.standin,
        &message,
        button(&message, "Answer"),
        "U0ANA",
    );
    slack
        .standin
        .send_envelope(json!({"envelope_id": "e-open", "type": "interactive", "payload": press}))
        .await;
    let opened = slack.standin.view_opened("the answer modal", 0).await;
    let view = opened.body["view"].clone();
    for (id, said) in [("e-empty", ""), ("e-named", "Aurora")] {
        slack
            .standin
            .send_envelope(
                json!({"envelope_id": id, "type": "interactive", "accepts_response_payload": true,
                                  "payload": view_submission(&view, "U0ANA", Some(said))}),
            )
            .await;
        let ack = slack
            .standin
            .wait_for("the submission's ack", |s| {
                s.acks().into_iter().find(|a| a["envelope_id"] == id)
            })
            .await;
        if said.is_empty() {
            assert_eq!(ack["payload"]["response_action"], "errors", "{ack}");
        } else {
            assert!(ack.get("payload").is_none(), "{ack}");
        }
    }
    assert_eq!(
        slack.wait_status(&text, "answered").await["outcome"],
        "Aurora"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_escalation_asks_and_says_so_where_it_first_asked() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("bo", Some("U0BO")).await;
    let mut body = approval("make migrate", &["ana"]);
    body["escalate_after_s"] = json!(1);
    body["escalate_to"] = json!(["bo"]);
    let id = slack.create(body).await;
    let to_ana = slack.standin.message_to("U0ANA", 0).await;
    let to_bo = slack.standin.message_to("U0BO", 0).await;
    let header = &to_bo.blocks[0]["text"]["text"];
    assert!(
        header.as_str().unwrap().starts_with("Escalated to you"),
        "{header}"
    );
    // ana's message says where it went, buttons kept.
    let told = showing(
        &slack.standin,
        "ana told it escalated",
        &to_ana.ts,
        "Escalated to bo",
    )
    .await;
    assert!(told.blocks.iter().any(|b| b["type"] == "actions"));
    slack.press(&to_bo, "Allow", "U0BO").await;
    slack.wait_status(&id, "answered").await;
    for ts in [&to_ana.ts, &to_bo.ts] {
        showing(&slack.standin, "settled", ts, "Allowed by bo from Slack").await;
    }
    slack.assert_well_formed();
}

/// `sayso person set --slack` and `sayso person test --channel slack`, the real binary with the
/// server's settings from the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_person_test_message_from_the_command_line() {
    let standin = SlackStandIn::start().await;
    let (db, srv) = common::server::fresh_server().await;
    let sayso = |env: Vec<(&'static str, String)>, args: &'static [&'static str]| {
        let (srv, db) = (&srv, &db);
        async move {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let out = crate::cli::sayso(srv, db, &env, args).await;
            (out.status.success(), crate::cli::said(&out))
        }
    };
    let (ok, said) = sayso(vec![], &["person", "add", "ana"]).await;
    assert!(ok, "{said}");
    let (ok, said) = sayso(vec![], &["person", "set", "ana", "--slack", "U0ANA"]).await;
    assert!(ok, "{said}");
    let env = |token: &str| {
        vec![
            ("SAYSO_SLACK_BOT_TOKEN", token.to_string()),
            ("SAYSO_SLACK_SIGNING_SECRET", SIGNING_SECRET.to_string()),
            ("SAYSO_SLACK_API_URL", standin.api_url.clone()),
        ]
    };
    let (ok, said) = sayso(
        env(BOT_TOKEN),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(ok, "{said}");
    assert!(said.contains("U0ANA") && said.contains("D0ANA"), "{said}");
    let posted = standin.message_to("U0ANA", 0).await;
    assert!(
        shown_text(&posted).contains("questions for ana"),
        "{}",
        shown_text(&posted)
    );
    assert_eq!(standin.problems(), Vec::<String>::new());
    // A user token instead of the bot's is refused before anything is sent, saying which.
    let (ok, said) = sayso(
        env("xoxp-123"),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(!ok);
    assert!(said.contains("xoxb-"), "{said}");
    // Slack's error is named.
    let (ok, said) = sayso(
        env("xoxb-wrong"),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(!ok);
    assert!(said.contains("invalid_auth"), "{said}");
    assert_eq!(standin.calls_to("chat.postMessage").len(), 2);
}

/// A dialog Slack will not open (the press's trigger_id expired): Deny denies without a
/// reason, and a text question's presser is sent their own link to the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_a_modal_that_cannot_open_falls_back() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let deny = slack.create(approval("make clean", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let mut press = block_actions(&slack.standin, &message, button(&message, "Deny"), "U0ANA");
    press["trigger_id"] = json!("1.2.expired");
    assert_eq!(slack.send(&press).await.0, 200);
    let d = slack.wait_status(&deny, "answered").await;
    assert_eq!(d["outcome"], "Deny");
    assert_eq!(
        slack.standin.calls_to("views.open")[0].answer,
        Err("invalid_trigger_id".into())
    );

    let text = slack
        .create(json!({"question": "Name?", "kind": "text", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    let mut press = block_actions(
        &slack.standin,
        &message,
        button(&message, "Answer"),
        "U0ANA",
    );
    press["trigger_id"] = json!("1.2.expired");
    assert_eq!(slack.send(&press).await.0, 200);
    let note = slack.standin.response("the page's link", 0).await;
    let said = note.1["text"].as_str().unwrap();
    let page = button(&message, "Open the page")["url"].as_str().unwrap();
    assert!(
        said.contains(&page.replace('&', "&amp;")),
        "{said} / {page}"
    );
    assert_eq!(slack.decision(&text).await["status"], "pending");
    assert_eq!(slack.standin.problems(), Vec::<String>::new());
}

/// On PostgreSQL: the messages posted, the press taken once by its signature, and the update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_on_postgres_a_press_counts_once() {
    let Some(slack) = Slack::start_on_postgres().await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack.create(approval("make deploy", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let (status, _, (body, ts, signature)) = slack.press(&message, "Allow", "U0ANA").await;
    assert_eq!(status, 200);
    assert_eq!(slack.wait_status(&id, "answered").await["outcome"], "Allow");
    let (status, why) = slack.post_raw(&body, &ts, &signature).await;
    assert_eq!(status, 401);
    assert!(why.contains("replay"), "{why}");
    showing(
        &slack.standin,
        "the message settled",
        &message.ts,
        "Allowed by ana from Slack",
    )
    .await;
    slack.assert_well_formed();
}

/// An Allow that wants the person's passkey is given on the page: no Allow button, and an
/// Allow press made up from its code is answered with the person's own link; Deny still
/// answers from Slack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_an_allow_that_wants_a_passkey_is_given_on_the_page() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let mut body = approval("make release", &["ana"]);
    body["approval"]["step_up"] = json!("passkey");
    let id = slack.create(body).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let shown = shown_text(&message);
    assert!(shown.contains("Allow on the page"), "{shown}");
    let labels: Vec<&str> = message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .map(|e| e["text"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Deny", "Open the page"]);
    let made_up = json!({
        "type": "button", "action_id": "sayso.answer.a", "text": {"type": "plain_text", "text": "Allow"},
        "value": format!("{}.a", Uuid::parse_str(&id).unwrap().simple()),
    });
    let press = block_actions(&slack.standin, &message, &made_up, "U0ANA");
    assert_eq!(slack.send(&press).await.0, 200);
    let note = slack.standin.response("the page's link", 0).await;
    let said = note.1["text"].as_str().unwrap();
    assert!(
        said.contains("answered on the page") && said.contains("/a/"),
        "{said}"
    );
    assert_eq!(slack.decision(&id).await["status"], "pending");
    slack.press(&message, "Deny", "U0ANA").await;
    slack.standin.view_opened("the Deny modal", 0).await;
    let (status, _) = slack.submit("U0ANA", None).await;
    assert_eq!(status, 200);
    assert_eq!(slack.wait_status(&id, "answered").await["outcome"], "Deny");
    slack.assert_well_formed();
}
