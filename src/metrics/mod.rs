//! What sayso counts about itself, for `GET /metrics`: one registry per service (tests run
//! several in a process, so nothing is global), written in the OpenMetrics text format that
//! Prometheus scrapes. The layers that see an event count it here (HTTP requests, decisions,
//! awaits, deliveries, refusals); what is a state rather than an event (pending decisions,
//! outbox depth, database pool) is read when scraped.
//!
//! Labels take their values from closed sets only (route templates, kinds, statuses,
//! channels), never from paths or ids, so the number of series stays small.
//!
//! Uses `domain`'s words only (docs/ARCHITECTURE.md, checked by tests/layers.rs).

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::domain::outbox::{Channel, MessageStatus, Route};
use crate::domain::{Kind, Status};

/// Upper bounds of the request-latency buckets, in seconds: from a cached read (a
/// millisecond) to a long-poll held to its end (ten minutes).
const LATENCY_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0,
    600.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    /// The route template (`/v1/decisions/{id}`), or `unmatched`.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    pub route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResolvedLabels {
    kind: &'static str,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabels {
    channel: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    channel: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: &'static str,
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolMaxLabels {
    pool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

/// Which rate limit refused a request.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// Requests per API key (under `/v1`).
    Key,
    /// Requests per client address (everything else).
    Address,
    /// Wrong API keys per client address.
    WrongKey,
}

impl Limit {
    fn as_str(self) -> &'static str {
        match self {
            Limit::Key => "key",
            Limit::Address => "address",
            Limit::WrongKey => "wrong_key",
        }
    }
}

/// One database connection pool as it stands.
#[derive(Debug, Clone, Copy)]
pub struct PoolState {
    /// `main`, or `read`/`write` where a store keeps two.
    pub name: &'static str,
    pub idle: u32,
    pub in_use: u32,
    pub max: u32,
}

/// The states read at scrape time.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub pending: Vec<(Kind, i64)>,
    /// Messages waiting for an attempt, by where they go.
    pub outbox_pending: Vec<(Route, i64)>,
    pub pools: Vec<PoolState>,
}

/// The service's metrics. Cheap to clone: every metric is shared.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    streams: Family<RouteLabels, Gauge>,
    created: Family<KindLabels, Counter>,
    resolved: Family<ResolvedLabels, Counter>,
    pending: Family<KindLabels, Gauge>,
    parked: Gauge,
    outbox_pending: Family<ChannelLabels, Gauge>,
    attempts: Family<AttemptLabels, Counter>,
    pool: Family<PoolLabels, Gauge>,
    pool_max: Family<PoolMaxLabels, Gauge>,
    database_up: Gauge,
    refused: Family<LimitLabels, Counter>,
    resident: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let latency: Family<RouteLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        let m = Metrics {
            registry: Arc::new(Registry::default()),
            requests: Family::default(),
            latency,
            streams: Family::default(),
            created: Family::default(),
            resolved: Family::default(),
            pending: Family::default(),
            parked: Gauge::default(),
            outbox_pending: Family::default(),
            attempts: Family::default(),
            pool: Family::default(),
            pool_max: Family::default(),
            database_up: Gauge::default(),
            refused: Family::default(),
            resident: Gauge::default(),
        };
        let mut r = Registry::with_prefix("sayso");
        r.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            m.requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "Time from a request's arrival to its response head, by method and route template \
             (a long-poll's includes its wait)",
            m.latency.clone(),
        );
        r.register(
            "http_streams_open",
            "Streamed responses open (SSE event streams, MCP streams), by route template",
            m.streams.clone(),
        );
        r.register(
            "decisions_created",
            "Decisions created on this replica, by kind (idempotent replays not counted)",
            m.created.clone(),
        );
        r.register(
            "decisions_resolved",
            "Decisions resolved on this replica, by kind and final status",
            m.resolved.clone(),
        );
        r.register(
            "decisions_pending",
            "Decisions waiting for a person, by kind (all replicas)",
            m.pending.clone(),
        );
        r.register(
            "awaits_parked",
            "Awaits (HTTP long-polls and MCP await_decision calls) parked on this replica",
            m.parked.clone(),
        );
        r.register(
            "outbox_pending",
            "Messages waiting for their next attempt, by channel (all replicas)",
            m.outbox_pending.clone(),
        );
        r.register(
            "outbox_attempts",
            "Delivery attempts finished on this replica, by channel and result \
             (sent, retry, failed, skipped)",
            m.attempts.clone(),
        );
        r.register(
            "db_connections",
            "Database connections by pool and state (idle, in_use)",
            m.pool.clone(),
        );
        r.register(
            "db_connections_max",
            "The most connections each pool opens",
            m.pool_max.clone(),
        );
        r.register(
            "database_up",
            "1 when the database answered this scrape's reads, else 0 (the gauges read from it \
             then keep their last values)",
            m.database_up.clone(),
        );
        r.register(
            "rate_limited",
            "Requests refused by a rate limit (key, address, wrong_key)",
            m.refused.clone(),
        );
        r.register(
            "resident_memory_bytes",
            "The process's resident memory (RSS) at this scrape, from /proc/self/status; 0 \
             where the system does not tell",
            m.resident.clone(),
        );
        Metrics {
            registry: Arc::new(r),
            ..m
        }
    }

    /// One HTTP request answered.
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let route = RouteLabels {
            method: method.to_string(),
            route: route.to_string(),
        };
        self.latency
            .get_or_create(&route)
            .observe(took.as_secs_f64());
        self.requests
            .get_or_create(&RequestLabels {
                method: route.method,
                route: route.route,
                status,
            })
            .inc();
    }

    /// A streamed response opened; it counts as open until the guard drops.
    pub fn stream_opened(&self, method: &str, route: &str) -> OpenGuard {
        let gauge = self.streams.get_or_create_owned(&RouteLabels {
            method: method.to_string(),
            route: route.to_string(),
        });
        OpenGuard::open(gauge)
    }

    pub fn decision_created(&self, kind: Kind) {
        self.created
            .get_or_create(&KindLabels {
                kind: kind.as_str(),
            })
            .inc();
    }

    pub fn decision_resolved(&self, kind: Kind, status: Status) {
        self.resolved
            .get_or_create(&ResolvedLabels {
                kind: kind.as_str(),
                status: status.as_str(),
            })
            .inc();
    }

    /// An await parked; it counts until the guard drops.
    pub fn await_parked(&self) -> OpenGuard {
        OpenGuard::open(self.parked.clone())
    }

    /// A delivery attempt ended with `status` (`Pending` means it will be retried).
    pub fn attempt(&self, channel: Channel, status: MessageStatus) {
        let result = match status {
            MessageStatus::Pending => "retry",
            MessageStatus::Sent => "sent",
            MessageStatus::Failed => "failed",
            MessageStatus::Skipped => "skipped",
        };
        self.attempts
            .get_or_create(&AttemptLabels {
                channel: channel.as_str(),
                result,
            })
            .inc();
    }

    pub fn rate_limited(&self, limit: Limit) {
        self.refused
            .get_or_create(&LimitLabels {
                limit: limit.as_str(),
            })
            .inc();
    }

    /// The scrape: the states in `now` (`None` when the database did not answer), then
    /// every metric in the OpenMetrics text format.
    pub fn render(&self, now: Option<&Snapshot>) -> String {
        self.database_up.set(i64::from(now.is_some()));
        self.resident.set(resident_bytes().unwrap_or(0));
        if let Some(now) = now {
            self.set_states(now);
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    fn set_states(&self, now: &Snapshot) {
        // Every kind and channel is written, so a count that fell to zero shows as zero
        // rather than keeping its last value.
        for kind in Kind::ALL {
            let n = now
                .pending
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(0, |p| p.1);
            self.pending
                .get_or_create(&KindLabels {
                    kind: kind.as_str(),
                })
                .set(n);
        }
        for route in Route::ALL {
            let n = now
                .outbox_pending
                .iter()
                .find(|(r, _)| *r == route)
                .map_or(0, |p| p.1);
            let channel = match route.channel() {
                Some(channel) => channel.as_str(),
                // A resolution or reminder not yet expanded into its channels.
                None => "fan_out",
            };
            self.outbox_pending
                .get_or_create(&ChannelLabels { channel })
                .set(n);
        }
        for p in &now.pools {
            for (state, n) in [("idle", p.idle), ("in_use", p.in_use)] {
                self.pool
                    .get_or_create(&PoolLabels {
                        pool: p.name,
                        state,
                    })
                    .set(i64::from(n));
            }
            self.pool_max
                .get_or_create(&PoolMaxLabels { pool: p.name })
                .set(i64::from(p.max));
        }
    }
}

/// The process's resident memory in bytes: `VmRSS` of /proc/self/status (Linux), which the
/// memory per waiting request is read from (docs/PERFORMANCE.md).
fn resident_bytes() -> Option<i64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: i64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Holds a gauge one higher while it lives.
pub struct OpenGuard(Gauge);

impl OpenGuard {
    fn open(gauge: Gauge) -> Self {
        gauge.inc();
        OpenGuard(gauge)
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_names_what_moved_and_zeroes_what_did_not() {
        let m = Metrics::new();
        m.request("GET", "/healthz", 200, Duration::from_millis(2));
        m.decision_created(Kind::Bool);
        let parked = m.await_parked();
        let text = m.render(Some(&Snapshot {
            pending: vec![(Kind::Bool, 3)],
            ..Snapshot::default()
        }));
        assert!(text.contains(
            "sayso_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1"
        ));
        assert!(text.contains("sayso_decisions_created_total{kind=\"bool\"} 1"));
        assert!(text.contains("sayso_decisions_pending{kind=\"bool\"} 3"));
        assert!(text.contains("sayso_decisions_pending{kind=\"todo\"} 0"));
        let resident = text
            .lines()
            .find_map(|l| l.strip_prefix("sayso_resident_memory_bytes "))
            .and_then(|v| v.parse::<i64>().ok())
            .expect("the resident memory gauge");
        // A running test process holds more than a megabyte, and on Linux it is read.
        assert!(
            !cfg!(target_os = "linux") || resident > 1 << 20,
            "{resident}"
        );
        assert!(text.contains("sayso_awaits_parked 1"));
        drop(parked);
        let later = m.render(None);
        assert!(later.contains("sayso_awaits_parked 0"));
        assert!(later.contains("sayso_database_up 0"));
        assert!(later.contains("sayso_decisions_pending{kind=\"bool\"} 3"));
        assert!(text.ends_with("# EOF\n"));
    }
}
