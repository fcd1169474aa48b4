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

mod common;
#[path = "common/history/mod.rs"]
mod history;

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

// Decisions several people must agree on: votes through each person's own link.

const PEOPLE: [&str; 4] = ["p0", "p1", "p2", "p3"];

/// One decision of the votes run: who it asks, and each one's person link token (`/a/…`).
#[derive(Clone)]
struct Poll {
    id: String,
    question: String,
    approvers: Vec<String>,
    links: HashMap<String, String>,
}

/// One call of the votes run.
#[derive(Clone, Debug)]
enum Cast {
    /// A person votes, through the API (JSON) or the page's form (`page`).
    Vote {
        person: String,
        vote: Vote,
        page: bool,
    },
    Cancel,
}

struct Voters {
    service: Service,
    history: VoteHistory,
}

impl Voters {
    async fn cast(&self, p: &Poll, cast: Cast, replica: usize) {
        let service = &self.service;
        let base = &service.bases[replica];
        let req = match &cast {
            Cast::Vote { person, vote, page } => {
                let url = format!("{base}/a/{}", p.links[person]);
                if *page {
                    let pairs: &[(&str, &str)] = match vote {
                        Vote::Yes => &[("value", "yes")],
                        Vote::No => &[("value", "no")],
                        Vote::Decline => &[("action", "decline")],
                    };
                    service.form_post(&url, pairs)
                } else {
                    let body = match vote {
                        Vote::Yes => json!({"value": "yes"}),
                        Vote::No => json!({"value": "no"}),
                        Vote::Decline => json!({"action": "decline"}),
                    };
                    service.http.post(&url).json(&body)
                }
            }
            Cast::Cancel => service.cancel(base, &p.id),
        };
        let form = matches!(cast, Cast::Vote { page: true, .. });
        let (invoked, returned, outcome) = service
            .resolving(req, form, &format!("{cast:?}"), replica)
            .await;
        match cast {
            Cast::Vote { person, vote, page } => self.history.ballot(Ballot {
                decision: p.id.clone(),
                person,
                vote,
                invoked,
                returned,
                reply: match outcome {
                    Outcome::Won(state) => Reply::Ok(state),
                    Outcome::Conflict => Reply::Conflict,
                    Outcome::Gone => Reply::Gone,
                    Outcome::Unknown => Reply::Unknown,
                    Outcome::Other(status, body) => Reply::Other(status, body),
                },
                via: if page { "page vote" } else { "api vote" },
            }),
            Cast::Cancel => self.history.cancel(Write {
                decision: p.id.clone(),
                intent: Intent::Cancel,
                invoked,
                returned,
                outcome,
                via: "cancel",
            }),
        }
        // Read your write, on the other replica.
        self.look(p, replica + 1, None).await;
    }

    /// A get (`await_s` None) or an await on one replica, with the answers it shows.
    async fn look(&self, p: &Poll, replica: usize, await_s: Option<u64>) {
        let (invoked, returned, via, seen) = self.service.read(&p.id, replica, await_s).await;
        if let Some(seen) = seen {
            self.history.look(Look {
                decision: p.id.clone(),
                invoked,
                returned,
                seen: State::of(&seen),
                answers: Answer::list(&seen),
                via,
            });
        }
    }
}

/// Adds `name` to the inbox `default` with `sayso person add`, as an operator would;
/// returns the token of the feed link it prints.
async fn add_person(url: &str, name: &str) -> String {
    let out = tokio::process::Command::new(BIN)
        .args(["person", "add", name, "--inbox", "default"])
        .env("SAYSO_DATABASE_URL", url)
        .env("SAYSO_LOG", "warn")
        .env_remove("SAYSO_PUBLIC_URL")
        .output()
        .await
        .expect("sayso person add runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sayso person add {name}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.trim().split_once("/inbox/").map(|(_, t)| t.to_string()))
        .unwrap_or_else(|| panic!("sayso person add {name} printed no feed link: {stdout}"))
}

/// The person links of a feed page (templates/feed.html), each with the question its item
/// shows: `(token, question)`.
fn feed_links(html: &str) -> Vec<(String, String)> {
    const HREF: &str = "href=\"/a/";
    const QUESTION: &str = "<span class=\"item-q\">";
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(HREF) {
        rest = &rest[i + HREF.len()..];
        let Some(end) = rest.find('"') else { break };
        let token = rest[..end].to_string();
        rest = &rest[end..];
        // The item's question, before the next link.
        let next = rest.find("href=").unwrap_or(rest.len());
        if let Some(q) = rest[..next].find(QUESTION) {
            let q = &rest[q + QUESTION.len()..];
            if let Some(e) = q.find("</span>") {
                found.push((token, q[..e].to_string()));
            }
        }
    }
    found
}

/// Runs the votes workload on `decisions` decisions, each asking three or four of p0..p3
/// and needing two or three of them to say yes, across `replicas` servers of one database,
/// and checks the recorded history.
async fn contended_votes_run(url: &str, backend: &str, replicas: usize, decisions: usize) {
    init_tls();
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed();
    eprintln!("{backend} votes: SAYSO_HISTORY_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let (servers, key) = start_replicas(url, replicas).await;
    let mut feeds = Vec::new();
    for person in PEOPLE {
        feeds.push((person, add_person(url, person).await));
    }
    let voters = Arc::new(Voters {
        service: Service::new(&servers, key),
        history: VoteHistory::default(),
    });

    // The decisions, made through every replica in turn.
    let mut polls = Vec::new();
    for i in 0..decisions {
        let mut approvers: Vec<String> = PEOPLE.map(String::from).to_vec();
        if rng.random_bool(0.5) {
            approvers.remove(rng.random_range(0..approvers.len()));
        }
        let question = format!("Vote {i}?");
        let body = json!({"question": question, "kind": "bool", "approvers": approvers,
                          "required": rng.random_range(2..=3), "notify": "none",
                          "ttl_seconds": 10});
        let v = voters.service.create(i, &body).await;
        let id = v["decision_id"].as_str().unwrap().to_string();
        voters.history.created(&id);
        polls.push(Poll {
            id,
            question,
            approvers,
            links: HashMap::new(),
        });
    }
    // Each person's links, from their own feed: it lists exactly the decisions asking them.
    for (person, token) in &feeds {
        // Every page of it: the feed lists its pending items a page at a time.
        let (status, pages) =
            common::server::feed_pages(&format!("{}/inbox/{token}", voters.service.bases[0])).await;
        assert_eq!(status, StatusCode::OK, "{person}'s feed: {pages:?}");
        let links: HashMap<String, String> = pages
            .iter()
            .flat_map(|html| feed_links(html))
            .map(|(token, question)| (question, token))
            .collect();
        for p in &mut polls {
            let asked = p.approvers.iter().any(|a| a == person);
            match links.get(&p.question) {
                Some(token) if asked => {
                    p.links.insert(person.to_string(), token.clone());
                }
                None if !asked => {}
                found => panic!(
                    "{person}'s feed links {:?} to {found:?}, but approvers are {:?}",
                    p.question, p.approvers
                ),
            }
        }
    }

    // Everything below is timed from `start`; each decision expires 1–3 s after it.
    let ids: Vec<&str> = polls.iter().map(|p| p.id.as_str()).collect();
    let (start, start_wall, expiries) = start_clock(url, &mut rng, &ids).await;

    let mut schedule = Schedule::default();
    let (mut votes, mut cancels) = (0, 0);
    for (p, expiry) in polls.iter().zip(&expiries) {
        let pick = |rng: &mut StdRng| p.approvers[rng.random_range(0..p.approvers.len())].clone();
        let vote = |rng: &mut StdRng| match rng.random_range(0..100) {
            0..70 => Vote::Yes,
            70..85 => Vote::No,
            _ => Vote::Decline,
        };
        // The contenders fire together, within 15 ms of a moment up to 2 s before or
        // 0.3 s after the decision's expiry (it takes several votes to agree, and a loaded
        // machine takes its time with each); some decisions get none and simply expire.
        // Some have had one yes well before.
        let expiry_ms = (*expiry - start_wall).whole_milliseconds() as i64;
        let race = (expiry_ms + rng.random_range(-2000..300)).max(100) as u64;
        let mut plan: Vec<(u64, Cast)> = Vec::new();
        if rng.random_bool(0.5) {
            let person = pick(&mut rng);
            plan.push((
                rng.random_range(0..race),
                Cast::Vote {
                    person,
                    vote: Vote::Yes,
                    page: false,
                },
            ));
        }
        let contenders = match rng.random_range(0..100) {
            0..10 => 0,
            10..35 => 2,
            35..70 => 3,
            _ => 4,
        };
        for _ in 0..contenders {
            let at = race + rng.random_range(0..15);
            if rng.random_range(0..100) < 12 {
                plan.push((at, Cast::Cancel));
                continue;
            }
            let earlier: Vec<&String> = plan
                .iter()
                .filter_map(|(_, c)| match c {
                    Cast::Vote { person, .. } => Some(person),
                    Cast::Cancel => None,
                })
                .collect();
            // Sometimes a person votes again, the same or otherwise.
            let person = if !earlier.is_empty() && rng.random_bool(0.25) {
                earlier[rng.random_range(0..earlier.len())].clone()
            } else {
                pick(&mut rng)
            };
            let vote = vote(&mut rng);
            plan.push((
                at,
                Cast::Vote {
                    person,
                    vote,
                    page: rng.random_bool(0.25),
                },
            ));
        }
        for (at, cast) in plan {
            match cast {
                Cast::Vote { .. } => votes += 1,
                Cast::Cancel => cancels += 1,
            }
            let at = start + Duration::from_millis(at);
            let replica = rng.random_range(0..replicas);
            let (v, p) = (voters.clone(), p.clone());
            schedule.at(at, async move { v.cast(&p, cast, replica).await });
        }
        for _ in 0..2 {
            let r = plan_read(&mut rng, start, replicas);
            let (v, p) = (voters.clone(), p.clone());
            schedule.at(r.at, async move { v.look(&p, r.replica, r.await_s).await });
        }
    }
    schedule.run().await;
    let elapsed = start.elapsed();

    // What the service says now (every decision has expired or resolved by now): its
    // answers and rule, its resolution events, and its trail's votes.
    let events = common::db::resolution_events(url).await;
    let mut facts = HashMap::new();
    for p in &polls {
        let body = voters.service.get(&format!("/v1/decisions/{}", p.id)).await;
        let trail = voters
            .service
            .get(&format!("/v1/decisions/{}/events", p.id))
            .await;
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|n| n.as_str().unwrap_or("<none>").to_string())
                .collect()
        };
        facts.insert(
            p.id.clone(),
            Some(VoteFacts {
                expires_at: expires_at(&body),
                state: State::of(&body),
                approvers: names(&body["routing"]["approvers"]),
                required: body["routing"]["required"].as_u64().unwrap_or(0) as usize,
                answers: Answer::list(&body),
                resolution_events: events.get(&p.id).map_or(0, |(_, n)| *n as u64),
                voted: trail["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| e["kind"] == "voted")
                    .map(|e| e["detail"]["person"].as_str().unwrap_or("<none>").into())
                    .collect(),
            }),
        );
    }
    for s in servers {
        s.kill().await;
    }
    let recorded = voters.history.snapshot();
    let (p50, max) = latency_p50_max(recorded.ballots.iter().map(|b| (b.invoked, b.returned)));
    let run = format!("{backend} votes");
    let summary = passed(history::check_votes(&recorded, &facts), &run, seed);
    eprintln!(
        "{backend} votes, {replicas} replica(s): {decisions} decisions, {votes} votes, \
         {cancels} cancels and {} reads in {elapsed:.1?}; vote latency p50 {p50} ms, \
         max {max} ms; {summary:?}",
        recorded.looks.len(),
    );
    voters.service.assert_no_unexpected();
    // The run had contention of every kind: votes counted and repeated, decisions resolved
    // by a quorum, by a veto, by a cancel and by expiry with votes counted, races lost to a
    // vote and to expiry, and reads that saw both states.
    let s = &summary;
    assert!(s.counted >= 20 && s.repeated >= 10, "{s:?}");
    assert!(s.quorum >= 2 && s.vetoed >= 3 && s.cancelled >= 3, "{s:?}");
    assert!(s.expired >= 5 && s.expired_with_answers >= 3, "{s:?}");
    assert!(s.conflicts >= 10 && s.gone >= 5, "{s:?}");
    assert!(s.reads_resolved >= 50, "{s:?}");
    assert!(s.reads - s.reads_resolved >= 20, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_count_each_vote_once_and_resolve_each_decision_once() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    contended_votes_run(&db.url, "postgres", 2, 100).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sqlite_server_counts_each_vote_once_and_resolves_each_decision_once() {
    let db = common::db::fresh_sqlite_url();
    contended_votes_run(&db.url, "sqlite", 1, 100).await;
}
