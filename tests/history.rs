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

fn http_client() -> Client {
    Client::builder()
        .redirect(redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
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
        http: http_client(),
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
    let expiries = expiries(&mut rng, start_wall, targets.len());
    let ids: Vec<&str> = targets.iter().map(|t| t.id.as_str()).collect();
    set_expires_at(url, &ids, &expiries).await;

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
    http: Client,
    key: String,
    bases: Vec<String>,
    history: VoteHistory,
    unexpected: Mutex<Vec<String>>,
}

impl Voters {
    fn unexpected(&self, what: String) {
        eprintln!("UNEXPECTED: {what}");
        self.unexpected.lock().unwrap().push(what);
    }

    async fn cast(&self, p: &Poll, cast: Cast, replica: usize) {
        let base = &self.bases[replica];
        let req = match &cast {
            Cast::Vote { person, vote, page } => {
                let url = format!("{base}/a/{}", p.links[person]);
                if *page {
                    let pairs: &[(&str, &str)] = match vote {
                        Vote::Yes => &[("value", "yes")],
                        Vote::No => &[("value", "no")],
                        Vote::Decline => &[("action", "decline")],
                    };
                    self.http
                        .post(&url)
                        .header("Sec-Fetch-Site", "same-origin")
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .body(form_body(pairs))
                } else {
                    let body = match vote {
                        Vote::Yes => json!({"value": "yes"}),
                        Vote::No => json!({"value": "no"}),
                        Vote::Decline => json!({"action": "decline"}),
                    };
                    self.http.post(&url).json(&body)
                }
            }
            Cast::Cancel => self
                .http
                .post(format!("{base}/v1/decisions/{}/cancel", p.id))
                .bearer_auth(&self.key)
                .json(&json!({"reason": "history test"})),
        };
        let invoked = now();
        let result = exchange(req).await;
        let returned = now();
        let form = matches!(cast, Cast::Vote { page: true, .. });
        let outcome = match result {
            None => {
                self.unexpected(format!("{cast:?} on replica {replica}: no response"));
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
                self.unexpected(format!("{cast:?} on replica {replica}: {status} {body}"));
                Outcome::Other(status.as_u16(), body)
            }
        };
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
        let replica = replica % self.bases.len();
        let base = &self.bases[replica];
        let (path, via) = match await_s {
            Some(s) => (
                format!("/v1/decisions/{}/await?timeout_s={s}", p.id),
                "await",
            ),
            None => (format!("/v1/decisions/{}", p.id), "get"),
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
            Some((StatusCode::OK, body)) => {
                let body = serde_json::from_str(&body).unwrap_or(Value::Null);
                self.history.look(Look {
                    decision: p.id.clone(),
                    invoked,
                    returned,
                    seen: State::of(&body),
                    answers: Answer::list(&body),
                    via,
                });
            }
            Some((status, body)) => {
                self.unexpected(format!("{via} on replica {replica}: {status} {body}"))
            }
            None => self.unexpected(format!("{via} on replica {replica}: no response")),
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
        http: http_client(),
        key,
        bases: servers.iter().map(|s| s.base.clone()).collect(),
        history: VoteHistory::default(),
        unexpected: Mutex::new(Vec::new()),
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
        let base = &voters.bases[i % replicas];
        let (status, text) = exchange(
            voters
                .http
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&voters.key)
                .json(&body),
        )
        .await
        .expect("create answered");
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
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
            common::server::feed_pages(&format!("{}/inbox/{token}", voters.bases[0])).await;
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
    let start = tokio::time::Instant::now() + Duration::from_millis(500);
    let start_wall = now() + Duration::from_millis(500);
    let expiries = expiries(&mut rng, start_wall, polls.len());
    let ids: Vec<&str> = polls.iter().map(|p| p.id.as_str()).collect();
    set_expires_at(url, &ids, &expiries).await;

    let mut tasks = tokio::task::JoinSet::new();
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
            tasks.spawn(async move {
                tokio::time::sleep_until(at).await;
                v.cast(&p, cast, replica).await;
            });
        }
        for _ in 0..2 {
            let at = start + Duration::from_millis(rng.random_range(0..4000));
            let replica = rng.random_range(0..replicas);
            let await_s = rng.random_bool(0.5).then(|| rng.random_range(1..=3));
            let (v, p) = (voters.clone(), p.clone());
            tasks.spawn(async move {
                tokio::time::sleep_until(at).await;
                v.look(&p, replica, await_s).await;
            });
        }
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let elapsed = start.elapsed();

    // What the service says now (every decision has expired or resolved by now): its
    // answers and rule, its resolution events, and its trail's votes.
    let events = common::db::resolution_events(url).await;
    let mut facts = HashMap::new();
    for p in &polls {
        let get = |path: String| {
            let req = voters
                .http
                .get(format!("{}{path}", voters.bases[0]))
                .bearer_auth(&voters.key);
            async move {
                let (status, body) = exchange(req).await.expect("the service answered");
                assert_eq!(status, StatusCode::OK, "{path}: {body}");
                serde_json::from_str::<Value>(&body).unwrap()
            }
        };
        let body = get(format!("/v1/decisions/{}", p.id)).await;
        let trail = get(format!("/v1/decisions/{}/events", p.id)).await;
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
                expires_at: OffsetDateTime::parse(body["expires_at"].as_str().unwrap(), &Rfc3339)
                    .unwrap(),
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
    let mut latency: Vec<i128> = recorded
        .ballots
        .iter()
        .map(|b| (b.returned - b.invoked).whole_milliseconds())
        .collect();
    latency.sort_unstable();
    let summary = history::check_votes(&recorded, &facts).unwrap_or_else(|errors| {
        panic!(
            "{backend} votes (SAYSO_HISTORY_SEED={seed}): {} violations:\n{}",
            errors.len(),
            errors.join("\n")
        )
    });
    let unexpected = voters.unexpected.lock().unwrap().clone();
    eprintln!(
        "{backend} votes, {replicas} replica(s): {decisions} decisions, {votes} votes, \
         {cancels} cancels and {} reads in {elapsed:.1?}; vote latency p50 {} ms, max {} ms; \
         {summary:?}",
        recorded.looks.len(),
        latency[latency.len() / 2],
        latency[latency.len() - 1],
    );
    assert!(
        unexpected.is_empty(),
        "unexpected responses: {unexpected:#?}"
    );
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
