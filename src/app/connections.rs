//! The connections the server holds: how many, from which address, and which are idle.
//!
//! Connections are capped (`SAYSO_MAX_CONNECTIONS`), and waiting requests hold at most
//! `SAYSO_WAITING_CONNECTIONS` of them (web/waiting.rs), so the rest is kept for the person's
//! pages and `/healthz`. A connection that is merely open would still take its place in that
//! rest: a hundred kept-alive connections asking `/healthz` every few seconds, with no key,
//! held a hundred-connection server full, and the person's pages answered 503. So:
//!
//! - A connection with no request open is idle (a new one that has sent nothing yet too, or
//!   a slow head would hold its place for the header timeout), and idle connections do not
//!   hold their places: at the cap, a new connection takes the place of an idle one, which is
//!   closed, rather than being refused. Refusing only when every connection is busy means the
//!   reserve holds whatever the other connections do, and needs no guess at the door of what
//!   a connection will ask (its first bytes are not read yet).
//! - The one closed is idle on the address that holds the most connections, and of those the
//!   longest idle: a flood's own connections go before the person's, and a connection just
//!   opened (whose request is on its way) goes last.
//! - Kept-alive connections are closed after `SAYSO_IDLE_TIMEOUT_S` idle, HTTP/2 ones too
//!   (hyper has no idle timeout of its own for either; the header timeout covers HTTP/1.1's
//!   next head only).
//! - One client address holds at most `SAYSO_CONNECTIONS_PER_ADDRESS`; past it, its own
//!   longest idle connection makes way, and with none idle it is refused. Loopback and
//!   trusted proxies are not capped: every client behind a proxy arrives from its address,
//!   and on one host the person's browser shares the agents' address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ipnet::IpNet;
use tokio::sync::Notify;

use super::limits::ServeLimits;
use super::refuse::Limit;
use crate::web::waiting::ConnectionId;

/// How long a connection chosen to make way may take to close: an idle one closes at once;
/// one whose next request arrived as it was chosen has this long to be answered. Its place is
/// already the new connection's, so this bounds how far past the cap the server may be.
pub(super) const MAKE_WAY_GRACE: Duration = Duration::from_secs(1);

/// Why a connection is told to close, the strongest kept when told twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(super) enum Close {
    /// Still open: nothing told.
    Open = 0,
    /// Idle for `SAYSO_IDLE_TIMEOUT_S`: closes once its requests, if any, are answered.
    Idle = 1,
    /// The server stops: its open requests are answered first (within the shutdown grace).
    Shutdown = 2,
    /// Another connection has its place: closes within `MAKE_WAY_GRACE`.
    MakeWay = 3,
}

/// One connection as its requests and the table see it. Small: a fleet's every connection
/// has one.
#[derive(Default)]
pub(super) struct Conn {
    /// Requests open: from the call of the service to the end of the response body.
    in_flight: AtomicU32,
    /// When its last request ended (`now_ms`); 0 until one has.
    last_active: AtomicU64,
    close: AtomicU8,
    told: Notify,
}

impl Conn {
    fn tell(&self, why: Close) {
        self.close.fetch_max(why as u8, Ordering::AcqRel);
        self.told.notify_one();
    }

    /// Resolves once the connection is told to close; why.
    pub(super) async fn told_to_close(&self) -> Close {
        loop {
            let why = self.reason();
            if why != Close::Open {
                return why;
            }
            self.told.notified().await;
        }
    }

    /// Counts the connection as answered from now, so the idle timeout runs: for an HTTP/2
    /// connection once its preface is in, since nothing else would close one that never
    /// opens a stream (the header timeout ends with the preface).
    pub(super) fn answered_now(&self) {
        self.last_active.store(now_ms().max(1), Ordering::Release);
    }

    /// Resolves once the connection's place has gone to another.
    pub(super) async fn told_to_make_way(&self) {
        while self.reason() != Close::MakeWay {
            self.told.notified().await;
        }
    }

    fn reason(&self) -> Close {
        match self.close.load(Ordering::Acquire) {
            0 => Close::Open,
            1 => Close::Idle,
            2 => Close::Shutdown,
            _ => Close::MakeWay,
        }
    }

    fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }
}

/// A request open on its connection; ends when dropped (with the response body, or with the
/// request if it never made one).
pub(super) struct InFlight(Arc<Conn>);

impl InFlight {
    pub(super) fn begin(conn: &Arc<Conn>) -> InFlight {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(conn))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // The time first: whoever sees no request open then sees when the last one ended.
        self.0.answered_now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Milliseconds since the first call, a clock an atomic can hold.
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// The connections open, shared by the accept loop, each connection and the idle sweep.
pub(super) struct Connections {
    max: usize,
    per_address: Option<usize>,
    uncapped: Vec<IpNet>,
    idle_timeout: Duration,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    open: HashMap<ConnectionId, Entry>,
    /// Connections that hold a place (those making way no longer do).
    holding: usize,
    /// Places held by address (an IPv6 /64 as one).
    by_address: HashMap<IpAddr, usize>,
}

struct Entry {
    address: IpAddr,
    conn: Arc<Conn>,
    accepted: u64,
    holds_place: bool,
}

impl Entry {
    /// Since when it has been idle (its last answer, or its accept if it has had none).
    fn idle_since(&self) -> u64 {
        self.conn
            .last_active
            .load(Ordering::Acquire)
            .max(self.accepted)
    }
}

/// A connection the table holds; leaves it when dropped.
pub(super) struct Admitted {
    id: ConnectionId,
    conn: Arc<Conn>,
    connections: Arc<Connections>,
}

impl Admitted {
    pub(super) fn id(&self) -> ConnectionId {
        self.id
    }

    pub(super) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut table = self.connections.lock();
        if let Some(entry) = table.open.remove(&self.id)
            && entry.holds_place
        {
            table.let_go(entry.address);
        }
    }
}

impl Table {
    fn let_go(&mut self, address: IpAddr) {
        self.holding -= 1;
        if let Some(n) = self.by_address.get_mut(&address) {
            *n -= 1;
            if *n == 0 {
                self.by_address.remove(&address);
            }
        }
    }

    /// The idle connection holding a place that should make way, among those `eligible`:
    /// on the address holding the most, the longest idle.
    fn to_make_way(&self, eligible: impl Fn(&Entry) -> bool) -> Option<ConnectionId> {
        self.open
            .iter()
            .filter(|(_, e)| e.holds_place && e.conn.is_idle() && eligible(e))
            .max_by_key(|(_, e)| {
                let held = self.by_address.get(&e.address).copied().unwrap_or(0);
                (held, std::cmp::Reverse(e.idle_since()))
            })
            .map(|(id, _)| *id)
    }

    /// Gives `id`'s place up and tells it to close.
    fn make_way(&mut self, id: ConnectionId) {
        let Some(entry) = self.open.get_mut(&id) else {
            return;
        };
        entry.holds_place = false;
        entry.conn.tell(Close::MakeWay);
        let address = entry.address;
        self.let_go(address);
    }
}

impl Connections {
    pub(super) fn new(limits: &ServeLimits) -> Arc<Connections> {
        Arc::new(Connections {
            max: limits.max_connections.max(1),
            per_address: limits.per_address(),
            uncapped: limits.uncapped_addresses.clone(),
            idle_timeout: limits.idle_timeout,
            table: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for connection `id` from `peer`, an idle connection making way for it if
    /// needed; the limit that refuses it when every connection in the way is busy.
    pub(super) fn admit(
        self: &Arc<Self>,
        id: ConnectionId,
        peer: IpAddr,
    ) -> Result<Admitted, Limit> {
        let address = address_of(peer);
        let capped = !self.uncapped.iter().any(|net| net.contains(&address));
        let mut table = self.lock();
        if let Some(cap) = self.per_address.filter(|_| capped)
            && table.by_address.get(&address).copied().unwrap_or(0) >= cap
        {
            let Some(way) = table.to_make_way(|e| e.address == address) else {
                return Err(Limit::PerAddress(cap));
            };
            table.make_way(way);
        }
        if table.holding >= self.max {
            let Some(way) = table.to_make_way(|_| true) else {
                return Err(Limit::Connections(self.max));
            };
            table.make_way(way);
        }
        let conn = Arc::new(Conn::default());
        table.open.insert(
            id,
            Entry {
                address,
                conn: Arc::clone(&conn),
                accepted: now_ms(),
                holds_place: true,
            },
        );
        table.holding += 1;
        *table.by_address.entry(address).or_default() += 1;
        Ok(Admitted {
            id,
            conn,
            connections: Arc::clone(self),
        })
    }

    /// Tells the connections answered and idle for the idle timeout to close.
    fn close_idle(&self) {
        let timeout = self.idle_timeout.as_millis() as u64;
        let now = now_ms();
        let table = self.lock();
        for entry in table.open.values() {
            let last = entry.conn.last_active.load(Ordering::Acquire);
            if last != 0
                && entry.conn.is_idle()
                && now.saturating_sub(last) >= timeout
                && entry.conn.reason() == Close::Open
            {
                entry.conn.tell(Close::Idle);
            }
        }
    }

    /// Closes idle connections as they pass the idle timeout, until dropped.
    pub(super) fn sweep_idle(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        // A close comes at most a quarter of the timeout late (and within a second).
        let every =
            (self.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let connections = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(connections) = connections.upgrade() else {
                    return;
                };
                connections.close_idle();
            }
        })
    }

    /// Tells every connection the server is stopping.
    pub(super) fn shut_down(&self) {
        for entry in self.lock().open.values() {
            entry.conn.tell(Close::Shutdown);
        }
    }

    /// Connections still open.
    pub(super) fn open(&self) -> usize {
        self.lock().open.len()
    }
}

/// The address a connection counts against: IPv4 inside IPv6 as IPv4, and an IPv6 address
/// as its /64, which one host (or one customer of a provider) is commonly given whole.
fn address_of(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & (u128::MAX << 64);
                IpAddr::V6(bits.into())
            }
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connections(max: usize, per_address: usize) -> Arc<Connections> {
        Connections::new(&ServeLimits {
            max_connections: max,
            connections_per_address: Some(per_address),
            ..ServeLimits::default()
        })
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_ipv6_host_counts_as_its_64_and_mapped_ipv4_as_ipv4() {
        assert_eq!(address_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(address_of(ip("2001:db8:1:2:ffff::9")), ip("2001:db8:1:2::"));
        assert_eq!(address_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(address_of(ip("192.0.2.7")), ip("192.0.2.7"));
    }

    #[test]
    fn at_the_cap_an_idle_connection_makes_way_and_busy_ones_do_not() {
        let table = connections(3, 0);
        let a: Vec<Admitted> = (0..3)
            .map(|n| table.admit(ConnectionId(n), ip("192.0.2.1")).unwrap())
            .collect();
        let busy: Vec<InFlight> = a.iter().map(|c| InFlight::begin(c.conn())).collect();
        assert!(matches!(
            table.admit(ConnectionId(9), ip("192.0.2.2")),
            Err(Limit::Connections(3))
        ));
        drop(busy);
        let _new = table.admit(ConnectionId(9), ip("192.0.2.2")).unwrap();
        let made_way: Vec<_> = a
            .iter()
            .filter(|c| c.conn().reason() == Close::MakeWay)
            .collect();
        assert_eq!(made_way.len(), 1);
        // Its place is given up at once; it leaves the table when it closes.
        assert_eq!(table.open(), 4);
        assert_eq!(table.lock().holding, 3);
        drop(a);
        assert_eq!(table.open(), 1);
        assert_eq!(table.lock().holding, 1);
    }

    #[test]
    fn the_address_holding_the_most_makes_way_first_then_the_longest_idle() {
        let table = connections(4, 0);
        let person = table.admit(ConnectionId(1), ip("198.51.100.5")).unwrap();
        let flood: Vec<Admitted> = (2..5)
            .map(|n| table.admit(ConnectionId(n), ip("192.0.2.1")).unwrap())
            .collect();
        // Each answered once, the first of them longest ago.
        for c in std::iter::once(&person).chain(&flood) {
            drop(InFlight::begin(c.conn()));
            std::thread::sleep(Duration::from_millis(3));
        }
        let _new = table.admit(ConnectionId(5), ip("203.0.113.9")).unwrap();
        assert_eq!(person.conn().reason(), Close::Open);
        assert_eq!(flood[0].conn().reason(), Close::MakeWay);
        assert_eq!(flood[1].conn().reason(), Close::Open);
    }

    #[test]
    fn an_address_past_its_cap_makes_way_from_its_own_or_is_refused() {
        let table = connections(100, 2);
        let first = table.admit(ConnectionId(1), ip("192.0.2.1")).unwrap();
        let second = table.admit(ConnectionId(2), ip("192.0.2.1")).unwrap();
        let other = table.admit(ConnectionId(3), ip("192.0.2.2")).unwrap();
        let _busy = (
            InFlight::begin(first.conn()),
            InFlight::begin(second.conn()),
        );
        assert!(matches!(
            table.admit(ConnectionId(4), ip("192.0.2.1")),
            Err(Limit::PerAddress(2))
        ));
        drop(_busy);
        let _third = table.admit(ConnectionId(4), ip("192.0.2.1")).unwrap();
        assert_eq!(other.conn().reason(), Close::Open);
        // Loopback is not capped.
        let local: Vec<Admitted> = (10..20)
            .map(|n| table.admit(ConnectionId(n), ip("127.0.0.1")).unwrap())
            .collect();
        assert_eq!(local.len(), 10);
    }

    #[test]
    fn answered_connections_idle_past_the_timeout_are_told_to_close() {
        let table = Connections::new(&ServeLimits {
            idle_timeout: Duration::from_millis(20),
            ..ServeLimits::default()
        });
        let fresh = table.admit(ConnectionId(1), ip("192.0.2.1")).unwrap();
        let answered = table.admit(ConnectionId(2), ip("192.0.2.1")).unwrap();
        let waiting = table.admit(ConnectionId(3), ip("192.0.2.1")).unwrap();
        drop(InFlight::begin(answered.conn()));
        drop(InFlight::begin(waiting.conn()));
        let _open = InFlight::begin(waiting.conn());
        std::thread::sleep(Duration::from_millis(40));
        table.close_idle();
        // A new connection is the header timeout's; one with a request open is not idle.
        assert_eq!(fresh.conn().reason(), Close::Open);
        assert_eq!(answered.conn().reason(), Close::Idle);
        assert_eq!(waiting.conn().reason(), Close::Open);
    }
}
