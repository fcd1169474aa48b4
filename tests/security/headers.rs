//! Every page, in every state, carries its security headers.

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use sayso::http::RateLimit;
use serde_json::json;

use crate::common::server::{TestServer, s};
use crate::support::{Db, PNG, no_redirects, random_token};

/// One row of the header table: what is fetched, and what status it must have.
struct PageCase {
    name: String,
    method: Method,
    url: String,
    form: Option<&'static str>,
    cross_site: bool,
    status: StatusCode,
}

fn case(name: impl Into<String>, url: impl Into<String>, status: StatusCode) -> PageCase {
    PageCase {
        name: name.into(),
        method: Method::GET,
        url: url.into(),
        form: None,
        cross_site: false,
        status,
    }
}

fn post(
    name: impl Into<String>,
    url: impl Into<String>,
    form: &'static str,
    status: StatusCode,
) -> PageCase {
    PageCase {
        method: Method::POST,
        form: Some(form),
        ..case(name, url, status)
    }
}

/// The headers an HTML page must carry, and what its body must not hold.
fn check_page(name: &str, h: &HeaderMap, body: &str) {
    let csp = h
        .get("content-security-policy")
        .unwrap_or_else(|| panic!("{name}: no Content-Security-Policy"))
        .to_str()
        .unwrap();
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    assert!(
        directives.contains(&"frame-ancestors 'none'"),
        "{name}: {csp}"
    );
    assert!(directives.contains(&"default-src 'none'"), "{name}: {csp}");
    let script = directives
        .iter()
        .find(|d| d.starts_with("script-src "))
        .unwrap_or_else(|| panic!("{name}: no script-src in {csp}"));
    for unsafe_source in [
        "'unsafe-inline'",
        "'unsafe-eval'",
        "data:",
        "*",
        "http:",
        "https:",
    ] {
        assert!(
            !script.split_whitespace().any(|s| s == unsafe_source),
            "{name}: {script}"
        );
    }
    assert_eq!(h["referrer-policy"], "no-referrer", "{name}");
    assert_eq!(h["x-content-type-options"], "nosniff", "{name}");
    // No inline script, which the policy would block anyway: every <script> has a src.
    let lower = body.to_ascii_lowercase();
    for (i, _) in lower.match_indices("<script") {
        let tag_end = lower[i..].find('>').map_or(lower.len(), |e| i + e);
        assert!(
            lower[i..tag_end].contains(" src="),
            "{name}: inline script at byte {i}"
        );
    }
    assert!(!lower.contains("javascript:"), "{name}: a javascript: URL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_in_every_state_carries_the_security_headers() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start_rate_limited(db.url(), RateLimit::OFF).await;
    let kinds = [
        ("bool", json!({"kind": "bool"}), "value=yes"),
        (
            "choose",
            json!({"kind": "choose", "options": ["a", "b"]}),
            "value=a",
        ),
        ("text", json!({"kind": "text"}), "value=hello"),
        (
            "form",
            json!({"kind": "form", "schema": {"properties": {"n": {"type": "integer"}}}}),
            "n=3",
        ),
        ("todo", json!({"kind": "todo"}), "action=done"),
    ];
    let mut cases = Vec::new();
    for (kind, spec, answer) in &kinds {
        let mut body = spec.clone();
        body["question"] = json!(format!("A {kind} question"));
        body["context_md"] = json!("Some *context*");
        let pending = s(&srv.create(body.clone()).await, "web_url").to_string();
        let answered = s(&srv.create(body.clone()).await, "web_url").to_string();
        let expiring = {
            let mut b = body.clone();
            b["ttl_seconds"] = json!(10);
            srv.create(b).await
        };
        cases.push(case(format!("{kind}: pending"), &pending, StatusCode::OK));
        cases.push(post(
            format!("{kind}: unknown action"),
            &pending,
            "action=explode",
            StatusCode::UNPROCESSABLE_ENTITY,
        ));
        cases.push(post(
            format!("{kind}: answered (303 to the page)"),
            &answered,
            answer,
            StatusCode::SEE_OTHER,
        ));
        cases.push(case(format!("{kind}: answered"), &answered, StatusCode::OK));
        cases.push(post(
            format!("{kind}: answered again"),
            &answered,
            answer,
            StatusCode::CONFLICT,
        ));
        cases.push(PageCase {
            cross_site: true,
            ..post(
                format!("{kind}: cross-site post"),
                &pending,
                answer,
                StatusCode::FORBIDDEN,
            )
        });
        // Expired ones last, once their ten seconds have passed.
        cases.push(case(
            format!("{kind}: expired"),
            s(&expiring, "web_url"),
            StatusCode::OK,
        ));
        cases.push(post(
            format!("{kind}: answered after expiry"),
            s(&expiring, "web_url"),
            answer,
            StatusCode::GONE,
        ));
    }
    // A form answer that fails validation is shown again with its errors.
    let form = srv
        .create(json!({"question": "Q", "kind": "form", "schema": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}}))
        .await;
    cases.push(post(
        "form: invalid answer",
        s(&form, "web_url"),
        "n=not-a-number",
        StatusCode::UNPROCESSABLE_ENTITY,
    ));
    let with_image = srv
        .create(json!({"question": "Q", "kind": "bool", "context_image_b64": PNG}))
        .await;
    let image = format!("{}/image", s(&with_image, "web_url"));
    let feed = srv.feed_url().await;
    let todo = srv.create(json!({"question": "T", "kind": "todo"})).await;
    let todo_link = s(&todo, "web_url").to_string();
    cases.extend([
        case(
            "unknown link",
            srv.url(&format!("/d/{}", random_token())),
            StatusCode::NOT_FOUND,
        ),
        post(
            "answer to an unknown link",
            srv.url(&format!("/d/{}", random_token())),
            "value=yes",
            StatusCode::NOT_FOUND,
        ),
        case("feed link (303 to /inbox)", &feed, StatusCode::SEE_OTHER),
        case(
            "feed link, one project",
            format!("{feed}?project=none"),
            StatusCode::SEE_OTHER,
        ),
        case(
            "feed of a browser not bound",
            srv.url("/inbox"),
            StatusCode::FORBIDDEN,
        ),
        post(
            "done from the feed (303 back)",
            &todo_link,
            "action=done&return=feed",
            StatusCode::SEE_OTHER,
        ),
        case(
            "unknown feed",
            srv.url(&format!("/inbox/{}", random_token())),
            StatusCode::NOT_FOUND,
        ),
        case("docs", srv.url("/docs/"), StatusCode::OK),
    ]);
    // The context image: an image, never sniffed as anything else.
    let resp = srv.client.get(&image).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert!(resp.headers().contains_key("content-security-policy"));

    // Let the ten-second decisions expire before the table is walked.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let client = no_redirects();
    for c in &cases {
        let mut req = client.request(c.method.clone(), &c.url);
        if let Some(form) = c.form {
            req = req
                .header("content-type", "application/x-www-form-urlencoded")
                .header(
                    "sec-fetch-site",
                    if c.cross_site {
                        "cross-site"
                    } else {
                        "same-origin"
                    },
                )
                .body(form);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), c.status, "{}", c.name);
        let headers = resp.headers().clone();
        let body = resp.text().await.unwrap();
        if c.status != StatusCode::SEE_OTHER {
            let ct = headers["content-type"].to_str().unwrap();
            assert!(ct.starts_with("text/html"), "{}: {ct}", c.name);
        }
        check_page(&c.name, &headers, &body);
    }

    // The pages' own assets: their type as declared and never sniffed.
    for (path, ty) in [
        ("/static/sayso.css", "text/css"),
        ("/static/feed.js", "text/javascript"),
        ("/static/icon.svg", "image/svg+xml"),
        ("/sw.js", "text/javascript"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let resp = client.get(srv.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let h = resp.headers();
        assert!(
            h["content-type"].to_str().unwrap().starts_with(ty),
            "{path}"
        );
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
    }
    srv.stop().await;
}
