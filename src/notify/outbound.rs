//! Calls to addresses someone else chose (a decision's `callback_url`, a browser's push
//! endpoint) go only to public addresses unless the operator allows private ones
//! (`SAYSO_ALLOW_PRIVATE_WEBHOOKS`): a literal address is checked as written, a host name
//! after it is resolved, and the connection then goes to exactly the address checked (no
//! second lookup for a rebinding name to change, no proxy). Redirects are never followed.

use std::net::{IpAddr, SocketAddr};

use url::{Host, Url};

use crate::courier::http_client::TIMEOUT;
use crate::domain::address::is_global;

/// Why a call is not made: worth trying later, or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The name did not resolve now; it may later.
    Retry(String),
    /// It leads to an inner address, or cannot be called at all.
    Never(String),
}

/// Clients for outbound calls of one kind, built with `builder`.
pub struct Outbound {
    allow_private: bool,
    builder: fn() -> reqwest::ClientBuilder,
    /// Honours proxy settings; used when any address may be called.
    open: reqwest::Client,
    /// No proxy; used for IP-literal URLs once their address passed the check.
    direct: reqwest::Client,
}

impl Outbound {
    /// `allow_private` lets calls reach loopback, private and other non-global addresses.
    pub fn new(allow_private: bool, builder: fn() -> reqwest::ClientBuilder) -> Self {
        let build = |b: reqwest::ClientBuilder| b.build().expect("the HTTP client builds");
        Outbound {
            allow_private,
            builder,
            open: build(builder()),
            direct: build(builder().no_proxy()),
        }
    }

    /// The client to call `url` with, after checking where it leads. `what` names the URL
    /// in the reasons (`callback_url`, `push endpoint`).
    pub async fn client_for(&self, url: &Url, what: &str) -> Result<reqwest::Client, Refusal> {
        if self.allow_private {
            return Ok(self.open.clone());
        }
        let domain = match url.host() {
            Some(Host::Ipv4(ip)) => return self.literal(IpAddr::V4(ip), what),
            Some(Host::Ipv6(ip)) => return self.literal(IpAddr::V6(ip), what),
            Some(Host::Domain(domain)) => domain,
            None => return Err(Refusal::Never(format!("the {what} has no host"))),
        };
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = resolve(domain, port, what).await?;
        if let Some(bad) = addrs.iter().find(|a| !is_global(a.ip())) {
            return Err(refused(bad.ip(), what));
        }
        pinned_client((self.builder)(), domain, &addrs)
    }

    fn literal(&self, ip: IpAddr, what: &str) -> Result<reqwest::Client, Refusal> {
        if is_global(ip) {
            Ok(self.direct.clone())
        } else {
            Err(refused(ip, what))
        }
    }
}

/// Every address `domain` resolves to; a lookup that fails may work later.
async fn resolve(domain: &str, port: u16, what: &str) -> Result<Vec<SocketAddr>, Refusal> {
    let lookup = tokio::time::timeout(TIMEOUT, tokio::net::lookup_host((domain, port))).await;
    let addrs: Vec<SocketAddr> = match lookup {
        Ok(Ok(addrs)) => addrs.collect(),
        Ok(Err(e)) => {
            return Err(Refusal::Retry(format!(
                "the {what} host {domain} did not resolve: {e}"
            )));
        }
        Err(_) => {
            return Err(Refusal::Retry(format!(
                "resolving the {what} host {domain} timed out"
            )));
        }
    };
    if addrs.is_empty() {
        return Err(Refusal::Retry(format!(
            "the {what} host {domain} resolved to no address"
        )));
    }
    Ok(addrs)
}

/// A client that connects to `addrs` whenever a URL names `domain`, without looking it up
/// again, and ignores proxies: the connection goes to exactly the addresses checked.
pub(super) fn pinned_client(
    builder: reqwest::ClientBuilder,
    domain: &str,
    addrs: &[SocketAddr],
) -> Result<reqwest::Client, Refusal> {
    builder
        .no_proxy()
        .resolve_to_addrs(domain, addrs)
        .build()
        .map_err(|e| Refusal::Retry(format!("could not set up the HTTP client: {e}")))
}

fn refused(ip: IpAddr, what: &str) -> Refusal {
    Refusal::Never(format!(
        "{what} resolves to a private address ({ip}); \
         set SAYSO_ALLOW_PRIVATE_WEBHOOKS=1 to allow"
    ))
}

/// At most `limit` bytes of a response body, as text: an answer read for a message is never
/// allowed to be large, however much the other side sends.
pub async fn capped_text(mut resp: reqwest::Response, limit: usize) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::courier::http_client::client_builder;

    /// A server on a port of its own that takes one request and answers it with `head`,
    /// then `body_chunks` chunks of 64 KiB, for as long as the client reads.
    async fn answer_once(head: &'static [u8], body_chunks: usize) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf).await;
            let _ = conn.write_all(head).await;
            let junk = vec![b'x'; 64 * 1024];
            for _ in 0..body_chunks {
                if conn.write_all(&junk).await.is_err() {
                    break;
                }
            }
        });
        addr
    }

    #[tokio::test]
    async fn pinned_client_connects_to_the_checked_address_without_a_lookup() {
        let addr = answer_once(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n", 0).await;
        // `.invalid` never resolves (RFC 6761): only the pinned address can be reached.
        let client = pinned_client(client_builder(), "pinned.invalid", &[addr]).unwrap();
        let resp = client
            .get(format!("http://pinned.invalid:{}/", addr.port()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::NO_CONTENT);
    }

    #[tokio::test]
    async fn inner_addresses_are_refused_however_they_are_written() {
        let outbound = Outbound::new(false, client_builder);
        for url in [
            "http://localhost:9/hook",
            "http://127.1/",
            "http://0/",
            "http://[::ffff:7f00:1]/",
            "http://[fd00::1]/",
            "http://100.64.0.1/",
            "http://224.0.0.1/",
        ] {
            let url = Url::parse(url).unwrap();
            let Err(Refusal::Never(why)) = outbound.client_for(&url, "callback_url").await else {
                panic!("{url} was not refused");
            };
            assert!(why.contains("private address"), "{why}");
            assert!(why.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"), "{why}");
        }
        let allowing = Outbound::new(true, client_builder);
        let url = Url::parse("http://127.0.0.1:9/").unwrap();
        assert!(allowing.client_for(&url, "callback_url").await.is_ok());
    }

    #[tokio::test]
    async fn a_large_answer_is_read_only_up_to_the_cap() {
        let addr = answer_once(
            b"HTTP/1.1 500 Oops\r\ncontent-length: 10000000\r\n\r\n",
            150,
        )
        .await;
        let resp = client_builder()
            .build()
            .unwrap()
            .get(format!("http://{addr}/"))
            .send()
            .await
            .unwrap();
        let text = capped_text(resp, 1000).await;
        assert_eq!(text.len(), 1000);
    }
}
