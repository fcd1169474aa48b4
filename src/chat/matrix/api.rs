//! The Matrix client-server API calls sayso makes, over the project's reqwest client: log in,
//! create a direct room, send an event under a transaction id, sync. Plain JSON in and out
//! (serde_json), so no Matrix SDK is compiled in (docs/CHANNELS.md, Matrix, says why).
//!
//! The bot logs in once with a fixed device id, so the homeserver's transaction-id memory
//! (scoped to the device) holds across a new login: a send repeated under the same
//! transaction id returns the first event instead of posting a second.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use url::Url;

use crate::courier::Delivery;
use crate::courier::http_client::{client_builder, describe};

/// The device the bot logs in as; the same one every time (see the module's comment).
pub const DEVICE_ID: &str = "SAYSO";
/// The most characters of a homeserver's error text kept in a delivery's detail.
const ERROR_CHARS: usize = 300;

/// How the bot proves who it is.
#[derive(Clone)]
pub enum Credentials {
    /// `SAYSO_MATRIX_PASSWORD`: logged in on first use, and again when the homeserver forgets
    /// the token.
    Password { user: String, password: String },
    /// `SAYSO_MATRIX_ACCESS_TOKEN`: used as given; `user`, when set, must be whose it is.
    Token { user: Option<String>, token: String },
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Password { user, .. } => write!(f, "password for {user}"),
            Credentials::Token { user, .. } => write!(f, "access token for {user:?}"),
        }
    }
}

/// The logged-in bot: its access token and full user id.
#[derive(Clone, Debug)]
pub struct Session {
    pub token: String,
    pub user_id: String,
}

/// Why a call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// The homeserver answered with an error: its status, `errcode` and `error`.
    Refused {
        status: u16,
        errcode: String,
        error: String,
        retry_after_ms: Option<u64>,
    },
    /// No answer (connection refused, timeout) or one that is not the API's JSON.
    Unreachable(String),
    /// Something sayso itself cannot use (a bad setting, an answer missing a field).
    Invalid(String),
}

impl ApiError {
    pub fn errcode(&self) -> Option<&str> {
        match self {
            ApiError::Refused { errcode, .. } => Some(errcode),
            _ => None,
        }
    }

    /// How an outbox attempt that ended in this error ends: rate limits, server errors and
    /// silence are tried again; a refusal (M_FORBIDDEN, a bad token) fails, naming it.
    pub fn delivery(&self) -> Delivery {
        match self {
            ApiError::Refused { status, .. }
                if *status == 429 || *status == 408 || *status >= 500 =>
            {
                Delivery::Retry(self.to_string())
            }
            ApiError::Refused { errcode, .. } if errcode == "M_LIMIT_EXCEEDED" => {
                Delivery::Retry(self.to_string())
            }
            ApiError::Refused { .. } | ApiError::Invalid(_) => Delivery::Failed(self.to_string()),
            ApiError::Unreachable(_) => Delivery::Retry(self.to_string()),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Refused {
                status,
                errcode,
                error,
                retry_after_ms,
            } => {
                write!(f, "the Matrix homeserver answered {status} {errcode}")?;
                if !error.is_empty() {
                    write!(f, ": {error}")?;
                }
                if let Some(ms) = retry_after_ms {
                    write!(f, " (retry after {ms} ms)")?;
                }
                Ok(())
            }
            ApiError::Unreachable(why) => write!(f, "the Matrix homeserver: {why}"),
            ApiError::Invalid(why) => write!(f, "Matrix: {why}"),
        }
    }
}

/// One homeserver, one bot account.
pub struct Api {
    client: reqwest::Client,
    /// The homeserver's base URL, ending in `/`.
    base: Url,
    credentials: Credentials,
    session: Mutex<Option<Session>>,
}

impl Api {
    /// A client for `homeserver` (checked by the settings: http(s), ending in `/`); nothing
    /// is sent until the first call.
    pub fn new(homeserver: &Url, credentials: Credentials) -> Api {
        let mut base = homeserver.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        Api {
            client: client_builder().build().expect("the HTTP client builds"),
            base,
            credentials,
            session: Mutex::new(None),
        }
    }

    /// The logged-in session, logging in (or asking whose the token is) the first time.
    pub async fn session(&self) -> Result<Session, ApiError> {
        let mut held = self.session.lock().await;
        if let Some(s) = held.as_ref() {
            return Ok(s.clone());
        }
        let session = match &self.credentials {
            Credentials::Password { user, password } => self.login(user, password).await?,
            Credentials::Token { user, token } => {
                let who = self
                    .call(
                        Method::GET,
                        &["account", "whoami"],
                        None,
                        Some(token),
                        None,
                        None,
                    )
                    .await?;
                let user_id = string_field(&who, "user_id")?;
                if let Some(user) = user
                    && !same_user(user, &user_id)
                {
                    return Err(ApiError::Invalid(format!(
                        "SAYSO_MATRIX_ACCESS_TOKEN belongs to {user_id}, not SAYSO_MATRIX_USER {user}"
                    )));
                }
                Session {
                    token: token.clone(),
                    user_id,
                }
            }
        };
        *held = Some(session.clone());
        Ok(session)
    }

    async fn login(&self, user: &str, password: &str) -> Result<Session, ApiError> {
        let body = json!({
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": user.trim()},
            "password": password,
            "device_id": DEVICE_ID,
            "initial_device_display_name": "sayso",
        });
        let out = self
            .call(Method::POST, &["login"], None, None, Some(&body), None)
            .await?;
        Ok(Session {
            token: string_field(&out, "access_token")?,
            user_id: string_field(&out, "user_id")?,
        })
    }

    /// A call as the bot. A token the homeserver no longer knows (M_UNKNOWN_TOKEN) is dropped,
    /// and with a password the call is made once more after logging in again.
    pub async fn authed(
        &self,
        method: Method,
        path: &[&str],
        query: Option<&[(&str, &str)]>,
        body: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, ApiError> {
        for attempt in 0..2 {
            let session = self.session().await?;
            let result = self
                .call(
                    method.clone(),
                    path,
                    query,
                    Some(&session.token),
                    body,
                    timeout,
                )
                .await;
            match result {
                Err(e) if e.errcode() == Some("M_UNKNOWN_TOKEN") => {
                    *self.session.lock().await = None;
                    let relogin = matches!(self.credentials, Credentials::Password { .. });
                    if !relogin || attempt == 1 {
                        return Err(e);
                    }
                }
                other => return other,
            }
        }
        unreachable!("the loop returns on its second attempt")
    }

    async fn call(
        &self,
        method: Method,
        path: &[&str],
        query: Option<&[(&str, &str)]>,
        token: Option<&str>,
        body: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, ApiError> {
        let url = self.url(path, query)?;
        let mut req = self.client.request(method, url);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        if let Some(timeout) = timeout {
            req = req.timeout(timeout);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ApiError::Unreachable(unreachable_text(e)))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .map_err(|e| ApiError::Unreachable(unreachable_text(e)))?;
        let json: Option<Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return json.ok_or_else(|| {
                ApiError::Unreachable(format!("answered {status} with a body that is not JSON"))
            });
        }
        Err(refusal(status, json.as_ref()))
    }

    /// `{base}_matrix/client/v3/{path…}`, each segment percent-encoded (room and event ids
    /// carry `!`, `$`, `:`).
    fn url(&self, path: &[&str], query: Option<&[(&str, &str)]>) -> Result<Url, ApiError> {
        let mut url = self.base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|_| ApiError::Invalid("the homeserver URL cannot take a path".into()))?;
            segments.pop_if_empty().extend(["_matrix", "client", "v3"]);
            segments.extend(path);
        }
        if let Some(query) = query {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// Whether the homeserver knows `user`: `false` only when it says their profile does not
    /// exist (404). A homeserver that keeps profiles private, or cannot ask another server
    /// (403), is taken at its word later, by the room's invitation.
    pub async fn user_exists(&self, user: &str) -> Result<bool, ApiError> {
        match self
            .authed(Method::GET, &["profile", user], None, None, None)
            .await
        {
            Ok(_) => Ok(true),
            Err(ApiError::Refused { status: 404, .. }) => Ok(false),
            Err(ApiError::Refused { status: 403, .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Creates a direct room with the bot and `invitee`, and invites them. `private_chat`:
    /// the person joins by invitation only, and gets no power to remove the bot or change the
    /// room.
    pub async fn create_direct_room(&self, invitee: &str) -> Result<String, ApiError> {
        let body = json!({
            "is_direct": true,
            "invite": [invitee],
            "preset": "private_chat",
            "name": "sayso",
            "topic": "Questions for you from sayso. React or reply to a question to answer it.",
        });
        let out = self
            .authed(Method::POST, &["createRoom"], None, Some(&body), None)
            .await?;
        string_field(&out, "room_id")
    }

    /// Sends an event into `room` under `txn`; the same `txn` again returns the first event.
    pub async fn send(
        &self,
        room: &str,
        event_type: &str,
        txn: &str,
        content: &Value,
    ) -> Result<String, ApiError> {
        let out = self
            .authed(
                Method::PUT,
                &["rooms", room, "send", event_type, txn],
                None,
                Some(content),
                None,
            )
            .await?;
        string_field(&out, "event_id")
    }

    /// One `/sync`: everything after `since` (or a first sync without), waiting up to `wait`
    /// for something to arrive.
    pub async fn sync(
        &self,
        since: Option<&str>,
        filter: &str,
        wait: Duration,
    ) -> Result<Value, ApiError> {
        let wait_ms = wait.as_millis().to_string();
        let mut query = vec![("filter", filter), ("timeout", wait_ms.as_str())];
        if let Some(since) = since {
            query.push(("since", since));
        }
        self.authed(
            Method::GET,
            &["sync"],
            Some(&query),
            None,
            Some(wait + Duration::from_secs(15)),
        )
        .await
    }

    /// One page of `room`'s history going back from `from` towards `to` (a sync token):
    /// what a limited sync left out.
    pub async fn messages(
        &self,
        room: &str,
        from: &str,
        to: &str,
        filter: &str,
    ) -> Result<Value, ApiError> {
        let query = [
            ("dir", "b"),
            ("from", from),
            ("to", to),
            ("limit", "100"),
            ("filter", filter),
        ];
        self.authed(
            Method::GET,
            &["rooms", room, "messages"],
            Some(&query),
            None,
            None,
        )
        .await
    }
}

/// An error answer as an `ApiError`: the API's `errcode`/`error` when the body has them.
fn refusal(status: StatusCode, json: Option<&Value>) -> ApiError {
    let field = |name: &str| {
        json.and_then(|j| j[name].as_str())
            .map(|s| clip(s, ERROR_CHARS))
            .unwrap_or_default()
    };
    let errcode = field("errcode");
    ApiError::Refused {
        status: status.as_u16(),
        errcode: if errcode.is_empty() {
            format!(
                "(no errcode, {})",
                status.canonical_reason().unwrap_or("error")
            )
        } else {
            errcode
        },
        error: field("error"),
        retry_after_ms: json.and_then(|j| j["retry_after_ms"].as_u64()),
    }
}

fn unreachable_text(e: reqwest::Error) -> String {
    let e = e.without_url();
    if e.is_timeout() {
        "timed out".into()
    } else {
        format!("could not be reached: {}", describe(&e))
    }
}

fn string_field(v: &Value, name: &str) -> Result<String, ApiError> {
    v[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ApiError::Invalid(format!("the homeserver's answer has no {name}")))
}

/// Whether the setting `user` (a full id, or a localpart) names `user_id`.
pub fn same_user(user: &str, user_id: &str) -> bool {
    let user = user.trim();
    if user.starts_with('@') {
        user == user_id
    } else {
        user_id
            .strip_prefix('@')
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(local, _)| local == user)
    }
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, errcode: &str) -> ApiError {
        ApiError::Refused {
            status,
            errcode: errcode.into(),
            error: "said why".into(),
            retry_after_ms: None,
        }
    }

    #[test]
    fn rate_limits_and_server_errors_are_retried_refusals_fail_by_name() {
        for (status, code) in [(429, "M_LIMIT_EXCEEDED"), (500, "M_UNKNOWN"), (502, "")] {
            assert!(
                matches!(refused(status, code).delivery(), Delivery::Retry(_)),
                "{status}"
            );
        }
        let Delivery::Failed(why) = refused(403, "M_FORBIDDEN").delivery() else {
            panic!("a refusal fails");
        };
        assert_eq!(
            why,
            "the Matrix homeserver answered 403 M_FORBIDDEN: said why"
        );
        assert!(matches!(
            ApiError::Unreachable("x".into()).delivery(),
            Delivery::Retry(_)
        ));
    }

    #[test]
    fn an_error_body_is_read_for_its_code_and_wait() {
        let body =
            json!({"errcode": "M_LIMIT_EXCEEDED", "error": "Too many", "retry_after_ms": 1500});
        let e = refusal(StatusCode::TOO_MANY_REQUESTS, Some(&body));
        assert_eq!(
            e.to_string(),
            "the Matrix homeserver answered 429 M_LIMIT_EXCEEDED: Too many (retry after 1500 ms)"
        );
        let e = refusal(StatusCode::BAD_GATEWAY, None);
        assert_eq!(e.errcode(), Some("(no errcode, Bad Gateway)"));
    }

    #[test]
    fn paths_are_encoded_under_the_base() {
        let api = Api::new(
            &Url::parse("https://matrix.example/sub").unwrap(),
            Credentials::Token {
                user: None,
                token: "t".into(),
            },
        );
        let url = api
            .url(&["rooms", "!a:b.c", "send", "m.room.message", "x/y"], None)
            .unwrap();
        assert_eq!(
            url.as_str(),
            "https://matrix.example/sub/_matrix/client/v3/rooms/!a:b.c/send/m.room.message/x%2Fy"
        );
    }

    #[test]
    fn a_user_setting_may_be_a_localpart() {
        assert!(same_user("sayso", "@sayso:m.example"));
        assert!(same_user("@sayso:m.example", "@sayso:m.example"));
        assert!(!same_user("say", "@sayso:m.example"));
        assert!(!same_user("@sayso:other.example", "@sayso:m.example"));
    }
}
