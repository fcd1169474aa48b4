//! The person's side over HTTPS through the proxies: the answer page, the feed, the service
//! worker and manifest Web Push needs, and a create carrying an image (bigger than nginx's
//! default body limit of 1 MiB).

use base64::Engine as _;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::stack::{Proxy, Stack};
use super::support::{answer_yes, ask};

/// The answer page of the decision of `handle`, which must answer 200.
async fn answer_page(client: &reqwest::Client, handle: &Value) -> reqwest::Response {
    let page = client
        .get(handle["web_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    page
}

async fn the_pages_work_over_https(proxy: Proxy) {
    let Some(stack) = Stack::start(proxy, &[]).await else {
        return;
    };
    let client = stack.client();
    assert!(
        stack.sayso.feed.starts_with(&stack.public),
        "the feed link is on the public URL: {}",
        stack.sayso.feed
    );

    let handle = ask(&stack, "Ship the release?").await;
    let page = answer_page(&client, &handle).await;
    assert!(page.text().await.unwrap().contains("Ship the release?"));

    // The feed link binds the browser with a __Host- cookie (the public URL is https) and
    // sends it on to /inbox.
    let bound = stack
        .client_not_following()
        .get(&stack.sayso.feed)
        .send()
        .await
        .unwrap();
    assert_eq!(bound.status(), StatusCode::SEE_OTHER);
    assert_eq!(bound.headers()["location"], "/inbox");
    let cookies: Vec<&str> = bound
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    let device = cookies
        .iter()
        .find(|c| c.starts_with("__Host-sayso_device="))
        .unwrap_or_else(|| panic!("no __Host- device cookie: {cookies:?}"));
    assert!(
        device.contains("; Secure") && device.contains("Path=/") && !device.contains("Domain"),
        "{device}"
    );
    let feed = client
        .get(stack.url("/inbox"))
        .header("cookie", device.split(';').next().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(feed.status(), StatusCode::OK);
    let html = feed.text().await.unwrap();
    assert!(html.contains("Ship the release?"), "the feed lists it");

    // Web Push registers a service worker, which browsers allow only over HTTPS.
    for (path, kind) in [
        ("/sw.js", "javascript"),
        ("/manifest.webmanifest", "manifest"),
    ] {
        let resp = client.get(stack.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let content_type = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(content_type.contains(kind), "{path}: {content_type}");
    }

    answer_yes(&stack, &handle).await;
    answer_page(&client, &handle).await;

    // A 3 MiB image (as base64, 4 MiB of body): sayso takes up to 8 MiB.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(3 * 1024 * 1024, 0);
    let image = base64::engine::general_purpose::STANDARD.encode(&png);
    let resp = client
        .post(stack.url("/v1/decisions"))
        .bearer_auth(&stack.sayso.key)
        .json(&json!({"question": "This screenshot?", "kind": "bool", "context_image_b64": image}))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{:?}",
        resp.text().await.unwrap_or_default()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_page_and_feed_work_over_https_through_caddy() {
    the_pages_work_over_https(Proxy::Caddy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_page_and_feed_work_over_https_through_nginx() {
    the_pages_work_over_https(Proxy::Nginx).await;
}
