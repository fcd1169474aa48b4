//! `sayso health`: the health check of the image (which has no curl) and of anything else
//! that can run a command. It asks a server for `/readyz`, which answers 200 only while the
//! database does, and turns that into an exit code.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// The whole check, connection included, stays under the image's HEALTHCHECK timeout (5 s).
const TIMEOUT: Duration = Duration::from_secs(4);

/// The base URL of a server listening on `listen`, as a check on the same host reaches it:
/// an unspecified address (`0.0.0.0`, `::`) is reached on loopback.
pub fn local_url(listen: SocketAddr) -> String {
    let ip = match listen.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, listen.port()))
}

/// `Ok` when `{base}/readyz` answers 200; the error says what answered instead.
pub async fn check(base: &str) -> anyhow::Result<()> {
    let url = format!("{}/readyz", base.trim_end_matches('/'));
    // Normally done by main; again here so the library can be used on its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().timeout(TIMEOUT).build()?;
    let resp = http
        .get(&url)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("{url}: no answer: {e}"))?;
    let status = resp.status();
    if status.is_success() {
        println!("ready");
        Ok(())
    } else {
        anyhow::bail!("{url} answered {status}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_listen_address_is_checked_on_loopback() {
        let url = |s: &str| local_url(s.parse().unwrap());
        assert_eq!(url("0.0.0.0:8080"), "http://127.0.0.1:8080");
        assert_eq!(url("[::]:8080"), "http://[::1]:8080");
        assert_eq!(url("127.0.0.1:9000"), "http://127.0.0.1:9000");
        assert_eq!(url("[2001:db8::1]:80"), "http://[2001:db8::1]:80");
    }
}
