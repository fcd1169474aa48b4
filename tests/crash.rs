//! Crash safety: the real `sayso` process is SIGKILLed ten times at random moments under a
//! steady mix of creates, answers (API and page) and awaits, and restarted on the same
//! database each time. Nothing acknowledged may be lost and nothing may resolve twice; calls
//! cut off by a kill are "unknown" and may have taken effect or not.
//!
//! The run is reproducible in its choices (not in its timing) with `SAYSO_CRASH_SEED`; the
//! seed is printed.

mod common;
#[path = "common/history/mod.rs"]
mod history;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::http::json_of;
use common::process::SaysoProcess;
use common::server::init_tls;
use history::{At, Facts, History, Intent, Outcome, Read, State, Write};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::{Client, StatusCode, redirect};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::watch;

const BIN: &str = env!("CARGO_BIN_EXE_sayso");
const KILLS: usize = 10;
const WRITERS: u64 = 3;
const AWAITERS: u64 = 4;
/// How long a decision stays unanswered at least.
const RIPE: Duration = Duration::from_millis(1000);
const COLORS: [&str; 3] = ["red", "green", "blue"];

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Clone, Copy, Debug)]
enum Kind {
    Bool,
    Choose,
    Text,
}

/// A decision whose create was acknowledged.
#[derive(Clone)]
struct Tracked {
    id: String,
    token: String,
    kind: Kind,
    created: std::time::Instant,
}

struct Run {
    seed: u64,
    key: String,
    base: watch::Receiver<String>,
    client: Client,
    history: History,
    /// Acknowledged decisions nobody has tried to answer yet (or whose answer was cut off).
    open: Mutex<Vec<Tracked>>,
    all: Mutex<Vec<Tracked>>,
    stop: AtomicBool,
    /// Responses no call should ever get (5xx, or a status the contract does not name).
    unexpected: Mutex<Vec<String>>,
    creates_cut_off: AtomicUsize,
    creates_replayed: AtomicUsize,
    awaits_cut_off: AtomicUsize,
}

fn now() -> At {
    OffsetDateTime::now_utc()
}

fn seed() -> u64 {
    match std::env::var("SAYSO_CRASH_SEED") {
        Ok(s) => s.parse().expect("SAYSO_CRASH_SEED is a number"),
        Err(_) => rand::rng().random(),
    }
}

impl Run {
    fn base(&self) -> String {
        self.base.borrow().clone()
    }

    /// After a failed connection: wait for the next server (or a moment, if it is the same).
    async fn wait_for_restart(&self, failed_on: &str) {
        let mut rx = self.base.clone();
        if *rx.borrow_and_update() != failed_on {
            return;
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), rx.changed()).await;
    }

    fn unexpected(&self, what: String) {
        eprintln!("UNEXPECTED: {what}");
        self.unexpected.lock().unwrap().push(what);
    }

    /// Creates a decision, retrying a cut-off create with the same Idempotency-Key until it
    /// gets a definite answer: a replay (200) of a create that did commit, or a new 201.
    async fn create(&self, n: u64, rng: &mut StdRng) {
        let kind = match rng.random_range(0..3) {
            0 => Kind::Bool,
            1 => Kind::Choose,
            _ => Kind::Text,
        };
        let body = match kind {
            Kind::Bool => json!({"question": format!("Crash {n}?"), "kind": "bool"}),
            Kind::Choose => {
                json!({"question": format!("Crash {n}?"), "kind": "choose", "options": COLORS})
            }
            Kind::Text => json!({"question": format!("Crash {n}?"), "kind": "text"}),
        };
        let mut body = body;
        body["notify"] = json!("none");
        let idem = format!("crash-{}-{n}", self.seed);
        let mut cut_off = false;
        loop {
            let base = self.base();
            let sent = self
                .client
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&self.key)
                .header("Idempotency-Key", &idem)
                .json(&body)
                .send()
                .await;
            let resp = match sent {
                Ok(r) => r,
                Err(_) => {
                    cut_off = true;
                    self.wait_for_restart(&base).await;
                    continue;
                }
            };
            let status = resp.status();
            let Ok(text) = resp.text().await else {
                cut_off = true;
                self.wait_for_restart(&base).await;
                continue;
            };
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            match status {
                StatusCode::CREATED | StatusCode::OK => {
                    if cut_off {
                        self.creates_cut_off.fetch_add(1, Ordering::Relaxed);
                    }
                    if status == StatusCode::OK {
                        self.creates_replayed.fetch_add(1, Ordering::Relaxed);
                        if !cut_off {
                            self.unexpected(format!("a first create was a replay: {text}"));
                        }
                    }
                    let id = v["decision_id"].as_str().unwrap().to_string();
                    let token = v["web_url"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                        .to_string();
                    self.history.created(&id);
                    let t = Tracked {
                        id,
                        token,
                        kind,
                        created: std::time::Instant::now(),
                    };
                    self.all.lock().unwrap().push(t.clone());
                    self.open.lock().unwrap().push(t);
                }
                _ => self.unexpected(format!("create got {status}: {text}")),
            }
            return;
        }
    }

    /// Answers an open decision through the JSON API or the page's form, once.
    async fn answer(&self, n: u64, rng: &mut StdRng, page: bool) {
        // Decisions stay open a while first, so awaits park on them (and across kills).
        let picked = {
            let mut open = self.open.lock().unwrap();
            let ripe: Vec<usize> = (0..open.len())
                .filter(|i| open[*i].created.elapsed() >= RIPE)
                .collect();
            (!ripe.is_empty()).then(|| open.swap_remove(ripe[rng.random_range(0..ripe.len())]))
        };
        let Some(t) = picked else {
            return self.create(n, rng).await;
        };
        // Values a test can tell apart: every text answer is unique.
        let (form_value, outcome) = match t.kind {
            Kind::Bool => {
                let yes = rng.random_bool(0.5);
                (if yes { "yes" } else { "no" }.to_string(), json!(yes))
            }
            Kind::Choose => {
                let c = COLORS[rng.random_range(0..COLORS.len())];
                (c.to_string(), json!(c))
            }
            Kind::Text => {
                let s = format!("answer {} {n}", self.seed);
                (s.clone(), json!(s))
            }
        };
        let base = self.base();
        let url = format!("{base}/d/{}", t.token);
        let req = if page {
            self.client
                .post(&url)
                .header("Sec-Fetch-Site", "same-origin")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(form_body(&[
                    ("action", "answer"),
                    ("value", form_value.as_str()),
                ]))
        } else {
            self.client
                .post(&url)
                .json(&json!({"action": "answer", "value": outcome}))
        };
        let invoked = now();
        let result = match req.send().await {
            Ok(r) => {
                let status = r.status();
                r.text().await.map(|body| (status, body))
            }
            Err(e) => Err(e),
        };
        let returned = now();
        let outcome_of_call = match &result {
            Err(_) => Outcome::Unknown,
            Ok((StatusCode::OK, body)) if !page => Outcome::Won(Some(State::of(
                &serde_json::from_str(body).unwrap_or(Value::Null),
            ))),
            Ok((StatusCode::SEE_OTHER, _)) if page => Outcome::Won(None),
            Ok((StatusCode::CONFLICT, _)) => Outcome::Conflict,
            Ok((StatusCode::GONE, _)) => Outcome::Gone,
            Ok((status, body)) => Outcome::Other(status.as_u16(), body.chars().take(300).collect()),
        };
        if let Outcome::Other(status, body) = &outcome_of_call {
            self.unexpected(format!("answer got {status}: {body}"));
        }
        let cut_off = outcome_of_call == Outcome::Unknown;
        self.history.write(Write {
            decision: t.id.clone(),
            intent: Intent::Answer(outcome),
            invoked,
            returned,
            outcome: outcome_of_call,
            via: if page { "page answer" } else { "api answer" },
        });
        if cut_off {
            // Sometimes answer again, with another value, as a person would reload and retry.
            if rng.random_bool(0.5) {
                self.open.lock().unwrap().push(t);
            }
            self.wait_for_restart(&base).await;
        }
    }

    async fn writer(self: Arc<Self>, index: u64) {
        let mut rng = StdRng::seed_from_u64(self.seed.wrapping_add(index));
        let mut n = index * 1_000_000;
        while !self.stop.load(Ordering::Relaxed) {
            n += 1;
            match rng.random_range(0..100) {
                0..40 => self.create(n, &mut rng).await,
                40..75 => self.answer(n, &mut rng, false).await,
                _ => self.answer(n, &mut rng, true).await,
            }
            tokio::time::sleep(Duration::from_millis(rng.random_range(5..25))).await;
        }
    }

    /// Awaits open decisions (and sometimes any decision); an await cut off by a kill is sent
    /// again, as an agent would, once the server is back.
    async fn awaiter(self: Arc<Self>, index: u64) {
        let mut rng = StdRng::seed_from_u64(self.seed.wrapping_add(1000 + index));
        while !self.stop.load(Ordering::Relaxed) {
            let picked = {
                let open = self.open.lock().unwrap();
                let all = self.all.lock().unwrap();
                let from = if open.is_empty() || rng.random_bool(0.2) {
                    &all
                } else {
                    &open
                };
                (!from.is_empty()).then(|| from[rng.random_range(0..from.len())].clone())
            };
            let Some(t) = picked else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let timeout_s = rng.random_range(1..=4);
            let mut reissued = false;
            loop {
                let base = self.base();
                let invoked = now();
                let sent = self
                    .client
                    .get(format!(
                        "{base}/v1/decisions/{}/await?timeout_s={timeout_s}",
                        t.id
                    ))
                    .bearer_auth(&self.key)
                    .send()
                    .await;
                let result = match sent {
                    Ok(r) => {
                        let status = r.status();
                        r.text().await.map(|body| (status, body))
                    }
                    Err(e) => Err(e),
                };
                let returned = now();
                match result {
                    Ok((StatusCode::OK, body)) => {
                        let seen = State::of(&serde_json::from_str(&body).unwrap_or(Value::Null));
                        self.history.read(Read {
                            decision: t.id.clone(),
                            invoked,
                            returned,
                            seen,
                            via: if reissued { "re-sent await" } else { "await" },
                        });
                        break;
                    }
                    Ok((status, body)) => {
                        self.unexpected(format!("await got {status}: {body}"));
                        break;
                    }
                    Err(_) => {
                        if self.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if reissued {
                            // Cut off again: the servers live shorter than this await's
                            // timeout. Give it up and wait on another decision, so every
                            // awaiter keeps having awaits parked when kills come.
                            break;
                        }
                        self.awaits_cut_off.fetch_add(1, Ordering::Relaxed);
                        reissued = true;
                        self.wait_for_restart(&base).await;
                    }
                }
            }
        }
    }
}

async fn crash_run(database_url: &str, backend: &str) {
    init_tls();
    // One run at a time: each wants the machine's two cores to itself.
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed();
    eprintln!("{backend}: SAYSO_CRASH_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut server = SaysoProcess::start(BIN, database_url).await;
    let key = server.key.clone().expect("the first run writes a key");
    let (base_tx, base_rx) = watch::channel(server.base.clone());
    let run = Arc::new(Run {
        seed,
        key,
        base: base_rx,
        client: Client::builder()
            .redirect(redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        history: History::default(),
        open: Mutex::new(Vec::new()),
        all: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        unexpected: Mutex::new(Vec::new()),
        creates_cut_off: AtomicUsize::new(0),
        creates_replayed: AtomicUsize::new(0),
        awaits_cut_off: AtomicUsize::new(0),
    });
    let mut tasks = Vec::new();
    for i in 0..WRITERS {
        tasks.push(tokio::spawn(run.clone().writer(i)));
    }
    for i in 0..AWAITERS {
        tasks.push(tokio::spawn(run.clone().awaiter(i)));
    }

    let started = std::time::Instant::now();
    for _ in 0..KILLS {
        tokio::time::sleep(Duration::from_millis(rng.random_range(800..2400))).await;
        server.kill().await;
        server = SaysoProcess::start(BIN, database_url).await;
        assert_eq!(server.key, None, "a restart made a new inbox");
        base_tx.send(server.base.clone()).unwrap();
    }
    // A last stretch with no kill, so cut-off calls are retried against a live server.
    tokio::time::sleep(Duration::from_secs(2)).await;
    run.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let load_time = started.elapsed();

    // What the service says now about every decision the history names, and what the store
    // kept: the resolution events of every decision in the database.
    let events = common::db::resolution_events(database_url).await;
    for (id, (status, n)) in &events {
        let want = i64::from(status != "pending");
        assert_eq!(*n, want, "{id} is {status} with {n} resolution events");
    }
    let recorded = run.history.snapshot();
    let mut facts = HashMap::new();
    let base = server.base.clone();
    for id in recorded
        .created
        .iter()
        .chain(recorded.writes.iter().map(|w| &w.decision))
    {
        if facts.contains_key(id) {
            continue;
        }
        let resp = run
            .client
            .get(format!("{base}/v1/decisions/{id}"))
            .bearer_auth(&run.key)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        let fact = match status {
            StatusCode::OK => Some(Facts {
                expires_at: OffsetDateTime::parse(body["expires_at"].as_str().unwrap(), &Rfc3339)
                    .unwrap(),
                state: State::of(&body),
                resolution_events: events.get(id).map_or(0, |(_, n)| *n as u64),
            }),
            StatusCode::NOT_FOUND => None,
            other => panic!("get {id}: {other} {body}"),
        };
        facts.insert(id.clone(), fact);
    }
    // The audit trail the API shows agrees with the table, for the decisions a kill cut a
    // call of (and a sample of the others).
    let cut: std::collections::HashSet<&String> = recorded
        .writes
        .iter()
        .filter(|w| w.outcome == Outcome::Unknown)
        .map(|w| &w.decision)
        .collect();
    let mut audited = 0;
    for (i, id) in facts.keys().enumerate() {
        if !cut.contains(id) && i % 20 != 0 {
            continue;
        }
        let body: Value = json_of(
            run.client
                .get(format!("{base}/v1/decisions/{id}/events"))
                .bearer_auth(&run.key),
        )
        .await;
        let shown = body["items"]
            .as_array()
            .unwrap_or_else(|| panic!("events of {id}: {body}"))
            .iter()
            .filter(|e| {
                ["answered", "declined", "cancelled", "expired"]
                    .contains(&e["kind"].as_str().unwrap())
            })
            .count();
        let kept = events.get(id).map_or(0, |(_, n)| *n);
        assert_eq!(shown as i64, kept, "{id}: the API shows {body}");
        audited += 1;
    }
    eprintln!("{backend}: audit trails of {audited} decisions compared");
    server.kill().await;

    let unexpected = run.unexpected.lock().unwrap().clone();
    let summary = history::check(&recorded, &facts).unwrap_or_else(|errors| {
        panic!(
            "{backend} (SAYSO_CRASH_SEED={seed}): {} violations:\n{}",
            errors.len(),
            errors.join("\n")
        )
    });
    // Awaits cut off by a kill and sent again: how they ended, and how many of them parked on
    // a pending decision and were woken by an answer sent after they were.
    let resent: Vec<&Read> = recorded
        .reads
        .iter()
        .filter(|r| r.via == "re-sent await")
        .collect();
    let woken = resent
        .iter()
        .filter(|r| !r.seen.is_pending())
        .filter(|r| {
            recorded.writes.iter().any(|w| {
                w.decision == r.decision
                    && matches!(w.outcome, Outcome::Won(_))
                    && w.invoked > r.invoked
            })
        })
        .count();
    eprintln!(
        "{backend}: {KILLS} kills in {load_time:.1?}; {} decisions in the store, {} acknowledged \
         ({} creates cut off and retried, {} of them replays); {} answers acknowledged, \
         {} refused 409, {} cut off; {} awaits and gets, {} cut off by a kill and sent again \
         ({} returned resolved, {} of those woken by a later answer, {} still pending); {summary:?}",
        events.len(),
        recorded.created.len(),
        run.creates_cut_off.load(Ordering::Relaxed),
        run.creates_replayed.load(Ordering::Relaxed),
        summary.won,
        summary.conflicts,
        summary.unknown,
        recorded.reads.len(),
        run.awaits_cut_off.load(Ordering::Relaxed),
        resent.iter().filter(|r| !r.seen.is_pending()).count(),
        woken,
        resent.iter().filter(|r| r.seen.is_pending()).count(),
    );
    assert!(
        unexpected.is_empty(),
        "unexpected responses: {unexpected:#?}"
    );
    // The run exercised what it is about: acknowledged answers on both paths survived kills,
    // and awaits parked at a kill were sent again.
    assert!(summary.won >= 50, "too few answers: {summary:?}");
    let page_wins = recorded
        .writes
        .iter()
        .filter(|w| w.via == "page answer" && matches!(w.outcome, Outcome::Won(_)))
        .count();
    assert!(page_wins >= 10, "too few page answers: {page_wins}");
    assert!(
        run.awaits_cut_off.load(Ordering::Relaxed) >= KILLS,
        "too few awaits were parked at a kill"
    );
    assert!(
        woken >= 1,
        "no await sent again after a kill was woken by a later answer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_loses_nothing_acknowledged_across_ten_kills() {
    let db = common::db::fresh_sqlite_url();
    crash_run(&db.url, "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_loses_nothing_acknowledged_across_ten_kills() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    crash_run(&db.url, "postgres").await;
}

/// A browser's form body, `application/x-www-form-urlencoded`.
fn form_body(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}
