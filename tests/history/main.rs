//! Exactly-once resolution under contention, proven over a recorded history: many clients
//! answer (API and page), decline, cancel and let decisions expire, all at once and on two
//! replicas of the real binary sharing one PostgreSQL database, while readers (get and
//! await) on both replicas record what they saw. `common/history/` checks the history.
//! The same workload runs on SQLite with one server.
//!
//! A second workload has decisions several people must agree on: p0..p3, added with
//! `sayso person add`, vote yes, no or decline (some twice) through their own links, taken
//! from their feeds, while cancels, expiry and readers race them; `check_votes` proves each
//! vote counted once, none acknowledged lost, and each decision resolved once, as its
//! tally says.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/history/mod.rs"]
mod history;
mod votes;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::process::SaysoProcess;
use common::server::init_tls;
use history::{
    Answer, At, Ballot, Facts, History, Intent, Look, Outcome, Read, Reply, State, Vote, VoteFacts,
    VoteHistory, Write,
};
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

/// What both workloads call: the replicas, the key the first one printed, and the
/// responses no rule allows, gathered to fail the run at its end.
struct Service {
    http: Client,
    key: String,
    bases: Vec<String>,
    unexpected: Mutex<Vec<String>>,
}

struct Clients {
    service: Service,
    history: History,
}

/// A response, or `None` when the connection failed.
async fn exchange(req: reqwest::RequestBuilder) -> Option<(StatusCode, String)> {
    let resp = req.send().await.ok()?;
    let status = resp.status();
    resp.text().await.ok().map(|body| (status, body))
}

impl Service {
    fn new(servers: &[SaysoProcess], key: String) -> Self {
        Service {
            http: Client::builder()
                .redirect(redirect::Policy::none())
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            key,
            bases: servers.iter().map(|s| s.base.clone()).collect(),
            unexpected: Mutex::new(Vec::new()),
        }
    }

    fn unexpected(&self, what: String) {
        eprintln!("UNEXPECTED: {what}");
        self.unexpected.lock().unwrap().push(what);
    }

    /// A page's form post, as a browser sends it.
    fn form_post(&self, url: &str, pairs: &[(&str, &str)]) -> reqwest::RequestBuilder {
        self.http
            .post(url)
            .header("Sec-Fetch-Site", "same-origin")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(pairs))
    }

    fn cancel(&self, base: &str, id: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{base}/v1/decisions/{id}/cancel"))
            .bearer_auth(&self.key)
            .json(&json!({"reason": "history test"}))
    }

    /// Sends a resolving call (`what` on `replica`) and sorts its response: a form post
    /// wins with a redirect, a JSON call with the decision's new state.
    async fn resolving(
        &self,
        req: reqwest::RequestBuilder,
        form: bool,
        what: &str,
        replica: usize,
    ) -> (At, At, Outcome) {
        let invoked = now();
        let result = exchange(req).await;
        let returned = now();
        let outcome = match result {
            None => {
                self.unexpected(format!("{what} on replica {replica}: no response"));
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
                self.unexpected(format!("{what} on replica {replica}: {status} {body}"));
                Outcome::Other(status.as_u16(), body)
            }
        };
        (invoked, returned, outcome)
    }

    /// A get (`await_s` None) or an await of decision `id` on one replica: when it was
    /// invoked and returned, which it was, and the decision it showed (None when the
    /// response was unexpected).
    async fn read(
        &self,
        id: &str,
        replica: usize,
        await_s: Option<u64>,
    ) -> (At, At, &'static str, Option<Value>) {
        let replica = replica % self.bases.len();
        let base = &self.bases[replica];
        let (path, via) = match await_s {
            Some(s) => (format!("/v1/decisions/{id}/await?timeout_s={s}"), "await"),
            None => (format!("/v1/decisions/{id}"), "get"),
        };
        let invoked = now();
        let result = exchange(
            self.http
                .get(format!("{base}{path}"))
                .bearer_auth(&self.key),
        )
        .await;
        let returned = now();
        let seen = match result {
            Some((StatusCode::OK, body)) => {
                Some(serde_json::from_str(&body).unwrap_or(Value::Null))
            }
            Some((status, body)) => {
                self.unexpected(format!("{via} on replica {replica}: {status} {body}"));
                None
            }
            None => {
                self.unexpected(format!("{via} on replica {replica}: no response"));
                None
            }
        };
        (invoked, returned, via, seen)
    }

    /// Creates decision number `i` from `body` through replica `i` (in turn); returns what
    /// the service answered.
    async fn create(&self, i: usize, body: &Value) -> Value {
        let base = &self.bases[i % self.bases.len()];
        let (status, text) = exchange(
            self.http
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&self.key)
                .json(body),
        )
        .await
        .expect("create answered");
        assert_eq!(status, StatusCode::CREATED, "{text}");
        serde_json::from_str(&text).unwrap()
    }

    /// A GET of `path` on the first replica, which must succeed.
    async fn get(&self, path: &str) -> Value {
        let req = self
            .http
            .get(format!("{}{path}", self.bases[0]))
            .bearer_auth(&self.key);
        let (status, body) = exchange(req).await.expect("the service answered");
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Fails the run if any response broke the rules.
    fn assert_no_unexpected(&self) {
        let unexpected = self.unexpected.lock().unwrap().clone();
        assert!(
            unexpected.is_empty(),
            "unexpected responses: {unexpected:#?}"
        );
    }
}

impl Clients {
    async fn resolve(&self, t: &Target, call: Call, replica: usize, value: String) {
        let service = &self.service;
        let base = &service.bases[replica];
        let page = format!("{base}/d/{}", t.token);
        let (intent, req, form) = match call {
            Call::ApiAnswer => (
                Intent::Answer(json!(value)),
                service.http.post(&page).json(&json!({"value": value})),
                false,
            ),
            Call::PageAnswer => (
                Intent::Answer(json!(value)),
                service.form_post(&page, &[("action", "answer"), ("value", &value)]),
                true,
            ),
            Call::ApiDecline => (
                Intent::Decline,
                service.http.post(&page).json(&json!({"action": "decline"})),
                false,
            ),
            Call::PageDecline => (
                Intent::Decline,
                service.form_post(&page, &[("action", "decline")]),
                true,
            ),
            Call::Cancel => (Intent::Cancel, service.cancel(base, &t.id), false),
        };
        let (invoked, returned, outcome) = service
            .resolving(req, form, &format!("{call:?}"), replica)
            .await;
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
        let (invoked, returned, via, seen) = self.service.read(&t.id, replica, await_s).await;
        if let Some(seen) = seen {
            self.history.read(Read {
                decision: t.id.clone(),
                invoked,
                returned,
                seen: State::of(&seen),
                via,
            });
        }
    }
}

/// Moves a decision's `expires_at`. The API's shortest TTL is 10 s; the run sets 1–3 s in
/// the store so expiry races the answers within a short test. Every rule reads `expires_at`
/// from the row, so this is the state a 1–3 s TTL would have made.
async fn set_expires_at(url: &str, ids: &[&str], at: &[At]) {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        let mut tx = conn.begin().await.unwrap();
        for (id, at) in ids.iter().zip(at) {
            let ms = i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap();
            sqlx::query("UPDATE decisions SET expires_at = ? WHERE id = ?")
                .bind(ms)
                .bind(id)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
        let _ = conn.close().await;
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        let mut tx = conn.begin().await.unwrap();
        for (id, at) in ids.iter().zip(at) {
            sqlx::query("UPDATE decisions SET expires_at = $1 WHERE id = $2")
                .bind(*at)
                .bind(Uuid::parse_str(id).unwrap())
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
        let _ = conn.close().await;
    }
}

/// `replicas` servers of the database at `url`, and the key the first one printed.
async fn start_replicas(url: &str, replicas: usize) -> (Vec<SaysoProcess>, String) {
    let first = SaysoProcess::start(BIN, url).await;
    let key = first.key.clone().expect("the first run writes a key");
    let mut servers = vec![first];
    for _ in 1..replicas {
        servers.push(SaysoProcess::start(BIN, url).await);
    }
    (servers, key)
}

/// `n` moments 1–3 s after `start`, in whole milliseconds as the service keeps its times.
fn expiries(rng: &mut StdRng, start: At, n: usize) -> Vec<At> {
    (0..n)
        .map(|_| {
            let at = start + Duration::from_millis(rng.random_range(1000..3000));
            at.replace_nanosecond(at.nanosecond() / 1_000_000 * 1_000_000)
                .unwrap()
        })
        .collect()
}

/// Starts the clock of a run half a second from now and sets the decisions `ids` to expire
/// 1–3 s after it; returns the start (to time calls from), its wall time, and the expiries.
async fn start_clock(
    url: &str,
    rng: &mut StdRng,
    ids: &[&str],
) -> (tokio::time::Instant, At, Vec<At>) {
    let start = tokio::time::Instant::now() + Duration::from_millis(500);
    let start_wall = now() + Duration::from_millis(500);
    let expiries = expiries(rng, start_wall, ids.len());
    set_expires_at(url, ids, &expiries).await;
    (start, start_wall, expiries)
}

/// When a reader looks, on which replica, and whether it awaits (for how many seconds) or
/// gets: some time in the run's first four seconds.
fn plan_read(rng: &mut StdRng, start: tokio::time::Instant, replicas: usize) -> ReadPlan {
    ReadPlan {
        at: start + Duration::from_millis(rng.random_range(0..4000)),
        replica: rng.random_range(0..replicas),
        await_s: rng.random_bool(0.5).then(|| rng.random_range(1..=3)),
    }
}

struct ReadPlan {
    at: tokio::time::Instant,
    replica: usize,
    await_s: Option<u64>,
}

/// The calls of a run, each waiting for its moment.
#[derive(Default)]
struct Schedule {
    tasks: tokio::task::JoinSet<()>,
}

impl Schedule {
    fn at(&mut self, at: tokio::time::Instant, call: impl Future<Output = ()> + Send + 'static) {
        self.tasks.spawn(async move {
            tokio::time::sleep_until(at).await;
            call.await;
        });
    }

    /// Waits for every call, failing on any that panicked.
    async fn run(mut self) {
        while let Some(r) = self.tasks.join_next().await {
            r.unwrap();
        }
    }
}

/// The decision's `expires_at`, as the service shows it.
fn expires_at(decision: &Value) -> At {
    OffsetDateTime::parse(decision["expires_at"].as_str().unwrap(), &Rfc3339).unwrap()
}

/// The summary of a history that passed its check, or a panic listing what it broke.
fn passed<S>(checked: Result<S, Vec<String>>, run: &str, seed: u64) -> S {
    checked.unwrap_or_else(|errors| {
        panic!(
            "{run} (SAYSO_HISTORY_SEED={seed}): {} violations:\n{}",
            errors.len(),
            errors.join("\n")
        )
    })
}

/// The median and the largest of the calls' latencies, in milliseconds.
fn latency_p50_max(calls: impl Iterator<Item = (At, At)>) -> (i128, i128) {
    let mut latency: Vec<i128> = calls
        .map(|(invoked, returned)| (returned - invoked).whole_milliseconds())
        .collect();
    latency.sort_unstable();
    (latency[latency.len() / 2], latency[latency.len() - 1])
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
    let (servers, key) = start_replicas(url, replicas).await;
    let clients = Arc::new(Clients {
        service: Service::new(&servers, key),
        history: History::default(),
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
        let v = clients.service.create(i, &body).await;
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
    let ids: Vec<&str> = targets.iter().map(|t| t.id.as_str()).collect();
    let (start, _, _) = start_clock(url, &mut rng, &ids).await;

    let mut schedule = Schedule::default();
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
            schedule.at(at, async move { c.resolve(&t, call, replica, value).await });
        }
        for _ in 0..2 {
            let r = plan_read(&mut rng, start, replicas);
            let (c, t) = (clients.clone(), t.clone());
            schedule.at(r.at, async move { c.read(&t, r.replica, r.await_s).await });
        }
    }
    schedule.run().await;
    let elapsed = start.elapsed();

    // What the service says now (every decision has expired or resolved by now), and the
    // resolution events the store kept.
    let events = common::db::resolution_events(url).await;
    let mut facts = HashMap::new();
    for t in &targets {
        let body = clients
            .service
            .get(&format!("/v1/decisions/{}", t.id))
            .await;
        facts.insert(
            t.id.clone(),
            Some(Facts {
                expires_at: expires_at(&body),
                state: State::of(&body),
                resolution_events: events.get(&t.id).map_or(0, |(_, n)| *n as u64),
            }),
        );
    }
    for s in servers {
        s.kill().await;
    }
    let recorded = clients.history.snapshot();
    let (p50, max) = latency_p50_max(recorded.writes.iter().map(|w| (w.invoked, w.returned)));
    let summary = passed(history::check(&recorded, &facts), backend, seed);
    let mut finals: HashMap<String, usize> = HashMap::new();
    for f in facts.values().flatten() {
        *finals.entry(f.state.status.clone()).or_default() += 1;
    }
    eprintln!(
        "{backend}, {replicas} replica(s): {decisions} decisions, {calls} resolving calls and \
         {} reads in {elapsed:.1?}; resolving call latency p50 {p50} ms, max {max} ms; \
         final states {finals:?}; {summary:?}",
        recorded.reads.len(),
    );
    clients.service.assert_no_unexpected();
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
