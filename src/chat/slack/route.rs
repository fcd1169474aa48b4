//! `POST /chat/slack/interactivity`: Slack's presses and modal submissions, for an app set up
//! with a public interactivity URL rather than Socket Mode (docs/CHANNELS.md, Slack).
//!
//! Nothing of a request is read before its signature is checked: Slack's `v0` HMAC of the
//! timestamp and the raw body with the signing secret, the timestamp within five minutes.
//! Each signed request is then taken once, known by what was signed (its timestamp and body)
//! rather than by its signature's spelling, so a request captured and sent again, its
//! signature's hex upper-cased or not, counts for nothing. A forged, stale or replayed request is answered 401 with what is wrong, changes
//! nothing, and is logged.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::chat::SlackSettings;
use crate::chat::slack::api::SlackApi;
use crate::chat::slack::signature::{self, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use crate::chat::slack::{inbound, interaction};
use crate::service::Service;

/// The interactivity route, on `router`, when Slack is on.
pub fn route(router: Router<Service>, settings: Option<&SlackSettings>) -> Router<Service> {
    let Some(settings) = settings else {
        return router;
    };
    let api = SlackApi::new(&settings.api_url, &settings.bot_token);
    let secret = settings.signing_secret.clone();
    router.route(
        "/chat/slack/interactivity",
        post(
            move |State(svc): State<Service>, headers: HeaderMap, body: Bytes| {
                interactivity(svc, api.clone(), secret.clone(), headers, body)
            },
        ),
    )
}

async fn interactivity(
    svc: Service,
    api: SlackApi,
    secret: Option<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(secret) = secret else {
        tracing::warn!("a Slack request was refused: SAYSO_SLACK_SIGNING_SECRET is not set");
        return refuse("this server takes no signed Slack requests (no signing secret is set)");
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let timestamp = header(TIMESTAMP_HEADER);
    let sig = header(SIGNATURE_HEADER);
    if let Err(why) = signature::verify(&secret, timestamp, sig, &body, now) {
        tracing::warn!(%why, "a Slack request with a bad signature was refused");
        return refuse(&why.to_string());
    }
    // Verified, so the timestamp is there.
    let key = signature::replay_key(timestamp.unwrap_or_default(), &body);
    match svc.first_seen(&key).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!("a Slack request was sent again (a replay); refused");
            return refuse("this signed request was taken already: a replay changes nothing");
        }
        Err(e) => {
            tracing::warn!(error = %e, "Slack: could not check a request for a replay");
            return (StatusCode::SERVICE_UNAVAILABLE, "try again\n").into_response();
        }
    }
    let payload = match interaction::form_payload(&body) {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!(why, "a signed Slack request that is not an interaction");
            return (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response();
        }
    };
    match inbound::handle(&svc, &api, &payload).await {
        Some(answer) => axum::Json(answer).into_response(),
        None => StatusCode::OK.into_response(),
    }
}

fn refuse(why: &str) -> Response {
    (StatusCode::UNAUTHORIZED, format!("{why}\n")).into_response()
}
