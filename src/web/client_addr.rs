//! Who a request comes from. Behind a reverse proxy every connection comes from the proxy, so
//! the client is named in `Forwarded` or `X-Forwarded-For`; those headers are believed only
//! when the connection comes from an address listed in `SAYSO_TRUSTED_PROXIES`, since anyone
//! else can write them. The rate limiter and the request's log lines use the result.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use ipnet::IpNet;

/// The client address of a request, as far as it can be known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<Vec<IpNet>>);

impl TrustedProxies {
    /// Reads CIDRs (`10.0.0.0/8`, `fd00::/8`) or single addresses; a bad entry is named.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut nets = Vec::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let net = entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| {
                    format!(
                        "SAYSO_TRUSTED_PROXIES: {entry:?} is not an address or a CIDR \
                         (10.0.0.0/8, 127.0.0.1, fd00::/8)"
                    )
                })?;
            nets.push(net);
        }
        Ok(TrustedProxies(Arc::new(nets)))
    }

    /// The proxies' networks, as listed.
    pub fn nets(&self) -> &[IpNet] {
        &self.0
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that arrived from `peer` with `headers`: the peer itself
    /// unless it is a trusted proxy; then the nearest address in the forwarding chain that
    /// is not a trusted proxy, read from the right (the left is whatever the client wrote).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let mut nearest = peer;
        for hop in forwarded_chain(headers).iter().rev() {
            let Some(ip) = parse_hop(hop) else {
                // "unknown", an obfuscated name or garbage: nothing further left is believed.
                return nearest;
            };
            if !self.trusts(ip) {
                return ip;
            }
            nearest = ip;
        }
        nearest
    }
}

/// IPv4 addresses that arrive inside IPv6 (`::ffff:a.b.c.d`) as plain IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The hops of `Forwarded` (RFC 7239 `for=`) if present, else of `X-Forwarded-For`, in order.
fn forwarded_chain(headers: &HeaderMap) -> Vec<String> {
    let forwarded: Vec<String> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| value.trim().trim_matches('"').to_string())
            })
        })
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|hop| hop.trim().to_string())
        .filter(|hop| !hop.is_empty())
        .collect()
}

/// One hop: `203.0.113.7`, `203.0.113.7:4711`, `[2001:db8::1]`, `[2001:db8::1]:4711`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Ok(addr) = hop.parse::<SocketAddr>() {
        return Some(canonical(addr.ip()));
    }
    hop.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .and_then(|h| h.parse::<IpAddr>().ok())
        .map(canonical)
}

/// Puts the request's `ClientAddr` into its extensions, from the peer the accept loop
/// recorded (a request with no peer, called in-process, gets none). A plain map of the
/// request, so the layer adds nothing to what a waiting request holds.
pub fn record(trusted: &TrustedProxies, mut req: Request) -> Request {
    if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        let client = trusted.client(peer.ip(), req.headers());
        req.extensions_mut().insert(ClientAddr(client));
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let none = TrustedProxies::default();
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=5.6.7.8")]);
        assert_eq!(
            none.client(ip("198.51.100.9"), &spoofed),
            ip("198.51.100.9")
        );
        let lan = TrustedProxies::parse(&["10.0.0.0/8".into()]).unwrap();
        assert_eq!(lan.client(ip("198.51.100.9"), &spoofed), ip("198.51.100.9"));
    }

    #[test]
    fn behind_trusted_proxies_the_nearest_untrusted_hop_is_the_client() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8".into(), " 127.0.0.1 ".into()]).unwrap();
        let xff = headers(&[("x-forwarded-for", "6.6.6.6, 203.0.113.7, 10.1.1.1")]);
        assert_eq!(trusted.client(ip("127.0.0.1"), &xff), ip("203.0.113.7"));
        let fwd = headers(&[(
            "forwarded",
            "for=6.6.6.6, for=\"[2001:db8::7]:4711\";proto=https, for=10.2.2.2",
        )]);
        assert_eq!(
            trusted.client(ip("::ffff:10.0.0.1"), &fwd),
            ip("2001:db8::7")
        );
        let unknown = headers(&[("x-forwarded-for", "6.6.6.6, unknown, 10.1.1.1")]);
        assert_eq!(trusted.client(ip("127.0.0.1"), &unknown), ip("10.1.1.1"));
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn bad_entries_are_named() {
        let err = TrustedProxies::parse(&["10.0.0.0/8".into(), "proxy.local".into()]).unwrap_err();
        assert!(err.contains("\"proxy.local\""), "{err}");
    }
}
