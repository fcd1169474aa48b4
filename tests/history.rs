//! Exactly-once resolution under contention, proven over a recorded history: many clients
//! answer (API and page), decline, cancel and let decisions expire, all at once and on two
//! replicas of the real binary sharing one PostgreSQL database, while readers (get and
//! await) on both replicas record what they saw. `common/history/` checks the history.
//! The same workload runs on SQLite with one server.

mod common;
#[path = "common/history/mod.rs"]
mod history;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::process::SaysoProcess;
use common::server::init_tls;
use history::{At, Facts, History, Intent, Outcome, Read, State, Write};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::{Client, StatusCode, redirect};
use serde_json::{Value, json};
use sqlx::Connection;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

const BIN: &str = env!("CARGO_BIN_EXE_sayso");
const COLORS: [&str; 3] = ["red", "green", "blue"];

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn now() -> At {
    OffsetDateTime::now_utc()
}

fn seed() -> u64 {
    match std::env::var("SAYSO_HISTORY_SEED") {
        Ok(s) => s.parse().expect("SAYSO_HISTORY_SEED is a number"),
        Err(_) => rand::rng().random(),
    }
}

/// One decision of the run, with the link its page is answered through.
#[derive(Clone)]
struct Target {
    id: String,
    token: String,
    choose: bool,
}

/// One resolving call.
#[derive(Clone, Copy, Debug)]
enum Call {
    ApiAnswer,
    PageAnswer,
    ApiDecline,
    PageDecline,
    Cancel,
}

struct Clients {
    http: Client,
    key: String,
    bases: Vec<String>,
    history: History,
    unexpected: Mutex<Vec<String>>,
}

/// A response, or `None` when the connection failed.
async fn exchange(req: reqwest::RequestBuilder) -> Option<(StatusCode, String)> {
    let resp = req.send().await.ok()?;
    let status = resp.status();
    resp.text().await.ok().map(|body| (status, body))
}

impl Clients {
    fn unexpected(&self, what: String) {
        eprintln!("UNEXPECTED: {what}");
        self.unexpected.lock().unwrap().push(what);
    }

    async fn resolve(&self, t: &Target, call: Call, replica: usize, value: String) {
        let base = &self.bases[replica];
        let page = format!("{base}/d/{}", t.token);
        let (intent, req, form) = match call {
            Call::ApiAnswer => (
                Intent::Answer(json!(value)),
                self.http.post(&page).json(&json!({"value": value})),
                false,
            ),
            Call::PageAnswer => (
                Intent::Answer(json!(value)),
                self.http
                    .post(&page)
                    .header("Sec-Fetch-Site", "same-origin")
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(form_body(&[("action", "answer"), ("value", &value)])),
                true,
            ),
            Call::ApiDecline => (
                Intent::Decline,
                self.http.post(&page).json(&json!({"action": "decline"})),
                false,
            ),
            Call::PageDecline => (
                Intent::Decline,
                self.http
                    .post(&page)
                    .header("Sec-Fetch-Site", "same-origin")
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(form_body(&[("action", "decline")])),
                true,
            ),
            Call::Cancel => (
                Intent::Cancel,
                self.http
                    .post(format!("{base}/v1/decisions/{}/cancel", t.id))
                    .bearer_auth(&self.key)
                    .json(&json!({"reason": "history test"})),
                false,
            ),
        };
        let invoked = now();
        let result = exchange(req).await;
        let returned = now();
        let outcome = match result {
            None => {
                self.unexpected(format!("{call:?} on replica {replica}: no response"));
                Outcome::Unknown
            }
            Some((StatusCode::OK, body)) if !form => Outcome::Won(Some(State::of(
                &serde_json::from_str(&body).unwrap_or(Value::Null),
            ))),
            Some((StatusCode::SEE_OTHER, _)) if form => Outcome::Won(None),
            Some((StatusCode::CONFLICT, _)) => Outcome::Conflict,
            Some((StatusCode::GONE, _)) => Outcome::Gone,
            Some((status, body)) => {
                let body: String = body.chars().take(300).collect();
                self.unexpected(format!("{call:?} on replica {replica}: {status} {body}"));
                Outcome::Other(status.as_u16(), body)
            }
        };
        self.history.write(Write {
            decision: t.id.clone(),
            intent,
            invoked,
            returned,
            outcome,
            via: match call {
                Call::ApiAnswer => "api answer",
                Call::PageAnswer => "page answer",
                Call::ApiDecline => "api decline",
                Call::PageDecline => "page decline",
                Call::Cancel => "cancel",
            },
        });
        // Read your write, on the other replica.
        self.read(t, replica + 1, None).await;
    }

    /// A get (`await_s` None) or an await on one replica.
    async fn read(&self, t: &Target, replica: usize, await_s: Option<u64>) {
        let replica = replica % self.bases.len();
        let base = &self.bases[replica];
        let (path, via) = match await_s {
            Some(s) => (
                format!("/v1/decisions/{}/await?timeout_s={s}", t.id),
                "await",
            ),
            None => (format!("/v1/decisions/{}", t.id), "get"),
        };
        let invoked = now();
        let result = exchange(
            self.http
                .get(format!("{base}{path}"))
                .bearer_auth(&self.key),
        )
        .await;
        let returned = now();
        match result {
            Some((StatusCode::OK, body)) => self.history.read(Read {
                decision: t.id.clone(),
                invoked,
                returned,
                seen: State::of(&serde_json::from_str(&body).unwrap_or(Value::Null)),
                via,
            }),
            Some((status, body)) => {
                self.unexpected(format!("{via} on replica {replica}: {status} {body}"))
            }
            None => self.unexpected(format!("{via} on replica {replica}: no response")),
        }
    }
}

/// Moves a decision's `expires_at`. The API's shortest TTL is 10 s; the run sets 1–3 s in
/// the store so expiry races the answers within a short test. Every rule reads `expires_at`
/// from the row, so this is the state a 1–3 s TTL would have made.
async fn set_expires_at(url: &str, targets: &[Target], at: &[At]) {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        let mut tx = conn.begin().await.unwrap();
        for (t, at) in targets.iter().zip(at) {
            let ms = i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap();
            sqlx::query("UPDATE decisions SET expires_at = ? WHERE id = ?")
                .bind(ms)
                .bind(&t.id)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
        let _ = conn.close().await;
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        let mut tx = conn.begin().await.unwrap();
        for (t, at) in targets.iter().zip(at) {
            sqlx::query("UPDATE decisions SET expires_at = $1 WHERE id = $2")
                .bind(*at)
                .bind(Uuid::parse_str(&t.id).unwrap())
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
        let _ = conn.close().await;
    }
}

/// Runs the contended workload on `decisions` decisions across `replicas` servers of one
/// database and checks the recorded history.
async fn contended_run(url: &str, backend: &str, replicas: usize, decisions: usize) {
    init_tls();
    // One run at a time: each wants the machine's two cores to itself.
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed();
    eprintln!("{backend}: SAYSO_HISTORY_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let first = SaysoProcess::start(BIN, url).await;
    let key = first.key.clone().expect("the first run prints a key");
    let mut servers = vec![first];
    for _ in 1..replicas {
        servers.push(SaysoProcess::start(BIN, url).await);
    }
    let clients = Arc::new(Clients {
        http: Client::builder()
            .redirect(redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
        key,
        bases: servers.iter().map(|s| s.base.clone()).collect(),
        history: History::default(),
        unexpected: Mutex::new(Vec::new()),
    });

    // The decisions, made through every replica in turn.
    let mut targets = Vec::new();
    for i in 0..decisions {
        let choose = i % 3 == 0;
        let mut body = json!({"question": format!("Contended {i}?"), "kind": "text",
                              "notify": "none", "ttl_seconds": 10});
        if choose {
            body["kind"] = json!("choose");
            body["options"] = json!(COLORS);
        }
        let base = &clients.bases[i % replicas];
        let (status, text) = exchange(
            clients
                .http
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&clients.key)
                .json(&body),
        )
        .await
        .expect("create answered");
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        let id = v["decision_id"].as_str().unwrap().to_string();
        clients.history.created(&id);
        targets.push(Target {
            token: v["web_url"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .into(),
            id,
            choose,
        });
    }
    // Everything below is timed from `start`; each decision expires 1–3 s after it.
    let start = tokio::time::Instant::now() + Duration::from_millis(500);
    let start_wall = now() + Duration::from_millis(500);
    let expiries: Vec<At> = targets
        .iter()
        .map(|_| {
            let at = start_wall + Duration::from_millis(rng.random_range(1000..3000));
            // Whole milliseconds, as the service keeps its times.
            at.replace_nanosecond(at.nanosecond() / 1_000_000 * 1_000_000)
                .unwrap()
        })
        .collect();
    set_expires_at(url, &targets, &expiries).await;

    let mut tasks = tokio::task::JoinSet::new();
    let mut calls = 0;
    for (n, t) in targets.iter().enumerate() {
        // The contenders fire together, within 15 ms of a moment that may fall before or
        // after the decision's expiry; some decisions get none and simply expire.
        let race = rng.random_range(200..3300);
        let contenders = match rng.random_range(0..100) {
            0..12 => 0,
            12..40 => 2,
            40..75 => 3,
            _ => 4,
        };
        for j in 0..contenders {
            let call = match rng.random_range(0..100) {
                0..35 => Call::ApiAnswer,
                35..55 => Call::PageAnswer,
                55..63 => Call::ApiDecline,
                63..70 => Call::PageDecline,
                _ => Call::Cancel,
            };
            let value = if t.choose {
                COLORS[rng.random_range(0..COLORS.len())].to_string()
            } else {
                format!("answer {n}.{j}")
            };
            let at = start + Duration::from_millis(race + rng.random_range(0..15));
            let replica = rng.random_range(0..replicas);
            let (c, t) = (clients.clone(), t.clone());
            calls += 1;
            tasks.spawn(async move {
                tokio::time::sleep_until(at).await;
                c.resolve(&t, call, replica, value).await;
            });
        }
        for _ in 0..2 {
            let at = start + Duration::from_millis(rng.random_range(0..4000));
            let replica = rng.random_range(0..replicas);
            let await_s = rng.random_bool(0.5).then(|| rng.random_range(1..=3));
            let (c, t) = (clients.clone(), t.clone());
            tasks.spawn(async move {
                tokio::time::sleep_until(at).await;
                c.read(&t, replica, await_s).await;
            });
        }
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let elapsed = start.elapsed();

    // What the service says now (every decision has expired or resolved by now), and the
    // resolution events the store kept.
    let events = common::db::resolution_events(url).await;
    let mut facts = HashMap::new();
    for t in &targets {
        let (status, body) = exchange(
            clients
                .http
                .get(format!("{}/v1/decisions/{}", clients.bases[0], t.id))
                .bearer_auth(&clients.key),
        )
        .await
        .unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        facts.insert(
            t.id.clone(),
            Some(Facts {
                expires_at: OffsetDateTime::parse(body["expires_at"].as_str().unwrap(), &Rfc3339)
                    .unwrap(),
                state: State::of(&body),
                resolution_events: events.get(&t.id).map_or(0, |(_, n)| *n as u64),
            }),
        );
    }
    for s in servers {
        s.kill().await;
    }
    let recorded = clients.history.snapshot();
    let mut latency: Vec<i128> = recorded
        .writes
        .iter()
        .map(|w| (w.returned - w.invoked).whole_milliseconds())
        .collect();
    latency.sort_unstable();
    let summary = history::check(&recorded, &facts).unwrap_or_else(|errors| {
        panic!(
            "{backend} (SAYSO_HISTORY_SEED={seed}): {} violations:\n{}",
            errors.len(),
            errors.join("\n")
        )
    });
    let unexpected = clients.unexpected.lock().unwrap().clone();
    let mut finals: HashMap<String, usize> = HashMap::new();
    for f in facts.values().flatten() {
        *finals.entry(f.state.status.clone()).or_default() += 1;
    }
    eprintln!(
        "{backend}, {replicas} replica(s): {decisions} decisions, {calls} resolving calls and \
         {} reads in {elapsed:.1?}; resolving call latency p50 {} ms, max {} ms; \
         final states {finals:?}; {summary:?}",
        recorded.reads.len(),
        latency[latency.len() / 2],
        latency[latency.len() - 1],
    );
    assert!(
        unexpected.is_empty(),
        "unexpected responses: {unexpected:#?}"
    );
    // The run had contention of every kind: races lost to a call and to expiry, and reads
    // that saw both states.
    assert!(summary.conflicts >= 10, "{summary:?}");
    assert!(summary.gone >= 5, "{summary:?}");
    assert!(summary.expired >= 5, "{summary:?}");
    assert!(summary.reads_resolved >= 50, "{summary:?}");
    assert!(summary.reads - summary.reads_resolved >= 10, "{summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_resolve_each_contended_decision_once() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    contended_run(&db.url, "postgres", 2, 120).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sqlite_server_resolves_each_contended_decision_once() {
    let db = common::db::fresh_sqlite_url();
    contended_run(&db.url, "sqlite", 1, 120).await;
}

/// A browser's form body, `application/x-www-form-urlencoded`.
fn form_body(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}
