//! The decision lifecycle (DESIGN.md §2–§3) as a state machine: random sequences of creates,
//! reads, answers (valid and not), declines, to-do actions, cancels, idempotent replays and
//! time passing, run against a real server on SQLite and on PostgreSQL and checked step by
//! step against a small reference model. proptest shrinks a failing sequence to a short one.
//!
//! Time: the service reads the real clock, so "time passes" is the expiry sweep's own store
//! call (`expire_due`) given a moment in the future; the model expires exactly the decisions
//! due by that moment. Real time passes too: a decision whose `expires_at` falls within the
//! span of a request may be seen either way, and the model follows what was seen.

mod common;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use common::server::{TestServer, send};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::{Method, StatusCode};
use sayso::http::RateLimit;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Cases per backend. Each case is one fresh sequence of up to `MAX_STEPS` operations on
/// decisions of its own; both backends together stay well under a minute.
const CASES_SQLITE: u32 = 256;
const CASES_POSTGRES: u32 = 128;
const MAX_STEPS: usize = 24;

/// How a decision is asked; each variant has a default outcome or not.
#[derive(Debug, Clone)]
enum Ask {
    Bool {
        labels: bool,
        default: Option<bool>,
    },
    Choose {
        multi: bool,
        allow_other: bool,
        default: bool,
    },
    Text {
        default: bool,
    },
    Form {
        default: bool,
    },
    Todo {
        default: Option<bool>,
    },
}

#[derive(Debug, Clone, Copy)]
enum Ttl {
    Default,
    Minutes(i64),
    Seconds(i64),
}

#[derive(Debug, Clone)]
struct Create {
    ask: Ask,
    ttl: Ttl,
    allow_remark: bool,
}

/// One step. `target`s pick a decision of the case (modulo how many exist); `variant`s pick
/// one of the answers `answer_for` knows for the decision's kind.
#[derive(Debug, Clone)]
enum Op {
    Create(Create),
    /// The create again with its `Idempotency-Key`: the same body, or another one.
    Replay {
        target: usize,
        same_body: bool,
    },
    Get(usize),
    /// `await` with `timeout_s=0`: returns at once.
    Await(usize),
    /// `GET /d/{token}`, the person's page: never changes anything.
    View(usize),
    Answer {
        target: usize,
        valid: bool,
        variant: usize,
        remark: bool,
    },
    Decline {
        target: usize,
        remark: bool,
    },
    TodoAction {
        target: usize,
        done: bool,
    },
    Cancel {
        target: usize,
        reason_too_long: bool,
    },
    /// Time passes by this many seconds, then the expiry sweep runs.
    Advance(i64),
}

fn ask() -> impl Strategy<Value = Ask> {
    prop_oneof![
        (any::<bool>(), proptest::option::of(any::<bool>()))
            .prop_map(|(labels, default)| Ask::Bool { labels, default }),
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(multi, allow_other, default)| {
            Ask::Choose {
                multi,
                allow_other,
                default,
            }
        }),
        any::<bool>().prop_map(|default| Ask::Text { default }),
        any::<bool>().prop_map(|default| Ask::Form { default }),
        proptest::option::of(any::<bool>()).prop_map(|default| Ask::Todo { default }),
    ]
}

fn ttl() -> impl Strategy<Value = Ttl> {
    prop_oneof![
        Just(Ttl::Default),
        prop_oneof![Just(1), Just(2), Just(60), Just(43_200)].prop_map(Ttl::Minutes),
        prop_oneof![Just(10), Just(45), Just(3600), Just(2_592_000)].prop_map(Ttl::Seconds),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let target = 0..8usize;
    prop_oneof![
        4 => (ask(), ttl(), any::<bool>()).prop_map(|(ask, ttl, allow_remark)| {
            Op::Create(Create { ask, ttl, allow_remark })
        }),
        1 => (target.clone(), any::<bool>())
            .prop_map(|(target, same_body)| Op::Replay { target, same_body }),
        2 => target.clone().prop_map(Op::Get),
        1 => target.clone().prop_map(Op::Await),
        1 => target.clone().prop_map(Op::View),
        6 => (target.clone(), any::<bool>(), 0..4usize, any::<bool>()).prop_map(
            |(target, valid, variant, remark)| Op::Answer { target, valid, variant, remark }
        ),
        2 => (target.clone(), any::<bool>())
            .prop_map(|(target, remark)| Op::Decline { target, remark }),
        2 => (target.clone(), any::<bool>())
            .prop_map(|(target, done)| Op::TodoAction { target, done }),
        3 => (target, prop::bool::weighted(0.2))
            .prop_map(|(target, reason_too_long)| Op::Cancel { target, reason_too_long }),
        2 => prop_oneof![Just(5), Just(30), Just(90), Just(3600), Just(86_400 * 31)]
            .prop_map(Op::Advance),
    ]
}

/// The create body of an ask.
fn create_body(c: &Create) -> Value {
    let mut body = match &c.ask {
        Ask::Bool { labels, default } => {
            let mut b = json!({"question": "Deploy?", "kind": "bool"});
            if *labels {
                b["yes_label"] = json!("Ship it");
                b["no_label"] = json!("Wait");
            }
            if let Some(d) = default {
                b["default_outcome"] = json!(d);
            }
            b
        }
        Ask::Choose {
            multi,
            allow_other,
            default,
        } => {
            let mut b = json!({"question": "Which?", "kind": "choose", "options": ["A", "B", "C"],
                "multi": multi, "allow_other": allow_other});
            if *default {
                b["default_outcome"] = if *multi {
                    json!(["c", "A"])
                } else {
                    json!("b")
                };
            }
            b
        }
        Ask::Text { default } => {
            let mut b = json!({"question": "Name?", "kind": "text"});
            if *default {
                b["default_outcome"] = json!("  fallback ");
            }
            b
        }
        Ask::Form { default } => {
            let mut b = json!({"question": "Details", "kind": "form", "schema": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 1, "maximum": 9},
                    "env": {"type": "string", "enum": ["staging", "prod"]}
                },
                "required": ["n"]
            }});
            if *default {
                b["default_outcome"] = json!({"n": "3"});
            }
            b
        }
        Ask::Todo { default } => {
            let mut b = json!({"question": "Rotate the keys", "kind": "todo"});
            if let Some(done) = default {
                b["default_outcome"] = json!(if *done { "done" } else { "skipped" });
            }
            b
        }
    };
    match c.ttl {
        Ttl::Default => {}
        Ttl::Minutes(m) => body["ttl_minutes"] = json!(m),
        Ttl::Seconds(s) => body["ttl_seconds"] = json!(s),
    }
    body["allow_remark"] = json!(c.allow_remark);
    body["notify"] = json!("none");
    body
}

/// The default outcome as the service normalises it.
fn default_outcome(ask: &Ask) -> Option<Value> {
    match ask {
        Ask::Bool { default, .. } => default.map(|d| json!(d)),
        Ask::Choose { multi, default, .. } => default.then(|| {
            if *multi {
                json!(["A", "C"])
            } else {
                json!("B")
            }
        }),
        Ask::Text { default } => default.then(|| json!("fallback")),
        Ask::Form { default } => default.then(|| json!({"n": 3})),
        Ask::Todo { default } => default.map(|d| json!(if d { "done" } else { "skipped" })),
    }
}

/// An answer body for a decision of this ask, and the outcome (and `custom`) it must give
/// when `valid`; an invalid one must be refused with 422.
fn answer_for(ask: &Ask, valid: bool, variant: usize) -> (Value, Option<(Value, bool)>) {
    let pick = |list: Vec<(Value, Option<(Value, bool)>)>| list[variant % list.len()].clone();
    let ok = |body: Value, outcome: Value| (body, Some((outcome, false)));
    let bad = |body: Value| (body, None);
    match (ask, valid) {
        (Ask::Bool { labels, .. }, true) => pick(vec![
            ok(json!({"value": true}), json!(true)),
            ok(json!({"value": "no"}), json!(false)),
            ok(json!({"value": " YES "}), json!(true)),
            if *labels {
                ok(json!({"value": "wait"}), json!(false))
            } else {
                ok(json!({"value": "No"}), json!(false))
            },
        ]),
        (Ask::Bool { .. }, false) => pick(vec![
            bad(json!({"value": "maybe"})),
            bad(json!({"value": 1})),
            bad(json!({})),
            bad(json!({"value": true, "other": "typed"})),
        ]),
        (
            Ask::Choose {
                multi: false,
                allow_other,
                ..
            },
            true,
        ) => pick(vec![
            ok(json!({"value": "A"}), json!("A")),
            ok(json!({"value": " c "}), json!("C")),
            if *allow_other {
                (json!({"other": " Z "}), Some((json!("Z"), true)))
            } else {
                ok(json!({"value": "b"}), json!("B"))
            },
            // Typed text that is one of the labels is that option.
            ok(json!({"other": "b"}), json!("B")),
        ]),
        (
            Ask::Choose {
                multi: false,
                allow_other,
                ..
            },
            false,
        ) => pick(vec![
            bad(json!({"value": "D"})),
            bad(json!({"value": ["A", "B"]})),
            bad(json!({})),
            if *allow_other {
                bad(json!({"value": "A", "other": "Z"}))
            } else {
                bad(json!({"other": "Z"}))
            },
        ]),
        (
            Ask::Choose {
                multi: true,
                allow_other,
                ..
            },
            true,
        ) => pick(vec![
            ok(json!({"value": ["C", "a"]}), json!(["A", "C"])),
            ok(json!({"value": "B"}), json!(["B"])),
            if *allow_other {
                (
                    json!({"value": ["B"], "other": "Z"}),
                    Some((json!(["B", "Z"]), true)),
                )
            } else {
                ok(json!({"value": ["B", "C", "A"]}), json!(["A", "B", "C"]))
            },
            ok(json!({"value": ["C"], "other": "a"}), json!(["A", "C"])),
        ]),
        (
            Ask::Choose {
                multi: true,
                allow_other,
                ..
            },
            false,
        ) => pick(vec![
            bad(json!({"value": []})),
            bad(json!({"value": ["A", "D"]})),
            bad(json!({"value": ["A", "a"]})),
            if *allow_other {
                bad(json!({"value": {"A": true}}))
            } else {
                bad(json!({"value": ["A"], "other": "Z"}))
            },
        ]),
        (Ask::Text { .. }, true) => pick(vec![
            ok(json!({"value": "payments"}), json!("payments")),
            ok(json!({"value": "  padded  "}), json!("padded")),
            ok(json!({"value": "日本語 ✓"}), json!("日本語 ✓")),
        ]),
        (Ask::Text { .. }, false) => pick(vec![
            bad(json!({"value": "   "})),
            bad(json!({"value": 5})),
            bad(json!({"value": "x".repeat(10_001)})),
            bad(json!({"other": "typed"})),
        ]),
        (Ask::Form { .. }, true) => pick(vec![
            ok(json!({"value": {"n": 3}}), json!({"n": 3})),
            ok(
                json!({"value": {"n": "9", "env": "prod"}}),
                json!({"n": 9, "env": "prod"}),
            ),
            ok(
                json!({"value": {"n": 1, "env": "", "unknown": 1}}),
                json!({"n": 1}),
            ),
        ]),
        (Ask::Form { .. }, false) => pick(vec![
            bad(json!({"value": {}})),
            bad(json!({"value": {"n": 10}})),
            bad(json!({"value": {"n": 2, "env": "dev"}})),
            bad(json!({"value": "n=3"})),
        ]),
        (Ask::Todo { .. }, true) => pick(vec![
            ok(json!({"value": "done"}), json!("done")),
            ok(json!({"value": "skipped"}), json!("skipped")),
        ]),
        (Ask::Todo { .. }, false) => pick(vec![
            bad(json!({"value": "later"})),
            bad(json!({})),
            bad(json!({"value": true})),
        ]),
    }
}

/// What the model knows of one decision.
#[derive(Debug, Clone)]
struct Known {
    create: Create,
    id: String,
    web_url: String,
    key: String,
    expires_at: OffsetDateTime,
    state: State,
}

// A few of these per case: their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
enum State {
    Pending,
    /// Answered, declined or cancelled, at a moment between `after` and `before`.
    Resolved {
        status: &'static str,
        outcome: Value,
        source: Value,
        custom: bool,
        remark: Value,
        after: OffsetDateTime,
        before: OffsetDateTime,
    },
    Expired,
}

impl Known {
    fn is_todo(&self) -> bool {
        matches!(self.create.ask, Ask::Todo { .. })
    }

    /// Follows real time up to `t0`, the moment before a request: a pending decision due by
    /// then is expired (the service expires it on any read).
    fn settle(&mut self, t0: OffsetDateTime) {
        if self.state == State::Pending && self.expires_at <= t0 {
            self.state = State::Expired;
        }
    }

    /// Whether real time may have expired it during a request that ended at `t1`.
    fn may_expire_by(&self, t1: OffsetDateTime) -> bool {
        self.state == State::Pending && self.expires_at <= t1
    }

    /// Checks a decision as the API shows it (`DecisionView`, or an answer's result) against
    /// the model.
    fn check(&self, seen: &Value) -> Result<(), TestCaseError> {
        let field = |k: &str| seen.get(k).cloned().unwrap_or(Value::Null);
        let status = field("status");
        let answered_at = field("answered_at");
        match &self.state {
            State::Pending => {
                prop_assert_eq!(&status, &json!("pending"), "{}", seen);
                prop_assert_eq!(&field("outcome"), &Value::Null);
                prop_assert_eq!(&field("outcome_source"), &Value::Null);
                prop_assert_eq!(&answered_at, &Value::Null);
            }
            State::Expired => {
                prop_assert_eq!(&status, &json!("expired"), "{}", seen);
                let default = default_outcome(&self.create.ask);
                let source = if default.is_some() {
                    json!("default")
                } else {
                    Value::Null
                };
                prop_assert_eq!(
                    &field("outcome"),
                    &default.unwrap_or(Value::Null),
                    "{}",
                    seen
                );
                prop_assert_eq!(&field("outcome_source"), &source);
                prop_assert_eq!(&field("custom"), &json!(false));
                // On expiry, answered_at is expires_at.
                prop_assert_eq!(time_of(&answered_at), Some(self.expires_at), "{}", seen);
            }
            State::Resolved {
                status: want,
                outcome,
                source,
                custom,
                remark,
                after,
                before,
            } => {
                prop_assert_eq!(&status, &json!(want), "{}", seen);
                prop_assert_eq!(&field("outcome"), outcome, "{}", seen);
                prop_assert_eq!(&field("outcome_source"), source);
                prop_assert_eq!(&field("custom"), &json!(custom));
                prop_assert_eq!(&field("remark"), remark);
                let at = time_of(&answered_at);
                prop_assert!(
                    at.is_some_and(|at| *after <= at && at <= *before),
                    "answered_at {} outside the request that resolved it ({} – {})",
                    answered_at,
                    after,
                    before
                );
            }
        }
        if let Some(expires_at) = seen.get("expires_at") {
            prop_assert_eq!(time_of(expires_at), Some(self.expires_at));
        }
        Ok(())
    }
}

fn time_of(v: &Value) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(v.as_str()?, &Rfc3339).ok()
}

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
                    // DESIGN.md §2: cancelling a resolved decision, expired included, is 409.
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
fn run_state_machine(database_url: &str, cases: u32) {
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

#[test]
fn lifecycle_matches_the_model_on_sqlite() {
    let db = common::db::fresh_sqlite_url();
    run_state_machine(&db.url, CASES_SQLITE);
}

#[test]
fn lifecycle_matches_the_model_on_postgres() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(common::db::fresh_pg_url()) else {
        return;
    };
    run_state_machine(&db.url, CASES_POSTGRES);
    drop(rt);
}
