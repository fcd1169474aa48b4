//! The chats' inbound URLs (docs/CHANNELS.md), for a service with a public URL:
//! `POST /chat/telegram/webhook` takes Telegram's updates when `SAYSO_TELEGRAM_WEBHOOK_SECRET`
//! is set, and `POST /chat/slack/interactivity` Slack's presses (slack/route.rs). Without a
//! public URL the chats come in by long polling, sync or Socket Mode instead. The chats are a
//! way in as well as out, so their routes live here, beside their listeners; `app` joins them
//! to the others.
//!
//! Each request is authenticated the platform's way before anything is read of it; a forged
//! one is answered 401, changes nothing and is logged.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;

use crate::chat::ChatSettings;
use crate::chat::telegram::{BotApi, handle_update};
use crate::service::Service;

/// The routes of the chats that take requests.
pub fn routes(settings: &ChatSettings) -> Router<Service> {
    let mut router = super::slack::route::route(Router::new(), settings.slack.as_ref());
    if let Some(t) = settings
        .telegram
        .as_ref()
        .filter(|t| t.webhook_secret.is_some())
    {
        let api = BotApi::new(t);
        let secret = t.webhook_secret.clone().unwrap_or_default();
        router = router.route(
            "/chat/telegram/webhook",
            post(
                move |State(svc): State<Service>, headers: HeaderMap, body: Bytes| {
                    telegram_webhook(svc, api.clone(), secret.clone(), headers, body)
                },
            ),
        );
    }
    router
}

/// Telegram sends the secret given to setWebhook in `X-Telegram-Bot-Api-Secret-Token`.
async fn telegram_webhook(
    svc: Service,
    api: BotApi,
    secret: String,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let given = headers
        .get("x-telegram-bot-api-secret-token")
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if !same(given, secret.as_bytes()) {
        tracing::warn!("a Telegram webhook request without the right secret token was refused");
        return StatusCode::UNAUTHORIZED;
    }
    let Ok(update) = serde_json::from_slice::<Value>(&body) else {
        tracing::warn!("a Telegram webhook request that is not JSON was ignored");
        return StatusCode::BAD_REQUEST;
    };
    handle_update(&svc, &api, &update).await;
    StatusCode::OK
}

/// Compares digests rather than the secrets, so how long a comparison takes says nothing
/// about how much of the secret a guess got right.
fn same(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    !b.is_empty() && Sha256::digest(a) == Sha256::digest(b)
}
