//! A `--wait` that outlives a server restart, and a proxy's 503 or lost answer retried without
//! asking twice.

use super::*;

/// A `sayso serve` process on a fixed address and a SQLite file.
async fn start_server_process(database_url: &str, listen: &str) -> (Child, Option<String>) {
    let state = common::first_run::StateDir::new();
    let mut child = serve_command(BIN, &state, database_url, Some(listen))
        .arg("serve")
        .spawn()
        .expect("sayso serve starts");
    let mut err = stderr_lines(&mut child);
    listening_address(&mut err, Duration::from_secs(30), |_, _| {}).await;
    drain(err);
    drain(BufReader::new(child.stdout.take().unwrap()).lines());
    // The first run writes its key before the server listens.
    let key = state.secrets().map(|s| s.key);
    (child, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_a_server_restart_in_the_middle() {
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    let port = common::port::free_port();
    let listen = format!("127.0.0.1:{port}");
    let base = format!("http://{listen}");
    let (mut first, key) = start_server_process(&db.url, &listen).await;
    let key = key.expect("the first run writes a key");

    let w = start_waiting(
        &base,
        &key,
        &[
            "ask",
            "Ship it after the restart?",
            "--kind",
            "bool",
            "--wait",
        ],
    )
    .await;
    // Let the client park its await, then take the server away from under it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    first.kill().await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut w = w;
    assert!(
        w.child.try_wait().unwrap().is_none(),
        "the client must keep waiting while the server is down"
    );

    let (_second, again) = start_server_process(&db.url, &listen).await;
    assert_eq!(again, None, "the same database: no second first run");
    let client = reqwest::Client::new();
    let resp = client
        .post(&w.link)
        .json(&json!({"value": "yes"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let id = w.id.clone();
    let (code, out, err) = w.finish().await;
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["decision_id"], id.as_str());
    assert_eq!(
        (&out["status"], &out["outcome"]),
        (&json!("answered"), &json!(true))
    );
    assert!(err.contains("retrying"), "the client saw the outage: {err}");
}

/// A load balancer in front of `upstream` that has no healthy backend for its first
/// `unavailable` requests (503 with `Retry-After`), then forwards; the answer to the first
/// create it forwards is lost on the way back (502), after the server made the decision.
async fn flaky_proxy(upstream: String, unavailable: usize) -> String {
    use axum::body::{Body, Bytes};
    use axum::http::{HeaderMap, Method, Response, Uri};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let seen = Arc::new(AtomicUsize::new(0));
    let lost = Arc::new(AtomicBool::new(false));
    let http = reqwest::Client::new();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let (seen, lost, http) = (seen.clone(), lost.clone(), http.clone());
        let upstream = upstream.clone();
        async move {
            if seen.fetch_add(1, Ordering::SeqCst) < unavailable {
                return Response::builder()
                    .status(503)
                    .header("retry-after", "1")
                    .body(Body::from("<html>no healthy upstream</html>"))
                    .unwrap();
            }
            let create = method == Method::POST;
            let mut req = http.request(method, format!("{upstream}{uri}")).body(body);
            for name in ["authorization", "content-type", "idempotency-key"] {
                if let Some(v) = headers.get(name) {
                    req = req.header(name, v);
                }
            }
            let resp = req.send().await.unwrap();
            if create && !lost.swap(true, Ordering::SeqCst) {
                return Response::builder()
                    .status(502)
                    .body(Body::from("upstream connection reset"))
                    .unwrap();
            }
            let status = resp.status();
            Response::builder()
                .status(status)
                .body(Body::from(resp.bytes().await.unwrap()))
                .unwrap()
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_or_a_lost_answer_from_a_proxy_is_retried_and_asks_only_once() {
    let (_db, srv) = fresh_server().await;
    let proxy = flaky_proxy(srv.base.clone(), 3).await;
    let w = start_waiting(
        &proxy,
        &srv.key,
        &["ask", "Through the balancer?", "--kind", "bool", "--wait"],
    )
    .await;
    srv.answer(&w.link, json!({"value": "yes"})).await;
    let (code, out, _) = w.finish().await;
    assert_eq!((code, &out["outcome"]), (0, &json!(true)), "{out}");
    let (_, list) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    // The create was made twice (its first answer was lost): one decision all the same.
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
}
