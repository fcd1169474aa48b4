//! Rate limiting (tower_governor): per API key under `/v1`, per client address elsewhere
//! (the person's pages, `/mcp`, health checks). Every request counts once, however long it
//! stays open, so parked awaits and event streams cost no more than quick calls. A refused
//! request gets `429 rate_limited` in the JSON error shape, with `Retry-After`.
//!
//! A key that turns out wrong (`401`) also counts against the address that sent it: counted
//! only per key, a guesser who sends a new key with every request would never be limited.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{Request, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tower_governor::GovernorError;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::key_extractor::KeyExtractor;

use crate::metrics::{Limit, Metrics};
use crate::web::client_addr::ClientAddr;
use crate::web::error::ApiError;
use crate::web::extract::bearer;

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
        let token = bearer(req.headers()).filter(|t| !t.is_empty());
        if let Some(token) = token {
            let digest = Sha256::digest(token.as_bytes());
            let mut key = [0u8; 16];
            key.copy_from_slice(&digest[..16]);
            return Client::ApiKey(key);
        }
    }
    match address_of(req) {
        Some(address) => Client::Address(address),
        None => Client::Unknown,
    }
}

/// The peer's address as the limiter counts it: IPv6 by its /64, which one host usually
/// has whole.
fn address_of<T>(req: &Request<T>) -> Option<IpAddr> {
    let client = match req.extensions().get::<ClientAddr>() {
        Some(ClientAddr(client)) => *client,
        None => req.extensions().get::<ConnectInfo<SocketAddr>>()?.0.ip(),
    };
    Some(match client {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    })
}

/// The wrong API keys each address sent, as a generic cell rate: `burst` of them at once,
/// then one per `period`.
#[derive(Clone)]
struct WrongKeys {
    period: Duration,
    /// How far ahead of now an address's theoretical arrival time may run.
    tolerance: Duration,
    arrivals: Arc<Mutex<HashMap<IpAddr, Instant>>>,
}

impl WrongKeys {
    fn new(period: Duration, burst: u32) -> Self {
        WrongKeys {
            period,
            tolerance: period * burst.saturating_sub(1),
            arrivals: Arc::default(),
        }
    }

    /// The seconds `address` must wait when it has used up its wrong keys, else `None`.
    fn refused(&self, address: IpAddr, now: Instant) -> Option<u64> {
        let arrivals = self.arrivals.lock().unwrap_or_else(|e| e.into_inner());
        let wait = arrivals
            .get(&address)?
            .checked_duration_since(now + self.tolerance)
            .filter(|wait| !wait.is_zero())?;
        Some((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
    }

    /// Counts one wrong key from `address`.
    fn count(&self, address: IpAddr, now: Instant) {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|e| e.into_inner());
        let tat = arrivals.entry(address).or_insert(now);
        *tat = (*tat).max(now) + self.period;
    }

    /// Forgets the addresses that are back to a full burst.
    fn forget_idle(&self, now: Instant) {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|e| e.into_inner());
        arrivals.retain(|_, tat| *tat > now);
        arrivals.shrink_to_fit();
    }
}

/// Refuses a request with an API key from an address that has sent too many wrong keys,
/// before the key is looked up; counts the request's key when it turns out wrong.
async fn limit_wrong_keys(
    State(wrong): State<WrongKeys>,
    req: Request<Body>,
    next: Next,
) -> Response {
    let address = match client_of(&req) {
        Client::ApiKey(_) => address_of(&req),
        Client::Address(_) | Client::Unknown => None,
    };
    let Some(address) = address else {
        return next.run(req).await;
    };
    if let Some(wait) = wrong.refused(address, Instant::now()) {
        return refused(wait, Some(Limit::WrongKey));
    }
    let resp = next.run(req).await;
    if resp.status() == StatusCode::UNAUTHORIZED {
        wrong.count(address, Instant::now());
    }
    resp
}

/// A rate limit: `per_second` requests on average, with bursts of up to `burst` at once.
/// `per_second == 0` turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

impl RateLimit {
    /// Generous enough for any agent's ordinary traffic and a person's pages; it stops loops.
    pub const DEFAULT: RateLimit = RateLimit {
        per_second: 100,
        burst: 400,
    };
    /// No limit.
    pub const OFF: RateLimit = RateLimit {
        per_second: 0,
        burst: 0,
    };

    pub fn is_off(&self) -> bool {
        self.per_second == 0
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Marks a response as a rate limit's refusal, for the metrics: which limit, where the
/// refusing layer knows it (the governor does not say whose bucket ran dry).
#[derive(Debug, Clone, Copy)]
struct Refused(Option<Limit>);

fn refused(wait: u64, limit: Option<Limit>) -> Response {
    let mut resp = ApiError::rate_limited(wait).into_response();
    resp.extensions_mut().insert(Refused(limit));
    resp
}

/// Counts the refusals of the layers inside it, by limit.
async fn count_refusals(
    State(metrics): State<Metrics>,
    req: Request<Body>,
    next: Next,
) -> Response {
    let bucket = match client_of(&req) {
        Client::ApiKey(_) => Limit::Key,
        Client::Address(_) | Client::Unknown => Limit::Address,
    };
    let resp = next.run(req).await;
    if let Some(Refused(limit)) = resp.extensions().get::<Refused>() {
        metrics.rate_limited(limit.unwrap_or(bucket));
    }
    resp
}

/// `router` behind the rate limit `limit`, its refusals counted in `metrics`; unchanged when
/// the limit is off.
pub fn limit<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    limit: RateLimit,
    metrics: Metrics,
) -> Router<S> {
    if limit.is_off() {
        return router;
    }
    // `period` is the time to earn back one request: a second divided by the rate.
    let period = Duration::from_nanos(1_000_000_000 / u64::from(limit.per_second));
    let Some(config) = GovernorConfigBuilder::default()
        .key_extractor(ClientKey)
        .period(period)
        .burst_size(limit.burst.max(1))
        .finish()
    else {
        return router;
    };
    let config = Arc::new(config);
    let wrong_keys = WrongKeys::new(period, limit.burst.max(1));
    forget_idle_clients(&config, wrong_keys.clone());
    let governor = tower_governor::GovernorLayer::<_, _, Body>::new(config).error_handler(
        |e: GovernorError| match e {
            // The wait is given in whole seconds, rounded down: round up instead.
            GovernorError::TooManyRequests { wait_time, .. } => refused(wait_time + 1, None),
            other => {
                tracing::error!(error = %other, "rate limiter failed");
                refused(1, None)
            }
        },
    );
    router
        .layer(from_fn_with_state(wrong_keys, limit_wrong_keys))
        .layer(governor)
        .layer(from_fn_with_state(metrics, count_refusals))
}

/// Forgets keys that are back to a full burst, every minute, for as long as the layer lives.
fn forget_idle_clients(
    config: &Arc<tower_governor::governor::GovernorConfig<ClientKey, NoOp>>,
    wrong_keys: WrongKeys,
) {
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
                    wrong_keys.forget_idle(Instant::now());
                }
                None => return,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use axum::http::header::AUTHORIZATION;

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
    fn an_address_runs_out_of_wrong_keys_and_earns_them_back() {
        let wrong = WrongKeys::new(Duration::from_secs(1), 3);
        let address: IpAddr = "1.2.3.4".parse().unwrap();
        let other: IpAddr = "1.2.3.5".parse().unwrap();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(wrong.refused(address, t0), None);
            wrong.count(address, t0);
        }
        assert_eq!(wrong.refused(address, t0), Some(1));
        assert_eq!(wrong.refused(other, t0), None);
        let later = t0 + Duration::from_millis(1500);
        assert_eq!(wrong.refused(address, later), None);
        wrong.count(address, later);
        assert!(wrong.refused(address, later).is_some());
        wrong.forget_idle(t0 + Duration::from_secs(10));
        assert!(wrong.arrivals.lock().unwrap().is_empty());
    }

    #[test]
    fn an_ipv6_host_counts_by_its_64() {
        let a = client_of(&request("/", None, Some("[2001:db8:1:2::1]:9")));
        let b = client_of(&request("/", None, Some("[2001:db8:1:2:ffff::9]:9")));
        assert_eq!(a, b);
    }
}
