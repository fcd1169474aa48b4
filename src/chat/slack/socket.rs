//! Slack's Socket Mode: interactions come over a websocket sayso opens, so no public URL is
//! needed. `apps.connections.open` with the app-level token (`xapp-…`) gives a one-time
//! `wss://` URL; Slack says `hello`, then sends each interaction as an envelope that must be
//! acknowledged by its `envelope_id` within 3 s (with the modal's answer, for a submission).
//! Slack asks for a new connection with a `disconnect` message now and then; a dropped
//! connection is opened again, waiting 1 s doubling to a minute while it keeps failing.
//!
//! The socket is authenticated by the app token, so its envelopes carry no signature; each
//! still goes through the replay guard by its envelope id (the handler's part), since Slack
//! sends an envelope again when its acknowledgement did not arrive.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::api::{SlackApi, backoff};

/// One envelope's content.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub id: String,
    /// `interactive`, `events_api`, `slash_commands`.
    pub kind: String,
    pub payload: Value,
}

/// What is done with an `interactive` envelope; its answer (a modal's `response_action`) goes
/// back with the acknowledgement of a submission.
pub type Handler = Arc<dyn Fn(Envelope) -> BoxFuture<'static, Option<Value>> + Send + Sync>;

/// How a connection ended.
enum Ended {
    /// Slack asked for a new one.
    Disconnect(String),
    /// It closed or broke.
    Lost(String),
}

/// Keeps a Socket Mode connection open for as long as the server runs.
pub async fn run(api: SlackApi, app_token: String, handler: Handler) {
    let mut failures = 0u32;
    loop {
        let (greeted, ended) = connection(&api, &app_token, &handler).await;
        if greeted {
            failures = 0;
        }
        match ended {
            Ended::Disconnect(reason) => {
                tracing::info!(reason, "slack socket mode: reconnecting as slack asked");
            }
            Ended::Lost(why) => {
                let wait = backoff(failures);
                tracing::warn!(
                    why,
                    wait_s = wait.as_secs(),
                    "slack socket mode: connection lost; connecting again"
                );
                failures = failures.saturating_add(1);
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// One connection, from asking for its URL to its end; whether Slack said hello on it.
async fn connection(api: &SlackApi, app_token: &str, handler: &Handler) -> (bool, Ended) {
    let url = match api.open_connection(app_token).await {
        Ok(url) => url,
        Err(e) => return (false, Ended::Lost(e.text().to_string())),
    };
    let mut ws = match tokio_tungstenite::connect_async(url.as_str()).await {
        Ok((ws, _)) => ws,
        Err(e) => {
            return (
                false,
                Ended::Lost(format!("slack socket mode: connecting: {e}")),
            );
        }
    };
    let mut greeted = false;
    while let Some(frame) = ws.next().await {
        let text = match frame {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) => break,
            // Pings are answered by the library; nothing else is Slack's.
            Ok(_) => continue,
            Err(e) => return (greeted, Ended::Lost(format!("slack socket mode: {e}"))),
        };
        let Ok(message) = serde_json::from_str::<Value>(&text) else {
            tracing::warn!("slack socket mode: a message that is not JSON");
            continue;
        };
        match message["type"].as_str().unwrap_or_default() {
            "hello" => greeted = true,
            "disconnect" => {
                let reason = message["reason"].as_str().unwrap_or("unknown").to_string();
                let _ = ws.close(None).await;
                return (greeted, Ended::Disconnect(reason));
            }
            kind => {
                let Some(id) = message["envelope_id"].as_str() else {
                    continue;
                };
                let envelope = Envelope {
                    id: id.to_string(),
                    kind: kind.to_string(),
                    payload: message["payload"].clone(),
                };
                let ack = acknowledge(handler, envelope).await;
                if let Err(e) = ws.send(Message::text(ack.to_string())).await {
                    return (
                        greeted,
                        Ended::Lost(format!("slack socket mode: acking: {e}")),
                    );
                }
            }
        }
    }
    (
        greeted,
        Ended::Lost("slack socket mode: the connection closed".into()),
    )
}

/// The acknowledgement of an envelope. A modal's submission is handled first, since its
/// answer (errors under a field, or none to close it) goes with the acknowledgement; anything
/// else is acknowledged at once and handled on its own, so a slow call to Slack (a modal
/// opening) never holds the acknowledgement past Slack's 3 s.
async fn acknowledge(handler: &Handler, envelope: Envelope) -> Value {
    let id = envelope.id.clone();
    if envelope.kind != "interactive" {
        return json!({"envelope_id": id});
    }
    if envelope.payload["type"] != "view_submission" {
        tokio::spawn(handler(envelope));
        return json!({"envelope_id": id});
    }
    match handler(envelope).await {
        Some(payload) => json!({"envelope_id": id, "payload": payload}),
        None => json!({"envelope_id": id}),
    }
}
