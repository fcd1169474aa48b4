//! `GET /metrics` of the real `sayso serve`, read by the Prometheus project's own parser
//! (`prometheus_client` from PyPI, tests/prometheus_parse.py): a scrape parses, and its
//! counters moved exactly as the traffic between two scrapes did. Also: no token, no
//! metrics; `SAYSO_METRICS_LISTEN` serves them on an address of their own only.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::process::SaysoProcess;
use common::python::Venv;
use common::server::init_tls;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_sayso");
const TOKEN: &str = "scrape-me-4a1f";

fn parser() -> Option<&'static PathBuf> {
    static VENV: Venv = Venv::new(
        "prometheus-venv",
        "prometheus_client",
        &["prometheus-client"],
        "the Prometheus text parser (prometheus-client from PyPI)",
    );
    VENV.python()
}

/// One scrape, parsed: sample name with its labels (sorted, `name{a="x",b="y"}`) → value.
type Scrape = BTreeMap<String, f64>;

fn parse(python: &Path, text: &str) -> Scrape {
    let out = common::python::run_script(python, "tests/prometheus_parse.py", &[], text.as_bytes());
    assert!(
        out.status.success(),
        "the Prometheus parser refused the scrape: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let labels: BTreeMap<String, String> =
                serde_json::from_value(v["labels"].clone()).unwrap();
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
            let key = if labels.is_empty() {
                v["name"].as_str().unwrap().to_string()
            } else {
                format!("{}{{{}}}", v["name"].as_str().unwrap(), labels.join(","))
            };
            (key, v["value"].as_f64().unwrap())
        })
        .collect()
}

async fn scrape_text(client: &Client, base: &str, token: Option<&str>) -> (StatusCode, String) {
    let mut req = client.get(format!("{base}/metrics"));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// How much a sample grew between two scrapes (absent counts as 0).
fn moved(before: &Scrape, after: &Scrape, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

/// Traffic between two scrapes, then the counters checked against it.
async fn counters_move_with_traffic(database_url: &str) {
    let Some(python) = parser() else { return };
    let srv = SaysoProcess::start_with_env(
        BIN,
        database_url,
        &[
            ("SAYSO_METRICS_TOKEN", TOKEN),
            // A small burst, so the last requests below are refused and counted.
            ("SAYSO_RATE_LIMIT_PER_S", "1"),
            ("SAYSO_RATE_LIMIT_BURST", "200"),
        ],
    )
    .await;
    let key = srv.key.clone().expect("the first run writes a key");
    let client = {
        init_tls();
        Client::new()
    };

    let (status, text) = scrape_text(&client, &srv.base, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let before = parse(python, &text);
    assert_eq!(before["sayso_database_up"], 1.0);

    let create = |body: Value| {
        client
            .post(format!("{}/v1/decisions", srv.base))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let mut handles = vec![];
    for body in [
        json!({"question": "Deploy?", "kind": "bool", "notify": "none"}),
        json!({"question": "Migrate?", "kind": "bool", "notify": "none"}),
        json!({"question": "Which?", "kind": "choose", "options": ["a", "b"], "notify": "none"}),
    ] {
        let resp = create(body).await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        handles.push(resp.json::<Value>().await.unwrap());
    }
    let id = handles[0]["decision_id"].as_str().unwrap();
    // Answered while an await is parked: the await returns answered.
    let awaiting = client
        .get(format!("{}/v1/decisions/{id}/await?timeout_s=30", srv.base))
        .bearer_auth(&key)
        .send();
    let answer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let web_url = handles[0]["web_url"].as_str().unwrap();
        let resp = client
            .post(web_url)
            .json(&json!({"value": "yes"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    };
    let (awaited, ()) = tokio::join!(awaiting, answer);
    assert_eq!(
        awaited.unwrap().json::<Value>().await.unwrap()["status"],
        "answered"
    );
    let cancel = client
        .post(format!(
            "{}/v1/decisions/{}/cancel",
            srv.base,
            handles[2]["decision_id"].as_str().unwrap()
        ))
        .bearer_auth(&key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), StatusCode::OK);
    let missing = client
        .get(format!("{}/v1/decisions/{}", srv.base, uuid::Uuid::nil()))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    // Past the burst: refused by the per-key limit, whatever the exact count.
    let mut refused = 0;
    for _ in 0..260 {
        let resp = client
            .get(format!("{}/v1/usage", srv.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        if resp.status() == StatusCode::TOO_MANY_REQUESTS {
            refused += 1;
        }
    }
    assert!(refused > 0, "the burst was never exceeded");

    let (status, text) = scrape_text(&client, &srv.base, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let after = parse(python, &text);

    let requests = |method: &str, route: &str, status: u16| {
        format!(
            "sayso_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}}"
        )
    };
    assert_eq!(
        moved(&before, &after, &requests("POST", "/v1/decisions", 201)),
        3.0
    );
    assert_eq!(
        moved(&before, &after, &requests("POST", "/d/{token}", 200)),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            &requests("GET", "/v1/decisions/{id}/await", 200)
        ),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            &requests("POST", "/v1/decisions/{id}/cancel", 200)
        ),
        1.0
    );
    assert_eq!(
        moved(&before, &after, &requests("GET", "/v1/decisions/{id}", 404)),
        1.0
    );
    assert_eq!(
        moved(&before, &after, &requests("GET", "/v1/usage", 429)),
        f64::from(refused)
    );
    assert_eq!(
        moved(&before, &after, "sayso_rate_limited_total{limit=\"key\"}"),
        f64::from(refused)
    );
    // The histogram counts what the counter counts, and its buckets are cumulative.
    let latency = "sayso_http_request_duration_seconds";
    let creates = "method=\"POST\",route=\"/v1/decisions\"";
    assert_eq!(
        moved(&before, &after, &format!("{latency}_count{{{creates}}}")),
        3.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            &format!("{latency}_bucket{{le=\"+Inf\",{creates}}}")
        ),
        3.0
    );
    // The await was held for about 300 ms: not in the 1 ms bucket, in the 1 s one.
    let awaits = "method=\"GET\",route=\"/v1/decisions/{id}/await\"";
    assert_eq!(
        moved(
            &before,
            &after,
            &format!("{latency}_bucket{{le=\"0.001\",{awaits}}}")
        ),
        0.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            &format!("{latency}_bucket{{le=\"1.0\",{awaits}}}")
        ),
        1.0
    );

    assert_eq!(
        moved(
            &before,
            &after,
            "sayso_decisions_created_total{kind=\"bool\"}"
        ),
        2.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "sayso_decisions_created_total{kind=\"choose\"}"
        ),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "sayso_decisions_resolved_total{kind=\"bool\",status=\"answered\"}"
        ),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "sayso_decisions_resolved_total{kind=\"choose\",status=\"cancelled\"}"
        ),
        1.0
    );
    // States read at the scrape: one bool left pending, nothing choose; no await parked now.
    assert_eq!(after["sayso_decisions_pending{kind=\"bool\"}"], 1.0);
    assert_eq!(after["sayso_decisions_pending{kind=\"choose\"}"], 0.0);
    assert_eq!(after["sayso_awaits_parked"], 0.0);
    assert_eq!(after["sayso_database_up"], 1.0);
    // Every pool says how many connections it may open, and none is in use beyond it.
    let pools: Vec<&String> = after
        .keys()
        .filter(|k| k.starts_with("sayso_db_connections_max{"))
        .collect();
    assert!(!pools.is_empty(), "no pool in the scrape");
    for max in pools {
        let pool = max.trim_start_matches("sayso_db_connections_max");
        let in_use = format!(
            "sayso_db_connections{{{},state=\"in_use\"}}",
            pool.trim_matches(['{', '}'])
        );
        assert!(after[&in_use] <= after[max], "{in_use} over {max}");
    }
    // The scrape itself is not a decision: route labels are templates, never tokens or ids.
    assert!(
        !text.contains(id) && !text.contains("/d/AZ"),
        "a scrape names an id or a token"
    );
    srv.kill().await;
}

#[tokio::test]
async fn sqlite_counters_move_with_traffic() {
    let db = common::db::fresh_sqlite_url();
    counters_move_with_traffic(&db.url).await;
}

#[tokio::test]
async fn postgres_counters_move_with_traffic() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    counters_move_with_traffic(&db.url).await;
}

#[tokio::test]
async fn metrics_need_the_token_and_do_not_exist_without_one() {
    let db = common::db::fresh_sqlite_url();
    let client = {
        init_tls();
        Client::new()
    };

    let srv = SaysoProcess::start_with_env(BIN, &db.url, &[("SAYSO_METRICS_TOKEN", TOKEN)]).await;
    let (status, body) = scrape_text(&client, &srv.base, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("SAYSO_METRICS_TOKEN"), "{body}");
    let (status, _) = scrape_text(&client, &srv.base, Some("not-the-token")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // An API key is not the metrics token.
    let (status, _) = scrape_text(&client, &srv.base, srv.key.as_deref()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = scrape_text(&client, &srv.base, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    srv.kill().await;

    let srv = SaysoProcess::start(BIN, &db.url).await;
    let (status, _) = scrape_text(&client, &srv.base, Some(TOKEN)).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "/metrics without SAYSO_METRICS_TOKEN"
    );
    srv.kill().await;
}

#[tokio::test]
async fn metrics_listen_serves_them_on_their_own_address_only() {
    let Some(python) = parser() else { return };
    let db = common::db::fresh_sqlite_url();
    let port = common::port::free_port();
    let address = format!("127.0.0.1:{port}");
    let srv = SaysoProcess::start_with_env(
        BIN,
        &db.url,
        &[
            ("SAYSO_METRICS_TOKEN", TOKEN),
            ("SAYSO_METRICS_LISTEN", &address),
        ],
    )
    .await;
    let client = {
        init_tls();
        Client::new()
    };
    let (status, _) = scrape_text(&client, &srv.base, Some(TOKEN)).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "/metrics on the main address"
    );
    let own = format!("http://{address}");
    // The listener comes up beside the main one; give it a moment.
    let mut scraped = None;
    for _ in 0..50 {
        if let Ok(resp) = client
            .get(format!("{own}/metrics"))
            .bearer_auth(TOKEN)
            .send()
            .await
        {
            scraped = Some((resp.status(), resp.text().await.unwrap()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, text) = scraped.expect("the metrics address answers");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(parse(python, &text)["sayso_database_up"], 1.0);
    let (status, _) = scrape_text(&client, &own, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Only /metrics lives there.
    let resp = client.get(format!("{own}/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    srv.kill().await;
}

#[test]
fn metrics_listen_without_a_token_is_refused_at_start() {
    let out = Command::new(BIN)
        .args(["serve"])
        .env("SAYSO_DATABASE_URL", "sqlite::memory:")
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_METRICS_LISTEN", "127.0.0.1:0")
        .env_remove("SAYSO_METRICS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SAYSO_METRICS_LISTEN") && stderr.contains("SAYSO_METRICS_TOKEN"),
        "{stderr}"
    );
}
