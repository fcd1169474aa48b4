//! One case's run against the server, step by step, and the runner over all cases.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::{Method, StatusCode};
use sayso::http::RateLimit;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::MAX_STEPS;
use crate::bodies::{answer_for, create_body};
use crate::common::server::{TestServer, send};
use crate::model::{Known, State, time_of};
use crate::ops::{Create, Op, Ttl, op};

/// One case's run: the server, the decisions made so far, and how far time was advanced.
struct Run<'a> {
    srv: &'a TestServer,
    known: Vec<Known>,
    skew: time::Duration,
    /// How often each HTTP status and each final state came up, over every case.
    tally: &'a RefCell<BTreeMap<String, usize>>,
}

impl Run<'_> {
    fn pick(&self, target: usize) -> Option<usize> {
        (!self.known.is_empty()).then(|| target % self.known.len())
    }

    /// Sends a request, brackets it with the clock, and settles decision `i` in the model
    /// to the moment before it.
    async fn request(
        &mut self,
        i: usize,
        req: reqwest::RequestBuilder,
    ) -> (StatusCode, Value, OffsetDateTime, OffsetDateTime) {
        let t0 = sayso::service::now();
        self.known[i].settle(t0);
        let (status, body) = send(req).await;
        let t1 = sayso::service::now();
        *self
            .tally
            .borrow_mut()
            .entry(status.as_u16().to_string())
            .or_default() += 1;
        (status, body, t0, t1)
    }

    /// Reads decision `i` through the API and checks it.
    async fn check_by_get(&mut self, i: usize) -> Result<(), TestCaseError> {
        let path = format!("/v1/decisions/{}", self.known[i].id);
        let (status, seen, _, t1) = self.request(i, self.srv.req(Method::GET, &path)).await;
        prop_assert_eq!(status, StatusCode::OK, "{}", seen);
        self.observe(i, &seen, t1)?;
        Ok(())
    }

    /// Compares what was seen of decision `i` with the model; a pending decision that real
    /// time may just have expired is followed to `expired` when that is what was seen.
    fn observe(&mut self, i: usize, seen: &Value, t1: OffsetDateTime) -> Result<(), TestCaseError> {
        let k = &mut self.known[i];
        if k.may_expire_by(t1) && seen["status"] == "expired" {
            k.state = State::Expired;
        }
        k.check(seen)
    }

    async fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Create(c) => self.create(c).await,
            Op::Replay { target, same_body } => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let mut body = create_body(&self.known[i].create);
                if !same_body {
                    body["question"] = json!("Another question?");
                }
                let req = self
                    .srv
                    .req(Method::POST, "/v1/decisions")
                    .header("Idempotency-Key", &self.known[i].key)
                    .json(&body);
                let (status, seen, _, _) = self.request(i, req).await;
                if *same_body {
                    // The first handle again, whatever became of the decision since.
                    prop_assert_eq!(status, StatusCode::OK, "{}", seen);
                    prop_assert_eq!(&seen["decision_id"], &json!(self.known[i].id));
                    prop_assert_eq!(&seen["web_url"], &json!(self.known[i].web_url));
                } else {
                    prop_assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{}", seen);
                    prop_assert_eq!(&seen["error"]["code"], &json!("idempotency_mismatch"));
                }
                self.check_by_get(i).await
            }
            Op::Get(target) => match self.pick(*target) {
                Some(i) => self.check_by_get(i).await,
                None => Ok(()),
            },
            Op::Await(target) => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let path = format!("/v1/decisions/{}/await?timeout_s=0", self.known[i].id);
                let (status, seen, _, t1) = self.request(i, self.srv.req(Method::GET, &path)).await;
                prop_assert_eq!(status, StatusCode::OK, "{}", seen);
                self.observe(i, &seen, t1)
            }
            Op::View(target) => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let req = self.srv.client.get(&self.known[i].web_url);
                let (status, _, _, _) = self.request(i, req).await;
                prop_assert_eq!(status, StatusCode::OK);
                self.check_by_get(i).await
            }
            Op::Answer {
                target,
                valid,
                variant,
                remark,
            } => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let (mut body, expected) = answer_for(&self.known[i].create.ask, *valid, *variant);
                if *remark {
                    body["remark"] = json!(" after 6pm ");
                }
                let accepted = expected.map(|(outcome, custom)| ("answered", outcome, custom));
                self.person_acts(i, body, accepted, *remark).await
            }
            Op::Decline { target, remark } => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let mut body = json!({"action": "decline"});
                if *remark {
                    body["remark"] = json!(" after 6pm ");
                }
                let accepted = Some(("declined", Value::Null, false));
                self.person_acts(i, body, accepted, *remark).await
            }
            Op::TodoAction { target, done } => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let (action, outcome) = if *done {
                    ("done", "done")
                } else {
                    ("skip", "skipped")
                };
                let accepted = self.known[i]
                    .is_todo()
                    .then(|| ("answered", json!(outcome), false));
                self.person_acts(i, json!({ "action": action }), accepted, false)
                    .await
            }
            Op::Cancel {
                target,
                reason_too_long,
            } => {
                let Some(i) = self.pick(*target) else {
                    return Ok(());
                };
                let reason = if *reason_too_long {
                    "r".repeat(2001)
                } else {
                    "fixed it myself".to_string()
                };
                let path = format!("/v1/decisions/{}/cancel", self.known[i].id);
                let req = self
                    .srv
                    .req(Method::POST, &path)
                    .json(&json!({ "reason": reason }));
                let (status, seen, t0, t1) = self.request(i, req).await;
                let k = &mut self.known[i];
                if *reason_too_long {
                    // Refused before the decision is looked at: nothing changes.
                    prop_assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{}", seen);
                    prop_assert_eq!(&seen["error"]["details"][0]["path"], &json!("reason"));
                } else if k.state == State::Pending && status == StatusCode::OK {
                    k.state = State::Resolved {
                        status: "cancelled",
                        outcome: Value::Null,
                        source: Value::Null,
                        custom: false,
                        remark: Value::Null,
                        after: t0,
                        before: t1,
                    };
                    self.observe(i, &seen, t1)?;
                } else {
                    if k.state == State::Pending {
                        // Only real time running out during the request can refuse it.
                        prop_assert!(
                            k.may_expire_by(t1),
                            "cancel of a pending decision: {status} {seen}"
                        );
                        k.state = State::Expired;
                    }
                    // docs/API.md: cancelling a resolved decision, expired included, is 409.
                    prop_assert_eq!(status, StatusCode::CONFLICT, "{}", seen);
                    prop_assert_eq!(&seen["error"]["code"], &json!("already_resolved"));
                }
                self.check_by_get(i).await
            }
            Op::Advance(seconds) => {
                self.skew += time::Duration::seconds(*seconds);
                let t = sayso::service::now() + self.skew;
                let expired = self
                    .srv
                    .svc
                    .store()
                    .expire_due(t, 10_000)
                    .await
                    .map_err(|e| TestCaseError::fail(format!("expire_due: {e}")))?;
                for k in &mut self.known {
                    if k.state == State::Pending && k.expires_at <= t {
                        k.state = State::Expired;
                        // The sweep (this one, or the server's own on the real clock) did it.
                    }
                }
                let ids: Vec<String> = expired.iter().map(|e| e.id.to_string()).collect();
                for k in &self.known {
                    if ids.contains(&k.id) {
                        prop_assert_eq!(&k.state, &State::Expired, "swept a decision not due");
                    }
                }
                Ok(())
            }
        }
    }

    async fn create(&mut self, c: &Create) -> Result<(), TestCaseError> {
        let key = uuid::Uuid::new_v4().to_string();
        let req = self
            .srv
            .req(Method::POST, "/v1/decisions")
            .header("Idempotency-Key", &key)
            .json(&create_body(c));
        let t0 = sayso::service::now();
        let (status, handle) = send(req).await;
        let t1 = sayso::service::now();
        prop_assert_eq!(status, StatusCode::CREATED, "{}", handle);
        prop_assert_eq!(&handle["warnings"], &json!([]));
        let ttl = match c.ttl {
            Ttl::Default => time::Duration::minutes(60),
            Ttl::Minutes(m) => time::Duration::minutes(m),
            Ttl::Seconds(s) => time::Duration::seconds(s),
        };
        let expires_at = time_of(&handle["expires_at"]).expect("expires_at is RFC 3339");
        // The handle shows whole seconds or better; the stored moment is to the millisecond.
        prop_assert!(
            t0 + ttl - time::Duration::seconds(1) <= expires_at && expires_at <= t1 + ttl,
            "expires_at {expires_at} is not created_at + {ttl}"
        );
        self.known.push(Known {
            create: c.clone(),
            id: handle["decision_id"].as_str().unwrap().to_string(),
            web_url: handle["web_url"].as_str().unwrap().to_string(),
            key,
            expires_at,
            state: State::Pending,
        });
        let i = self.known.len() - 1;
        // The exact moment, as the API shows it.
        let seen = self.srv.get(&self.known[i].id).await;
        self.known[i].expires_at = time_of(&seen["expires_at"]).unwrap();
        self.check_by_get(i).await
    }

    /// The person answers, declines or marks done through the answer link. `accepted` is the
    /// resolution the body makes when the decision is open (None: the body is invalid).
    async fn person_acts(
        &mut self,
        i: usize,
        body: Value,
        accepted: Option<(&'static str, Value, bool)>,
        remark: bool,
    ) -> Result<(), TestCaseError> {
        let req = self.srv.client.post(&self.known[i].web_url).json(&body);
        let (status, seen, t0, t1) = self.request(i, req).await;
        let k = &mut self.known[i];
        let remark_refused = remark && !k.create.allow_remark;
        let accepted = accepted.filter(|_| !remark_refused);
        if k.may_expire_by(t1) && status == StatusCode::GONE {
            k.state = State::Expired;
        }
        match (&k.state, accepted) {
            (State::Pending, Some((to, outcome, custom))) => {
                prop_assert_eq!(status, StatusCode::OK, "{} -> {}", body, seen);
                k.state = State::Resolved {
                    status: to,
                    source: if to == "answered" {
                        json!("human")
                    } else {
                        Value::Null
                    },
                    outcome,
                    custom,
                    remark: if remark && k.create.allow_remark {
                        json!("after 6pm")
                    } else {
                        Value::Null
                    },
                    after: t0,
                    before: t1,
                };
                self.observe(i, &seen, t1)?;
            }
            (State::Pending, None) => {
                // An invalid answer changes nothing.
                prop_assert_eq!(
                    status,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "{} -> {}",
                    body,
                    seen
                );
                prop_assert_eq!(&seen["error"]["code"], &json!("validation_failed"));
                prop_assert!(seen["error"]["details"][0]["path"].is_string());
            }
            (State::Expired, _) => {
                prop_assert_eq!(status, StatusCode::GONE, "{} -> {}", body, seen);
                prop_assert_eq!(&seen["error"]["code"], &json!("expired"));
            }
            (State::Resolved { .. }, _) => {
                prop_assert_eq!(status, StatusCode::CONFLICT, "{} -> {}", body, seen);
                prop_assert_eq!(&seen["error"]["code"], &json!("already_resolved"));
            }
        }
        self.check_by_get(i).await
    }
}

/// Runs the state machine against a server on `database_url`, one server for all cases:
/// each case only looks at the decisions it made.
pub fn run_state_machine(database_url: &str, cases: u32) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The rate limit is off: a case sends requests as fast as the server answers them.
    let srv = rt.block_on(TestServer::start_rate_limited(database_url, RateLimit::OFF));
    let started = Instant::now();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let steps = proptest::collection::vec(op(), 1..=MAX_STEPS);
    let ops_run = std::cell::Cell::new(0usize);
    let tally = RefCell::new(BTreeMap::new());
    let result = runner.run(&steps, |ops| {
        rt.block_on(async {
            let mut run = Run {
                srv: &srv,
                known: Vec::new(),
                skew: time::Duration::ZERO,
                tally: &tally,
            };
            for op in &ops {
                run.step(op).await?;
                ops_run.set(ops_run.get() + 1);
            }
            // Every decision of the case, as it stands at the end.
            for i in 0..run.known.len() {
                run.check_by_get(i).await?;
                let state = match &run.known[i].state {
                    State::Pending => "pending",
                    State::Expired => "expired",
                    State::Resolved { status, .. } => status,
                };
                *tally.borrow_mut().entry(state.to_string()).or_default() += 1;
            }
            Ok(())
        })
    });
    eprintln!(
        "state machine on {}: {cases} cases, {} operations, {:.1} s; \
         HTTP statuses and final states: {:?}",
        database_url.split(':').next().unwrap_or("?"),
        ops_run.get(),
        started.elapsed().as_secs_f64(),
        tally.borrow()
    );
    rt.block_on(srv.stop());
    if let Err(e) = result {
        panic!("{e}");
    }
}
