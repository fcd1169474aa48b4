//! What the HTTP channels (webhooks, ntfy, Web Push, the chats) share: one way to build a client,
//! and one reading of the answer a receiver gives.

use std::error::Error;
use std::sync::Once;
use std::time::Duration;

use reqwest::StatusCode;

use super::Delivery;

/// `sayso/<version>`, sent as `User-Agent`.
pub const USER_AGENT: &str = concat!("sayso/", env!("CARGO_PKG_VERSION"));

/// How long one attempt may take, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A client builder with the channels' settings: a 10 s timeout, no redirects followed (a
/// redirect could lead a checked request somewhere unchecked), the sayso user agent.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT)
}

/// The build carries only ring; reqwest panics on its first TLS client unless a provider is
/// installed. `main` installs it too; this makes the channels safe on their own.
fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means some provider is already installed, which is all that is needed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// How an HTTP answer ends an attempt: 2xx sent; 410 stops for good; 408, 429 and 5xx are
/// worth another try; anything else (other 4xx, a redirect) will not change by retrying.
pub fn delivery_for_status(target: &str, status: StatusCode) -> Delivery {
    let said = format!("{target} answered {status}");
    if status.is_success() {
        Delivery::Sent(Some(said))
    } else if status == StatusCode::GONE {
        Delivery::Failed(format!("{said}: stopped"))
    } else if status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
    {
        Delivery::Retry(said)
    } else if status.is_redirection() {
        Delivery::Failed(format!("{said}; redirects are not followed"))
    } else {
        Delivery::Failed(said)
    }
}

/// A request that got no HTTP answer (connection refused, timeout, TLS error) is retried. The
/// URL is left out of the text: it may carry a token.
pub fn delivery_for_error(target: &str, error: reqwest::Error) -> Delivery {
    let error = error.without_url();
    if error.is_builder() {
        return Delivery::Failed(format!("{target}: {}", describe(&error)));
    }
    if error.is_timeout() {
        return Delivery::Retry(format!("{target} timed out after {} s", TIMEOUT.as_secs()));
    }
    Delivery::Retry(format!(
        "{target} could not be reached: {}",
        describe(&error)
    ))
}

/// An error and its causes on one line.
pub fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> Delivery {
        delivery_for_status("receiver", StatusCode::from_u16(code).unwrap())
    }

    #[test]
    fn success_is_sent() {
        assert!(matches!(status(200), Delivery::Sent(_)));
        assert!(matches!(status(204), Delivery::Sent(_)));
    }

    #[test]
    fn gone_stops() {
        assert_eq!(
            status(410),
            Delivery::Failed("receiver answered 410 Gone: stopped".into())
        );
    }

    #[test]
    fn timeouts_limits_and_server_errors_are_retried() {
        for code in [408, 429, 500, 502, 503, 504] {
            assert!(matches!(status(code), Delivery::Retry(_)), "{code}");
        }
    }

    #[test]
    fn other_client_errors_and_redirects_fail() {
        for code in [301, 302, 400, 401, 403, 404, 413, 422] {
            assert!(matches!(status(code), Delivery::Failed(_)), "{code}");
        }
    }
}
