//! What the debug log says: routes and request ids, never tokens or keys.

use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::common;
use crate::common::first_run::StateDir;
use crate::common::process::{drain, listening_address, serve_command, stderr_lines};
use crate::common::server::{init_tls, s, send};
use crate::replica::BIN;

/// Every stderr line of a `sayso serve` at debug level, kept as it comes.
struct LoggedServer {
    _child: Child,
    base: String,
    key: String,
    _state: StateDir,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

async fn start_logging_debug(database_url: &str) -> LoggedServer {
    let state = StateDir::new();
    let mut child = serve_command(BIN, &state, database_url, Some("127.0.0.1:0"))
        .env("SAYSO_LOG", "debug")
        .spawn()
        .expect("sayso starts");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stderr = stderr_lines(&mut child);
    let address = listening_address(&mut stderr, Duration::from_secs(30), |line, _| {
        lines.lock().unwrap().push(line.to_string())
    })
    .await;
    let kept = lines.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    drain(BufReader::new(child.stdout.take().unwrap()).lines());
    let key = state.secrets().expect("the first run writes its file").key;
    LoggedServer {
        _child: child,
        base: format!("http://{address}"),
        key,
        _state: state,
        lines,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_logs_name_routes_and_request_ids_never_tokens_or_keys() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let srv = start_logging_debug(&db.url).await;
    let http = Client::new();
    let (status, handle) = send(
        http.post(format!("{}/v1/decisions", srv.base))
            .bearer_auth(&srv.key)
            .header("x-request-id", "trace-me-42")
            .json(&json!({"question": "Log me?", "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{handle}");
    let web_url = s(&handle, "web_url").to_string();
    let page = http.get(&web_url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let made_id = page.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(!made_id.is_empty(), "a request without an id gets one");
    let (status, _) = send(http.post(&web_url).json(&json!({"value": "yes"}))).await;
    assert_eq!(status, StatusCode::OK);
    let echoed = http
        .get(format!("{}/healthz", srv.base))
        .header("x-request-id", "given-id")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "given-id");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let lines = srv.lines.lock().unwrap().clone();
    let token = web_url.rsplit('/').next().unwrap();
    let all = lines.join("\n");
    assert!(!all.contains(token), "an answer token is in the logs");
    assert!(!all.contains(&srv.key), "an API key is in the logs");
    assert!(all.contains("/d/{token}"), "the route template is logged");
    let of_create: Vec<&String> = lines.iter().filter(|l| l.contains("trace-me-42")).collect();
    assert!(
        !of_create.is_empty() && of_create.iter().all(|l| l.contains("/v1/decisions")),
        "the create's lines carry its request id: {of_create:?}"
    );
    assert!(all.contains(&made_id), "a made request id is logged too");
    // Inside the request, the service's span names the work, the inbox and the decision.
    let decision_id = s(&handle, "decision_id").to_string();
    assert!(
        of_create
            .iter()
            .any(|l| l.contains("\"name\":\"create\"") && l.contains("\"inbox\":\"default\"")),
        "the create's lines carry the service span: {of_create:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"name\":\"answer\"") && l.contains(&decision_id)),
        "the answer's lines name its decision"
    );
}
