//! Who may not talk to the MCP endpoint: no key or a bad one, a host not allowed, a page from
//! another origin.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_bad_key_is_refused_with_401() {
    let (_db, srv) = fresh_server().await;
    assert!(connect_with(&srv, "sk_not_a_key").await.is_err());
    for auth in [None, Some("Bearer sk_wrong")] {
        let mut req = initialize(&srv);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let (status, body) = send(req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"]["code"], "unauthorized");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_is_not_allowed_is_refused() {
    let (_db, srv) = fresh_server().await;
    let req = |host: &str| initialize(&srv).bearer_auth(&srv.key).header("host", host);
    let resp = req("evil.example.com").send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = req("localhost").send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_from_another_origin_is_refused() {
    let (_db, srv) = fresh_server().await;
    let req = || initialize(&srv).bearer_auth(&srv.key);
    for evil in ["https://evil.example", "null", "http://localhost:1"] {
        let resp = req().header("origin", evil).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{evil}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "origin_not_allowed", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("SAYSO_MCP_ALLOWED_ORIGINS"), "{message}");
    }
    // The server's own pages, and clients that send no Origin, are served.
    let own = req()
        .header("origin", srv.base.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), StatusCode::OK);
    assert_eq!(req().send().await.unwrap().status(), StatusCode::OK);
}
