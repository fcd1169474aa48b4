//! Which network addresses are "outside": reachable on the public internet. Outbound calls
//! (webhooks) go only there unless an operator allows private ones.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// The address a URL names literally (`http://127.1/`, `http://[::ffff:7f00:1]/`, `http://0/`),
/// when it is not a public one. A URL with a host name gives `None`: where a name leads is
/// known only once it is resolved.
pub fn inner_literal(url: &Url) -> Option<IpAddr> {
    let ip = match url.host()? {
        Host::Ipv4(ip) => IpAddr::V4(ip),
        Host::Ipv6(ip) => IpAddr::V6(ip),
        Host::Domain(_) => return None,
    };
    (!is_global(ip)).then_some(ip)
}

/// Whether an address is reachable on the public internet: not loopback, private, shared
/// (CGNAT), link-local, unspecified, multicast, documentation, benchmarking or reserved, and
/// not such an IPv4 address inside an IPv6 one.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

fn is_global_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let non_global = a == 0 // "this network", 0.0.0.0 included
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast (deprecated)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !non_global
}

fn is_global_v6(ip: Ipv6Addr) -> bool {
    let seg = ip.segments();
    // IPv4-mapped (::ffff:a.b.c.d) and the NAT64 well-known prefix (64:ff9b::/96) reach the
    // IPv4 address inside.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_global_v4(v4);
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_global_v4(embedded_v4(seg[6], seg[7]));
    }
    // Only global unicast (2000::/3) is public; that excludes ::, ::1, the deprecated
    // IPv4-compatible ::/96, ULA fc00::/7, link-local fe80::/10, site-local and multicast.
    if seg[0] & 0xe000 != 0x2000 {
        return false;
    }
    // 2001::/23 holds the IETF protocol assignments (Teredo among them) and 2001:db8::/32
    // and 3fff::/20 are for documentation.
    let non_global =
        (seg[0] == 0x2001 && (seg[1] < 0x0200 || seg[1] == 0x0db8)) || seg[0] & 0xfff0 == 0x3ff0;
    if non_global {
        return false;
    }
    // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
    if seg[0] == 0x2002 {
        return is_global_v4(embedded_v4(seg[1], seg[2]));
    }
    true
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(s: &str) -> bool {
        is_global(s.parse().unwrap())
    }

    #[test]
    fn public_addresses_are_global() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(global(ip), "{ip} should be global");
        }
    }

    #[test]
    fn inside_addresses_are_not_global() {
        for ip in [
            "0.0.0.0",
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::7f00:1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "fc00::1",
            "fd12:3456:789a::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "3fff::1",
        ] {
            assert!(!global(ip), "{ip} should not be global");
        }
    }

    #[test]
    fn literal_inner_addresses_are_found_however_they_are_written() {
        for url in [
            "http://0/",
            "http://0.0.0.0:8080/x",
            "http://[::]/",
            "http://127.1/",
            "http://2130706433/",
            "http://[::ffff:7f00:1]/",
            "https://10.0.0.5/hook",
            "http://[fd00::1]/",
        ] {
            let parsed = Url::parse(url).unwrap();
            assert!(inner_literal(&parsed).is_some(), "{url}");
        }
        for url in [
            "https://example.com/hook",
            "https://8.8.8.8/",
            "http://localhost/",
        ] {
            assert_eq!(inner_literal(&Url::parse(url).unwrap()), None, "{url}");
        }
    }
}
