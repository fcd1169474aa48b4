//! Rate limiting (tower_governor): per API key under `/v1`, per client address elsewhere
//! (the person's pages, `/mcp`, health checks). Every request counts once, however long it
//! stays open, so parked awaits and event streams cost no more than quick calls. A refused
//! request gets `429 rate_limited` in the JSON error shape, with `Retry-After`.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::http::header::AUTHORIZATION;
use axum::response::IntoResponse;
use sha2::{Digest, Sha256};
use tower::layer::util::Identity;
use tower::util::Either;
use tower_governor::GovernorError;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::key_extractor::KeyExtractor;

use super::error::ApiError;
use crate::service::RateLimit;

type NoOp = governor::middleware::NoOpMiddleware<governor::clock::QuantaInstant>;

/// How often idle keys are forgotten, so the limiter's memory stays bounded.
const FORGET_EVERY: Duration = Duration::from_secs(60);

/// Whom a request is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Client {
    /// The first 16 bytes of the SHA-256 of the bearer token.
    ApiKey([u8; 16]),
    /// The peer's address; IPv6 by its /64, which one host usually has whole.
    Address(IpAddr),
    /// A request with neither (called in-process, without a connection).
    Unknown,
}

/// Reads the bearer token under `/v1`, else the client address the accept loop recorded.
#[derive(Debug, Clone, Copy)]
pub struct ClientKey;

impl KeyExtractor for ClientKey {
    type Key = Client;

    fn extract<T>(&self, req: &Request<T>) -> Result<Client, GovernorError> {
        Ok(client_of(req))
    }
}

fn client_of<T>(req: &Request<T>) -> Client {
    if req.uri().path().starts_with("/v1/") {
        let token = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(token) = token {
            let digest = Sha256::digest(token.as_bytes());
            let mut key = [0u8; 16];
            key.copy_from_slice(&digest[..16]);
            return Client::ApiKey(key);
        }
    }
    match req.extensions().get::<ConnectInfo<SocketAddr>>() {
        Some(ConnectInfo(peer)) => Client::Address(match peer.ip() {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let s = v6.segments();
                    IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
                }
            },
            v4 => v4,
        }),
        None => Client::Unknown,
    }
}

/// The layer for `limit`, or a layer that does nothing when it is off.
pub fn layer(
    limit: RateLimit,
) -> Either<tower_governor::GovernorLayer<ClientKey, NoOp, axum::body::Body>, Identity> {
    if limit.is_off() {
        return Either::Right(Identity::new());
    }
    // `period` is the time to earn back one request: a second divided by the rate.
    let period = Duration::from_nanos(1_000_000_000 / u64::from(limit.per_second));
    let Some(config) = GovernorConfigBuilder::default()
        .key_extractor(ClientKey)
        .period(period)
        .burst_size(limit.burst.max(1))
        .finish()
    else {
        return Either::Right(Identity::new());
    };
    let config = Arc::new(config);
    forget_idle_clients(&config);
    Either::Left(tower_governor::GovernorLayer::new(config).error_handler(
        |e: GovernorError| match e {
            // The wait is given in whole seconds, rounded down: round up instead.
            GovernorError::TooManyRequests { wait_time, .. } => {
                ApiError::rate_limited(wait_time + 1).into_response()
            }
            other => {
                tracing::error!(error = %other, "rate limiter failed");
                ApiError::rate_limited(1).into_response()
            }
        },
    ))
}

/// Forgets keys that are back to a full burst, every minute, for as long as the layer lives.
fn forget_idle_clients(config: &Arc<tower_governor::governor::GovernorConfig<ClientKey, NoOp>>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let limiter = Arc::downgrade(config.limiter());
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(FORGET_EVERY).await;
            match limiter.upgrade() {
                Some(limiter) => {
                    limiter.retain_recent();
                    limiter.shrink_to_fit();
                }
                None => return,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, auth: Option<&str>, peer: Option<&str>) -> Request<()> {
        let mut b = Request::builder().uri(path);
        if let Some(a) = auth {
            b = b.header(AUTHORIZATION, a);
        }
        let mut req = b.body(()).unwrap();
        if let Some(p) = peer {
            req.extensions_mut()
                .insert(ConnectInfo(p.parse::<SocketAddr>().unwrap()));
        }
        req
    }

    #[test]
    fn api_requests_count_per_key_and_the_rest_per_address() {
        let a = client_of(&request(
            "/v1/decisions",
            Some("Bearer sk_a"),
            Some("1.2.3.4:5"),
        ));
        let b = client_of(&request(
            "/v1/decisions",
            Some("Bearer sk_b"),
            Some("1.2.3.4:5"),
        ));
        assert!(matches!(a, Client::ApiKey(_)));
        assert_ne!(a, b);
        let page = client_of(&request("/d/tok", Some("Bearer sk_a"), Some("1.2.3.4:6")));
        assert_eq!(page, Client::Address("1.2.3.4".parse().unwrap()));
        let anonymous = client_of(&request("/v1/usage", None, Some("1.2.3.4:7")));
        assert_eq!(anonymous, page);
        assert_eq!(client_of(&request("/healthz", None, None)), Client::Unknown);
    }

    #[test]
    fn an_ipv6_host_counts_by_its_64() {
        let a = client_of(&request("/", None, Some("[2001:db8:1:2::1]:9")));
        let b = client_of(&request("/", None, Some("[2001:db8:1:2:ffff::9]:9")));
        assert_eq!(a, b);
    }
}
