//! The few Slack Web API calls sayso makes, over the project's own reqwest client: each is a
//! `POST {SAYSO_SLACK_API_URL}{method}` with a JSON body and the bot token as Bearer, and
//! Slack answers `{"ok": true, …}` or `{"ok": false, "error": "…"}` (mostly with HTTP 200).
//!
//! An error is sorted into one worth another try (rate limited, Slack down, the network) and
//! one that will not change by trying again (a revoked token, a missing scope, a user who
//! left), and named either way, so the outbox retries the first and records the second.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use url::Url;

use super::blocks::SlackMessage;
use crate::courier::Delivery;
use crate::courier::http_client::{client_builder, describe};

/// Where Slack's Web API is; `SAYSO_SLACK_API_URL` points elsewhere (a stand-in in tests).
pub const DEFAULT_API_URL: &str = "https://slack.com/api/";

/// How one call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// Worth another try: rate limited, Slack's own trouble, no answer.
    Retry(String),
    /// Will not change by trying again: the error Slack named, or an answer it could not be.
    Failed(String),
}

impl CallError {
    /// The outbox's reading of it.
    pub fn delivery(self) -> Delivery {
        match self {
            CallError::Retry(why) => Delivery::Retry(why),
            CallError::Failed(why) => Delivery::Failed(why),
        }
    }

    pub fn text(&self) -> &str {
        match self {
            CallError::Retry(why) | CallError::Failed(why) => why,
        }
    }
}

/// Slack's `error`s that say "try again later" (api.slack.com/web#errors and each method's
/// list); every other one is for good (`channel_not_found`, `invalid_auth`, `missing_scope`,
/// `user_not_found`, `account_inactive`, `token_revoked`, `invalid_blocks`, …).
const TRANSIENT: &[&str] = &[
    "ratelimited",
    "rate_limited",
    "service_unavailable",
    "fatal_error",
    "internal_error",
    "request_timeout",
    "team_added_to_org",
];

/// A client for one workspace's bot.
#[derive(Clone)]
pub struct SlackApi {
    client: reqwest::Client,
    base: Url,
    bot_token: String,
}

impl std::fmt::Debug for SlackApi {
    // The token stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackApi")
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

impl SlackApi {
    /// A client for the API at `api_url` (its methods are joined to it; it ends in `/`) with
    /// the bot token.
    pub fn new(api_url: &Url, bot_token: &str) -> Self {
        SlackApi {
            client: client_builder().build().expect("the HTTP client builds"),
            base: api_url.clone(),
            bot_token: bot_token.to_string(),
        }
    }

    /// Calls `method` with `body`, as the bot; Slack's answer when it says `ok`.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, CallError> {
        self.call_as(method, &self.bot_token, body).await
    }

    async fn call_as(&self, method: &str, token: &str, body: &Value) -> Result<Value, CallError> {
        let url = self
            .base
            .join(method)
            .map_err(|e| CallError::Failed(format!("slack {method}: {e}")))?;
        let resp = self
            .client
            .post(url)
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .map_err(|e| sent_nothing(method, e))?;
        read_answer(method, resp).await
    }

    /// Posts a message; where it went (the conversation, `D…` for a person's direct messages
    /// with the bot) and its `ts`, which name it for updates.
    pub async fn post_message(
        &self,
        channel: &str,
        message: &SlackMessage,
    ) -> Result<(String, String), CallError> {
        let mut body = message_body(message);
        body["channel"] = json!(channel);
        let answer = self.call("chat.postMessage", &body).await?;
        let conversation = answer["channel"].as_str().unwrap_or(channel).to_string();
        let ts = answer["ts"]
            .as_str()
            .ok_or_else(|| CallError::Failed("slack chat.postMessage answered no ts".into()))?;
        Ok((conversation, ts.to_string()))
    }

    /// Replaces the message `ts` in `channel` with `message`.
    pub async fn update(
        &self,
        channel: &str,
        ts: &str,
        message: &SlackMessage,
    ) -> Result<(), CallError> {
        let mut body = message_body(message);
        body["channel"] = json!(channel);
        body["ts"] = json!(ts);
        self.call("chat.update", &body).await.map(|_| ())
    }

    /// Opens a modal for the press whose `trigger_id` is given (valid for 3 s).
    pub async fn open_view(&self, trigger_id: &str, view: &Value) -> Result<(), CallError> {
        let body = json!({"trigger_id": trigger_id, "view": view});
        self.call("views.open", &body).await.map(|_| ())
    }

    /// A message only `user` sees, in `channel`.
    pub async fn post_ephemeral(
        &self,
        channel: &str,
        user: &str,
        mrkdwn: &str,
    ) -> Result<(), CallError> {
        let body = json!({"channel": channel, "user": user, "text": mrkdwn, "link_names": false});
        self.call("chat.postEphemeral", &body).await.map(|_| ())
    }

    /// A message only the presser sees, through the press's `response_url`. Only Slack's
    /// own hook host (or the API's host, for a stand-in) is posted to.
    pub async fn respond_ephemeral(
        &self,
        response_url: &str,
        mrkdwn: &str,
    ) -> Result<(), CallError> {
        let url = Url::parse(response_url)
            .map_err(|e| CallError::Failed(format!("slack response_url: {e}")))?;
        let trusted = url.scheme() == "https" && url.host_str() == Some("hooks.slack.com")
            || url.origin() == self.base.origin();
        if !trusted {
            return Err(CallError::Failed(format!(
                "slack response_url goes to {}, not to Slack",
                url.host_str().unwrap_or("no host")
            )));
        }
        let body = json!({
            "response_type": "ephemeral",
            "replace_original": false,
            "text": mrkdwn,
        });
        let resp = self
            .client
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| sent_nothing("response_url", e))?;
        // The hook answers a plain "ok" (or a JSON error).
        let status = resp.status();
        if status.is_success() {
            return Ok(());
        }
        let text = resp.text().await.unwrap_or_default();
        Err(classify_status("response_url", status, &text))
    }

    /// Socket Mode: a websocket URL to connect to, asked for with the app-level token.
    pub async fn open_connection(&self, app_token: &str) -> Result<String, CallError> {
        let answer = self
            .call_as("apps.connections.open", app_token, &json!({}))
            .await?;
        answer["url"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| CallError::Failed("slack apps.connections.open answered no url".into()))
    }
}

/// The body of chat.postMessage and chat.update: the blocks, the notification's text, and
/// nothing read from the text that was not meant (`link_names` off, no unfurling).
fn message_body(message: &SlackMessage) -> Value {
    json!({
        "text": message.text,
        "blocks": message.blocks,
        "link_names": false,
        "unfurl_links": false,
        "unfurl_media": false,
    })
}

/// No answer at all: another try may reach Slack. The URL is left out (it may name a hook).
fn sent_nothing(method: &str, error: reqwest::Error) -> CallError {
    let error = error.without_url();
    if error.is_builder() {
        return CallError::Failed(format!("slack {method}: {}", describe(&error)));
    }
    CallError::Retry(format!(
        "slack {method} could not be reached: {}",
        describe(&error)
    ))
}

/// Reads Slack's answer: `ok` with its body, or the error it names, sorted.
async fn read_answer(method: &str, resp: reqwest::Response) -> Result<Value, CallError> {
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let text = resp.text().await.map_err(|e| {
        CallError::Retry(format!(
            "slack {method}: the answer broke off: {}",
            describe(&e)
        ))
    })?;
    if status == StatusCode::TOO_MANY_REQUESTS {
        let wait = retry_after.map_or(String::new(), |s| format!(", retry after {s} s"));
        return Err(CallError::Retry(format!(
            "slack {method}: ratelimited{wait}"
        )));
    }
    let Ok(answer) = serde_json::from_str::<Value>(&text) else {
        return Err(classify_status(method, status, &text));
    };
    if answer["ok"] == json!(true) {
        return Ok(answer);
    }
    let Some(error) = answer["error"].as_str() else {
        return Err(classify_status(method, status, &text));
    };
    let said = format!("slack {method}: {error}");
    if TRANSIENT.contains(&error) || status.is_server_error() {
        Err(CallError::Retry(said))
    } else {
        Err(CallError::Failed(said))
    }
}

/// An answer that is not Slack's JSON: a 5xx or a timeout from a proxy is worth another try;
/// anything else is not.
fn classify_status(method: &str, status: StatusCode, text: &str) -> CallError {
    let snippet: String = text.chars().take(120).collect();
    let said = format!("slack {method} answered {status}: {}", snippet.trim());
    if status.is_server_error()
        || status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
    {
        CallError::Retry(said)
    } else {
        CallError::Failed(said)
    }
}

/// How long Socket Mode waits before connecting again after the `attempt`th failure in a
/// row: 1 s doubling to a minute.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.min(6)).min(Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::http::HeaderMap;
    use axum::response::IntoResponse;
    use axum::routing::post;

    use super::*;

    /// A Slack that answers every method with `answer` and the status given.
    async fn slack(status: u16, answer: &'static str) -> SlackApi {
        let app = Router::new().route(
            "/api/{method}",
            post(move |headers: HeaderMap| async move {
                assert_eq!(headers["authorization"], "Bearer xoxb-test");
                let mut resp = (StatusCode::from_u16(status).unwrap(), answer).into_response();
                if status == 429 {
                    resp.headers_mut()
                        .insert("retry-after", "30".parse().unwrap());
                }
                resp
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        SlackApi::new(&format!("http://{addr}/api/").parse().unwrap(), "xoxb-test")
    }

    fn msg() -> SlackMessage {
        SlackMessage {
            text: "t".into(),
            blocks: vec![],
        }
    }

    #[tokio::test]
    async fn ok_answers_name_the_message() {
        let api = slack(
            200,
            r#"{"ok":true,"channel":"D024BE91L","ts":"1712.000100"}"#,
        )
        .await;
        assert_eq!(
            api.post_message("U024BE7LH", &msg()).await,
            Ok(("D024BE91L".into(), "1712.000100".into()))
        );
    }

    #[tokio::test]
    async fn errors_are_sorted_and_named() {
        let cases: &[(u16, &'static str, bool, &str)] = &[
            (
                200,
                r#"{"ok":false,"error":"channel_not_found"}"#,
                false,
                "channel_not_found",
            ),
            (
                200,
                r#"{"ok":false,"error":"invalid_auth"}"#,
                false,
                "invalid_auth",
            ),
            (
                200,
                r#"{"ok":false,"error":"ratelimited"}"#,
                true,
                "ratelimited",
            ),
            (
                429,
                r#"{"ok":false,"error":"ratelimited"}"#,
                true,
                "retry after 30 s",
            ),
            (503, "<html>down</html>", true, "503"),
            (
                200,
                r#"{"ok":false,"error":"internal_error"}"#,
                true,
                "internal_error",
            ),
            (404, "not found", false, "404"),
            (200, "not json", false, "not json"),
        ];
        for (status, answer, retry, named) in cases {
            let api = slack(*status, answer).await;
            let err = api.post_message("U1", &msg()).await.unwrap_err();
            assert_eq!(
                matches!(err, CallError::Retry(_)),
                *retry,
                "{answer}: {err:?}"
            );
            assert!(err.text().contains(named), "{answer}: {err:?}");
            assert!(err.text().contains("chat.postMessage"), "{err:?}");
        }
    }

    #[tokio::test]
    async fn no_answer_is_retried() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let api = SlackApi::new(&format!("http://{addr}/api/").parse().unwrap(), "xoxb-test");
        let err = api.update("D1", "1.2", &msg()).await.unwrap_err();
        assert!(matches!(err, CallError::Retry(_)), "{err:?}");
    }

    #[tokio::test]
    async fn response_urls_go_only_to_slack() {
        let api = slack(200, "ok").await;
        let err = api
            .respond_ephemeral("https://evil.example/hook", "x")
            .await
            .unwrap_err();
        assert!(err.text().contains("evil.example"), "{err:?}");
    }

    #[test]
    fn the_token_stays_out_of_debug() {
        let api = SlackApi::new(&DEFAULT_API_URL.parse().unwrap(), "xoxb-1");
        assert!(!format!("{api:?}").contains("xoxb"));
    }

    #[test]
    fn backoff_doubles_to_a_minute() {
        assert_eq!(backoff(0), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(8));
        assert_eq!(backoff(10), Duration::from_secs(60));
    }
}
