//! The few Bot API methods sayso calls (https://core.telegram.org/bots/api), over the
//! project's HTTP client: sendMessage, editMessageText, answerCallbackQuery, getUpdates,
//! setWebhook and deleteWebhook. Every call is a JSON POST to `{api}/bot{token}/{method}`;
//! every answer is `{"ok": true, "result": …}` or `{"ok": false, "error_code", "description",
//! "parameters": {"retry_after"}}`.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::TelegramSettings;
use crate::courier::Delivery;
use crate::courier::http_client::{client_builder, describe};

/// How a Bot API call went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// Worth trying again: the network, a 5xx, 429 (after `retry_after` seconds).
    Transient(String),
    /// Will not change by trying again: a refused chat, a blocked bot, a bad request.
    Permanent(String),
}

impl ApiError {
    pub fn delivery(self) -> Delivery {
        match self {
            ApiError::Transient(why) => Delivery::Retry(why),
            ApiError::Permanent(why) => Delivery::Failed(why),
        }
    }

    /// Telegram's "message is not modified": an edit to what the message already says.
    pub fn is_unchanged(&self) -> bool {
        matches!(self, ApiError::Permanent(why) if why.contains("message is not modified"))
    }
}

/// A Bot API client for one bot.
#[derive(Clone)]
pub struct BotApi {
    client: reqwest::Client,
    /// `{api}/bot{token}/`, which method names join.
    base: url::Url,
    /// The bot's own id, the token's part before its colon: update ids count per bot.
    pub bot: String,
}

impl BotApi {
    pub fn new(settings: &TelegramSettings) -> Self {
        // "./": a token is `123456:ABC…`, which joined bare would read as a URL scheme.
        let base = settings
            .api_url
            .join(&format!("./bot{}/", settings.bot_token))
            .unwrap_or_else(|_| settings.api_url.clone());
        BotApi {
            // Long polls hold a request for up to POLL_SECONDS: the client's own timeout is
            // longer than that.
            client: client_builder()
                .timeout(Duration::from_secs(POLL_SECONDS + 15))
                .build()
                .expect("the HTTP client builds"),
            base,
            bot: settings
                .bot_token
                .split_once(':')
                .map_or("", |(id, _)| id)
                .to_string(),
        }
    }

    /// Calls `method` with `body` and returns its `result`.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, ApiError> {
        let url = self
            .base
            .join(method)
            .map_err(|e| ApiError::Permanent(format!("Telegram method {method}: {e}")))?;
        let resp = self
            .client
            .post(url)
            .json(body)
            .send()
            .await
            // Never the URL: it holds the bot's token.
            .map_err(|e| {
                ApiError::Transient(format!(
                    "Telegram could not be reached: {}",
                    describe(&e.without_url())
                ))
            })?;
        let status = resp.status();
        let answer: Value = resp.json().await.unwrap_or(Value::Null);
        if answer["ok"] == json!(true) {
            return Ok(answer["result"].clone());
        }
        let description = answer["description"]
            .as_str()
            .map_or_else(|| format!("HTTP {status}"), str::to_string);
        let why = format!("Telegram {method}: {description}");
        let code = answer["error_code"]
            .as_u64()
            .unwrap_or(u64::from(status.as_u16()));
        if code == 429 || code >= 500 || code == 0 || answer.is_null() && !status.is_client_error()
        {
            let after = answer["parameters"]["retry_after"]
                .as_u64()
                .map(|s| format!(" (retry after {s} s)"))
                .unwrap_or_default();
            Err(ApiError::Transient(format!("{why}{after}")))
        } else {
            Err(ApiError::Permanent(why))
        }
    }
}

/// How long one getUpdates waits for an update (Telegram's own long-poll timeout).
pub const POLL_SECONDS: u64 = 30;
