//! The limits of the accept loop, and the defaults that follow from the connection cap.

use std::time::Duration;

use ipnet::IpNet;

use crate::web::waiting::WaitingLimits;

/// Limits of the accept loop.
#[derive(Debug, Clone)]
pub struct ServeLimits {
    /// A new connection must send its request head within this time, or is disconnected.
    /// Over HTTP/1.1 hyper also applies it to each later request head, so a kept-alive
    /// connection is closed at whichever of this and `idle_timeout` is shorter.
    pub header_read_timeout: Duration,
    /// A connection that has been answered and has no request open (HTTP/1.1 between
    /// requests, HTTP/2 with no stream open) is closed after this long.
    pub idle_timeout: Duration,
    /// A request body that stops arriving for this long (no byte while the server waits for
    /// one) is answered 408 and the connection closed.
    pub body_read_timeout: Duration,
    /// Connections held at once. At the cap a new connection takes the place of an idle one;
    /// with none idle it is answered 503 naming the limit.
    pub max_connections: usize,
    /// Connections one client address may hold (an IPv6 /64 counts as one address); `None`
    /// for the default, `SAYSO_WAITING_CONNECTIONS`' value; `Some(0)` for no cap.
    pub connections_per_address: Option<usize>,
    /// Addresses the per-address cap leaves alone: loopback (where the person's browser and
    /// the agents share one address, and any 127.x address would do for another) and the
    /// trusted proxies (every client behind one arrives from its address).
    pub uncapped_addresses: Vec<IpNet>,
    /// How long shutdown waits for open requests to finish.
    pub shutdown_grace: Duration,
    /// Requests one HTTP/2 connection may have open at once (each parked await is one).
    pub h2_max_streams: u32,
    /// Waiting requests allowed per API key (`Some(0)`: no limit); `None` for the default,
    /// half of `max_connections`.
    pub waiting_per_key: Option<usize>,
    /// Connections waiting requests may hold; `None` for the default, nine tenths of
    /// `max_connections`.
    pub waiting_connections: Option<usize>,
}

impl ServeLimits {
    /// The waiting requests allowed, with the defaults that follow from `max_connections`.
    pub fn waiting(&self) -> WaitingLimits {
        let defaults = WaitingLimits::for_connections(self.max_connections);
        WaitingLimits {
            per_key: match self.waiting_per_key {
                None => defaults.per_key,
                Some(0) => None,
                Some(n) => Some(n),
            },
            connections: self.waiting_connections.unwrap_or(defaults.connections),
        }
    }

    /// Connections one capped address may hold; `None` for no cap. By default as many as
    /// waiting requests may hold in all: one host's fleet of agents can fill every waiting
    /// seat, and no one address ever holds the connections kept for the person's pages.
    pub fn per_address(&self) -> Option<usize> {
        match self.connections_per_address {
            None => Some(self.waiting().connections),
            Some(0) => None,
            Some(n) => Some(n),
        }
    }

    /// Loopback, IPv4 and IPv6.
    pub fn loopback() -> Vec<IpNet> {
        ["127.0.0.0/8", "::1/128"]
            .iter()
            .map(|net| net.parse().expect("a CIDR"))
            .collect()
    }
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 15_000,
            connections_per_address: None,
            uncapped_addresses: ServeLimits::loopback(),
            shutdown_grace: Duration::from_secs(10),
            h2_max_streams: 1_000,
            waiting_per_key: None,
            waiting_connections: None,
        }
    }
}
