//! Putting sayso together: the command line's settings turned into each layer's own, the
//! router that joins the API, the pages and MCP, the outbox worker, and the server that runs
//! them. It may use every room but `cli` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

mod accept;
mod body;
mod chats;
mod connections;
mod limits;
mod refuse;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;

pub use accept::{listen, serve, serve_router, shutdown_signal};
pub use chats::chat_settings;
pub use limits::ServeLimits;

use crate::chat::{self, ChatSettings};
use crate::config::{GlobalArgs, ServeArgs};
use crate::http::{self, HttpSettings, RateLimit};
use crate::mcp::{self, McpSettings};
use crate::notify::{self, NotifyError, NotifySettings};
use crate::service::{Service, ServiceSettings};
use crate::web::client_addr::TrustedProxies;
use crate::web::waiting::Waiting;

/// What the router and the accept loop are set up with.
#[derive(Debug, Clone, Default)]
pub struct AppSettings {
    pub http: HttpSettings,
    pub mcp: McpSettings,
    pub limits: ServeLimits,
    /// The chats whose inbound URLs are routed (chat/routes.rs).
    pub chats: ChatSettings,
}

/// Everything `sayso serve` runs with, each layer's part typed for that layer.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    pub service: ServiceSettings,
    pub app: AppSettings,
    pub notify: NotifySettings,
    /// `/metrics` on an address of its own (`SAYSO_METRICS_LISTEN`), with its token.
    pub metrics_listener: Option<(std::net::SocketAddr, String)>,
}

impl ServerSettings {
    /// The settings the command line and `SAYSO_*` variables give; an unusable one (a public
    /// URL that is not http) is refused with a message that names it.
    pub fn from_args(global: &GlobalArgs, args: &ServeArgs) -> Result<Self, String> {
        let defaults = RateLimit::DEFAULT;
        let metrics_token = args
            .metrics_token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let max_connections = args.max_connections.max(1);
        if let Some(n) = args.waiting_connections
            && !(1..max_connections).contains(&n)
        {
            return Err(format!(
                "SAYSO_WAITING_CONNECTIONS is {n}; it must be at least 1 and below \
                 SAYSO_MAX_CONNECTIONS ({max_connections}): the connections between them are \
                 kept for the person's pages"
            ));
        }
        if args.idle_timeout_s == 0 {
            return Err(
                "SAYSO_IDLE_TIMEOUT_S is 0; it must be at least 1 (seconds an answered \
                 connection may stay open with no request)"
                    .into(),
            );
        }
        let trusted_proxies = TrustedProxies::parse(&args.trusted_proxies)?;
        if args.metrics_listen.is_some() && metrics_token.is_none() {
            return Err(
                "SAYSO_METRICS_LISTEN is set but SAYSO_METRICS_TOKEN is not: /metrics is only \
                 served with a token"
                    .into(),
            );
        }
        let chats = chats::chat_settings(&args.chats)?;
        Ok(ServerSettings {
            service: ServiceSettings {
                public_url: global.public_url()?,
                max_await: Duration::from_secs(args.max_await_s),
                expiry_interval: Duration::from_secs(1),
                email_enabled: args.smtp_url.is_some(),
                allow_private_webhooks: args.allow_private_webhooks,
                retention: args
                    .retention_days
                    .filter(|d| *d > 0)
                    .map(|d| time::Duration::days(i64::from(d))),
                urgent_per_hour: args.urgent_per_hour,
            },
            app: AppSettings {
                http: HttpSettings {
                    rate_limit: RateLimit {
                        per_second: args.rate_limit_per_s.unwrap_or(defaults.per_second),
                        burst: args.rate_limit_burst.unwrap_or(defaults.burst).max(1),
                    },
                    trusted_proxies: trusted_proxies.clone(),
                    // With an address of its own, /metrics is served there only.
                    metrics_token: metrics_token
                        .clone()
                        .filter(|_| args.metrics_listen.is_none()),
                },
                mcp: McpSettings {
                    allowed_hosts: args.mcp_allowed_hosts.clone(),
                    allowed_origins: args.mcp_allowed_origins.clone(),
                    omp_ask_timeout: Some(Duration::from_secs(args.omp_ask_timeout_s))
                        .filter(|t| !t.is_zero()),
                },
                limits: ServeLimits {
                    header_read_timeout: Duration::from_secs(args.header_timeout_s.max(1)),
                    idle_timeout: Duration::from_secs(args.idle_timeout_s),
                    connections_per_address: args.connections_per_address,
                    // Every client behind a proxy arrives from its address.
                    uncapped_addresses: ServeLimits::loopback()
                        .into_iter()
                        .chain(trusted_proxies.nets().iter().copied())
                        .collect(),
                    body_read_timeout: Duration::from_secs(args.body_timeout_s.max(1)),
                    max_connections,
                    h2_max_streams: args.h2_max_streams.max(1),
                    waiting_per_key: args.waiting_per_key,
                    waiting_connections: args.waiting_connections,
                    ..ServeLimits::default()
                },
                chats: chats.clone(),
            },
            notify: NotifySettings {
                smtp_url: args.smtp_url.clone(),
                mail_from: args.mail_from.clone(),
                allow_private_webhooks: args.allow_private_webhooks,
                retry_base: Duration::from_millis(args.outbox_retry_base_ms),
                lease: Duration::from_secs(args.outbox_lease_s),
                notify_per_minute: args.notify_per_minute,
                chats,
                ..NotifySettings::default()
            },
            metrics_listener: args.metrics_listen.zip(metrics_token),
        })
    }
}

/// The whole application as one router: the API and the pages, with MCP beside them, all
/// behind the same limits and tracing. Tests call it with `oneshot`.
pub fn router(svc: &Service, settings: &AppSettings) -> Router {
    let routes = http::routes(svc)
        .merge(mcp::routes(svc, &settings.mcp))
        .merge(chat::routes(&settings.chats));
    // The seats of waiting requests, which every request can reach (web/waiting.rs).
    let waiting = Waiting::new(settings.limits.waiting());
    http::finish(routes, svc.clone(), &settings.http, waiting)
}

/// Starts the outbox worker with every channel `settings` sets up; it stops with the
/// service's shutdown.
pub fn start_worker(svc: &Service, settings: &NotifySettings) -> Result<(), NotifyError> {
    let worker = Arc::new(notify::build_worker(settings, &svc.settings().public_url)?);
    svc.spawn_until_shutdown(worker.run(svc.outbox()));
    chat::start_listeners(svc, &settings.chats);
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::config::Cli;

    fn settings(extra: &[&str]) -> Result<ServerSettings, String> {
        let argv = ["sayso", "serve", "--max-connections", "100"]
            .iter()
            .chain(extra)
            .copied();
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let Some(crate::config::Command::Serve(args)) = cli.command else {
            panic!("serve");
        };
        ServerSettings::from_args(&cli.global, &args)
    }

    #[test]
    fn the_per_address_cap_follows_the_waiting_connections_and_spares_proxies() {
        let limits = settings(&["--trusted-proxies", "10.0.0.0/8"])
            .unwrap()
            .app
            .limits;
        assert_eq!(limits.per_address(), Some(90));
        let uncapped = |ip: &str| {
            let ip: std::net::IpAddr = ip.parse().unwrap();
            limits.uncapped_addresses.iter().any(|n| n.contains(&ip))
        };
        assert!(uncapped("127.0.0.9") && uncapped("::1") && uncapped("10.1.2.3"));
        assert!(!uncapped("192.0.2.1"));
        let set = settings(&["--waiting-connections", "50"]).unwrap();
        assert_eq!(set.app.limits.per_address(), Some(50));
        let set = settings(&["--connections-per-address", "0"]).unwrap();
        assert_eq!(set.app.limits.per_address(), None);
        let set = settings(&["--connections-per-address", "7"]).unwrap();
        assert_eq!(set.app.limits.per_address(), Some(7));
        let err = settings(&["--idle-timeout-s", "0"]).err().unwrap();
        assert!(err.contains("SAYSO_IDLE_TIMEOUT_S"), "{err}");
    }

    #[test]
    fn waiting_connections_stay_below_the_connection_cap() {
        let limits = settings(&[]).unwrap().app.limits.waiting();
        assert_eq!((limits.per_key, limits.connections), (Some(50), 90));
        let set = settings(&["--waiting-per-key", "0", "--waiting-connections", "99"]).unwrap();
        let limits = set.app.limits.waiting();
        assert_eq!((limits.per_key, limits.connections), (None, 99));
        for refused in ["100", "0"] {
            let err = settings(&["--waiting-connections", refused]).err().unwrap();
            assert!(
                err.contains("SAYSO_WAITING_CONNECTIONS") && err.contains("SAYSO_MAX_CONNECTIONS"),
                "{err}"
            );
        }
    }
}
