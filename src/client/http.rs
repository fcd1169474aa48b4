//! A small HTTP client for the agent API that retries what is worth retrying: a server
//! that cannot be reached, a dropped connection, `502`/`503`/`504`, and a short `429`.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode, header};
use serde_json::Value;
use tokio::time::Instant;
use url::Url;

use super::flags::usage;

/// The longest pause between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The first pause after a failed attempt.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// A `Retry-After` longer than this (a daily quota) is not waited out.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How long a connection may take to open: a server that is up answers in milliseconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a server never reached yet is tried, the last attempt's connection included: a
/// wrong URL is said within 3 s, while a server that answered once and then went away is
/// waited for as long as the caller allows.
const NEVER_REACHED_WINDOW: Duration = Duration::from_millis(2900);

/// Why a request did not give a usable answer.
#[derive(Debug)]
pub enum Failure {
    /// The server answered with an error; its `error` object, read.
    Refused {
        status: StatusCode,
        code: String,
        message: String,
        details: Vec<(String, String)>,
    },
    /// No answer: the server could not be reached, or the connection broke.
    Unreachable(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Refused {
                status,
                code,
                message,
                details,
            } => {
                write!(f, "{message} ({} {code})", status.as_u16())?;
                for (path, detail) in details {
                    let line = if path.is_empty() {
                        detail.clone()
                    } else {
                        format!("{path}: {detail}")
                    };
                    // A single problem is usually the message itself.
                    if details.len() > 1 || line != *message {
                        write!(f, "\n  {line}")?;
                    }
                }
                Ok(())
            }
            Failure::Unreachable(why) => write!(f, "cannot reach the sayso server: {why}"),
        }
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// The same refusal with each detail's API field put in the words the user typed (a
    /// flag), by `name`; the message too when it is that one detail.
    pub fn renamed(self, name: impl Fn(&str) -> String) -> Failure {
        let Failure::Refused {
            status,
            code,
            mut message,
            details,
        } = self
        else {
            return self;
        };
        if let [(path, detail)] = details.as_slice()
            && !path.is_empty()
            && message == format!("{path}: {detail}")
        {
            message = format!("{}: {detail}", name(path));
        }
        let details = details
            .into_iter()
            .map(|(path, detail)| {
                let path = if path.is_empty() { path } else { name(&path) };
                (path, detail)
            })
            .collect();
        Failure::Refused {
            status,
            code,
            message,
            details,
        }
    }
}

/// One sayso server, and the key of one inbox on it.
#[derive(Debug, Clone)]
pub struct Api {
    base: Url,
    key: String,
    http: reqwest::Client,
    /// No progress lines on stderr (the permission hook prints one line of its own).
    quiet: bool,
    /// Whether the server has answered anything yet, over this client's whole life.
    reached: Arc<AtomicBool>,
}

/// The API key from `--key` / `SAYSO_KEY`, or the error that names both.
pub fn required_key(key: Option<&str>) -> anyhow::Result<String> {
    key.map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            usage(
                "no API key: pass --key sk_… or set SAYSO_KEY (`sayso key create` where the \
                 server runs makes one)",
            )
        })
}

impl Api {
    /// Checks the server URL and the key; builds the connection pool. Each mistake in either
    /// is a usage error (exit 64), said before anything is sent.
    pub fn new(server: &str, key: Option<&str>) -> anyhow::Result<Api> {
        let key = required_key(key)?;
        let base = Url::parse(server.trim())
            .map_err(|e| usage(format!("--server / SAYSO_URL {server:?} is not a URL: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(usage(format!(
                "--server / SAYSO_URL must be an http:// or https:// URL, not {server:?}"
            )));
        }
        // A person's link is a secret: said by what it is, never echoed.
        if let Some((what, address)) = super::hints::page_link(&base) {
            return Err(usage(format!(
                "--server / SAYSO_URL: that is {what}; SAYSO_URL is the server's address: \
                 {address}"
            )));
        }
        if base
            .path_segments()
            .and_then(|mut s| s.rfind(|s| !s.is_empty()))
            == Some("v1")
        {
            return Err(usage(format!(
                "--server / SAYSO_URL {server:?} ends in /v1: give the server's base URL, as the \
                 person's links start, without /v1 (the client adds it)"
            )));
        }
        // Normally done by main; again here so the library can be used on its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("sayso-cli/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Api {
            base,
            key,
            http,
            quiet: false,
            reached: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The server's base URL and the key, for a helper process that acts for this client
    /// (the hook's guard, which withdraws its question if the hook is killed).
    pub fn credentials(&self) -> (&str, &str) {
        (self.base.as_str(), &self.key)
    }

    /// The same client, without the "retrying" and "reached the server again" lines on stderr.
    pub fn quiet(mut self) -> Api {
        self.quiet = true;
        self
    }

    /// The URL of an API path made of `segments` (each escaped), e.g. `["v1", "decisions", id]`.
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        {
            let mut path = url.path_segments_mut().expect("checked in new");
            path.pop_if_empty();
            path.extend(segments);
        }
        url
    }

    /// A request with the key, waiting at most `timeout` for the whole answer.
    pub fn request(&self, method: Method, url: Url, timeout: Duration) -> RequestBuilder {
        self.http
            .request(method, url)
            .bearer_auth(&self.key)
            .header(header::ACCEPT, "application/json")
            .timeout(timeout)
    }

    /// A request with the key, given no longer than what is left until `give_up` (each
    /// retry its own remainder).
    pub fn request_until(&self, method: Method, url: Url, give_up: Instant) -> RequestBuilder {
        self.request(
            method,
            url,
            give_up.saturating_duration_since(Instant::now()),
        )
    }

    /// Sends the request `make` builds, again after each passing failure, until it gets an
    /// answer or `give_up_at` comes; returns the JSON body of a 2xx answer.
    pub async fn send(
        &self,
        make: impl Fn() -> RequestBuilder,
        give_up_at: Instant,
    ) -> Result<Value, Failure> {
        let mut backoff = FIRST_BACKOFF;
        let mut failed = false;
        let started = Instant::now();
        loop {
            let (failure, pause) = match attempt(make(), &self.reached).await {
                Attempt::Done(result) => {
                    if failed && result.is_ok() && !self.quiet {
                        eprintln!("sayso: reached the server again");
                    }
                    return result;
                }
                Attempt::Retry(failure, at_least) => (failure, backoff.max(at_least)),
            };
            let pause = jitter(pause);
            // A server never reached is most likely a wrong URL: say so now, with a hint.
            let never_reached = !self.reached.load(Ordering::Relaxed);
            let give_up_at = if never_reached {
                // No attempt is begun that could not connect within the window.
                give_up_at.min(started + NEVER_REACHED_WINDOW - CONNECT_TIMEOUT)
            } else {
                give_up_at
            };
            if Instant::now() + pause >= give_up_at {
                return Err(match failure {
                    Failure::Unreachable(why) if never_reached => Failure::Unreachable(format!(
                        "{why}\n  {}",
                        super::hints::unreachable_hint(&self.base, &why)
                    )),
                    failure => failure,
                });
            }
            if !failed && !self.quiet && !never_reached {
                // Say why it is quiet; the retries themselves are not worth a line each.
                let left = give_up_at
                    .saturating_duration_since(Instant::now())
                    .as_secs();
                eprintln!("sayso: {failure}; retrying for up to {left} s");
                failed = true;
            }
            tokio::time::sleep(pause).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

enum Attempt {
    Done(Result<Value, Failure>),
    /// Worth another try, after at least the given pause.
    Retry(Failure, Duration),
}

async fn attempt(req: RequestBuilder, reached: &AtomicBool) -> Attempt {
    let resp = match req.send().await {
        Ok(resp) => {
            reached.store(true, Ordering::Relaxed);
            resp
        }
        Err(e) if e.is_builder() => {
            return Attempt::Done(Err(Failure::Unreachable(describe(&e))));
        }
        Err(e) => return Attempt::Retry(Failure::Unreachable(describe(&e)), Duration::ZERO),
    };
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = match resp.bytes().await {
        Ok(body) => body,
        // The connection broke while the answer was coming: nothing usable arrived.
        Err(e) => return Attempt::Retry(Failure::Unreachable(describe(&e)), Duration::ZERO),
    };
    if status.is_success() {
        return Attempt::Done(serde_json::from_slice(&body).map_err(|e| {
            Failure::Unreachable(format!(
                "the server's answer ({status}) is not JSON: {e}; is --server a sayso server?"
            ))
        }));
    }
    let failure = refused(status, &body);
    let transient = matches!(
        status,
        StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
    );
    match (status, retry_after) {
        _ if transient => Attempt::Retry(failure, retry_after.unwrap_or_default()),
        (StatusCode::TOO_MANY_REQUESTS, Some(after)) if after <= MAX_RETRY_AFTER => {
            Attempt::Retry(failure, after)
        }
        _ => Attempt::Done(Err(failure)),
    }
}

/// Reads the error shape of docs/API.md; a body of another shape (a proxy's page) is
/// reported by its status alone.
fn refused(status: StatusCode, body: &[u8]) -> Failure {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let error = &v["error"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let message = match error["message"].as_str() {
        Some(m) => m.to_string(),
        None => format!(
            "the server answered {}",
            status.canonical_reason().unwrap_or("with an error")
        ),
    };
    let details = error["details"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|d| (text(&d["path"]), text(&d["message"])))
                .collect()
        })
        .unwrap_or_default();
    Failure::Refused {
        status,
        code: error["code"].as_str().unwrap_or("error").to_string(),
        message,
        details,
    }
}

/// reqwest's message and its causes, which say what actually happened ("Connection refused").
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
        source = cause.source();
    }
    text
}

/// Spreads retries of many clients apart: the pause, give or take a fifth.
fn jitter(pause: Duration) -> Duration {
    if pause.is_zero() {
        return pause;
    }
    pause.mul_f64(rand::random_range(0.8..1.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_shape_is_read_with_its_details() {
        let body = br#"{"error":{"code":"validation_failed","message":"2 problems",
            "details":[{"path":"options","message":"need 2"},{"path":"","message":"whole"}]}}"#;
        let f = refused(StatusCode::UNPROCESSABLE_ENTITY, body);
        assert_eq!(
            f.to_string(),
            "2 problems (422 validation_failed)\n  options: need 2\n  whole"
        );
        let body = br#"{"error":{"code":"validation_failed","message":"options: need 2",
            "details":[{"path":"options","message":"need 2"}]}}"#;
        let f = refused(StatusCode::UNPROCESSABLE_ENTITY, body);
        assert_eq!(f.to_string(), "options: need 2 (422 validation_failed)");
        let f = refused(StatusCode::BAD_GATEWAY, b"<html>");
        assert_eq!(f.to_string(), "the server answered Bad Gateway (502 error)");
    }

    #[test]
    fn a_missing_key_or_a_bad_server_url_is_refused_before_any_request() {
        let e = Api::new("http://127.0.0.1:8080", None).unwrap_err();
        assert!(e.to_string().contains("SAYSO_KEY"));
        assert!(Api::new("http://127.0.0.1:8080", Some("  ")).is_err());
        assert!(Api::new("ftp://x", Some("sk_1")).is_err());
        assert!(Api::new("not a url", Some("sk_1")).is_err());
    }

    #[test]
    fn ids_are_escaped_into_one_path_segment() {
        let api = Api::new("http://h:1/base/", Some("sk_1")).unwrap();
        assert_eq!(
            api.url(&["v1", "decisions", "a/b?c"]).as_str(),
            "http://h:1/base/v1/decisions/a%2Fb%3Fc"
        );
    }
}
