//! Client addresses through the proxies: sayso trusts exactly the proxy's address
//! (`SAYSO_TRUSTED_PROXIES=127.0.0.1`), so the rate limit and the request log lines see the
//! client that reached the proxy, whatever `X-Forwarded-For` that client wrote itself, and a
//! client that reaches sayso directly cannot pass for another by writing one.

use std::net::{IpAddr, Ipv4Addr};

use reqwest::StatusCode;

use super::stack::{PROXY_ADDR, Proxy, Stack};

const ALICE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const BOB: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
const MALLORY: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 4);
/// What the clients claim to be.
const FORGED: &str = "203.0.113.9";

async fn health(client: &reqwest::Client, url: &str, forged: bool) -> StatusCode {
    let mut req = client.get(url);
    if forged {
        req = req.header("x-forwarded-for", FORGED);
    }
    req.send().await.expect("health check sent").status()
}

/// The `client` of the log lines of requests to `route`.
fn clients_logged(logs: &[String], route: &str) -> Vec<String> {
    logs.iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["span"]["route"] == route)
        .filter_map(|v| v["span"]["client"].as_str().map(str::to_string))
        .collect()
}

async fn the_real_client_address_is_seen(proxy: Proxy) {
    // Two requests at once per address, then one a minute.
    let env = [
        ("SAYSO_RATE_LIMIT_PER_S", "1"),
        ("SAYSO_RATE_LIMIT_BURST", "2"),
    ];
    let Some(stack) = Stack::start(proxy, &env).await else {
        return;
    };
    let url = stack.url("/healthz");
    let alice = stack.client_from(ALICE);
    let bob = stack.client_from(BOB);

    // Alice spends her budget; a forged X-Forwarded-For does not buy her a new one.
    assert_eq!(health(&alice, &url, false).await, StatusCode::OK);
    assert_eq!(health(&alice, &url, true).await, StatusCode::OK);
    assert_eq!(
        health(&alice, &url, true).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        health(&alice, &url, false).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // Bob comes through the same proxy, and so from the same address as far as the TCP
    // connection goes: he has his own budget because sayso believes the proxy.
    assert_eq!(health(&bob, &url, false).await, StatusCode::OK);

    // Mallory goes around the proxy, claiming to be Bob: not a trusted peer, not believed.
    let direct = format!("http://{}/healthz", stack.sayso.addr);
    let mallory = reqwest::Client::builder()
        .local_address(IpAddr::V4(MALLORY))
        .build()
        .unwrap();
    for _ in 0..2 {
        let status = mallory
            .get(&direct)
            .header("x-forwarded-for", BOB.to_string())
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK);
    }
    let status = mallory
        .get(&direct)
        .header("x-forwarded-for", FORGED)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "Mallory's own budget, whatever she claims"
    );

    // The log lines name each request's real client, never the proxy, never a claim.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let logged = clients_logged(&stack.sayso.logs(), "/healthz");
    let count = |ip: &str| logged.iter().filter(|c| *c == ip).count();
    assert!(count(&ALICE.to_string()) >= 4, "{logged:?}");
    assert!(count(&BOB.to_string()) >= 1, "{logged:?}");
    assert!(count(&MALLORY.to_string()) >= 3, "{logged:?}");
    assert_eq!(count(FORGED), 0, "{logged:?}");
    assert_eq!(count(PROXY_ADDR), 0, "{logged:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_and_logs_see_the_client_behind_caddy() {
    the_real_client_address_is_seen(Proxy::Caddy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_and_logs_see_the_client_behind_nginx() {
    the_real_client_address_is_seen(Proxy::Nginx).await;
}
