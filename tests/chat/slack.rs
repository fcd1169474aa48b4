//! Slack as a person's channel. Slack cannot run here: its Web API is a recording stand-in on
//! loopback (slack_standin.rs) that checks every call against Slack's documented shapes, and
//! every message and modal sayso sent is checked once more with the Block Kit models of
//! Slack's official Python SDK (slack_sdk). The person's presses are built as Slack sends
//! them and signed with slack_sdk's own signature helper, so sayso's verifier is checked
//! against Slack's code, not against itself. Socket Mode runs over a websocket stand-in.

mod answers;
mod fields;
mod lifecycle;
mod render;
mod rig;

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
