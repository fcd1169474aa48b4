//! Notifications go to people: a decision's approvers on their own channels, an escalation
//! to its targets when its time comes, everything but an urgent decision held through a
//! person's quiet hours. Through a real server and its outbox worker, with each person's
//! ntfy topic on a local receiver standing in for the ntfy server (none runs here); the
//! links the notifications carry are followed for real.

mod common;

use std::time::{Duration, Instant};

use common::db::{PgTestDb, SqliteTestDb, fresh_pg_url, fresh_sqlite_url};
use common::receiver::{Receiver, Recorded};
use common::server::{TestServer, s, send};
use reqwest::StatusCode;
use sayso::domain::inbox::Inbox;
use sayso::domain::outbox::{MessageStatus, OutboxMessage, Purpose, Route};
use sayso::domain::people::Person;
use sayso::domain::quiet::QuietHours;
use sayso::domain::{Decision, EventKind, PersonChannel};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

/// How long anything the worker should do at once may take here.
const PROMPTLY: Duration = Duration::from_secs(10);

struct Fixture {
    srv: TestServer,
    ntfy: Receiver,
    ana: Person,
    ben: Person,
    _db: Db,
}

/// The database a fixture runs on, dropped with it.
enum Db {
    Sqlite(SqliteTestDb),
    Pg(PgTestDb),
}

impl Db {
    fn url(&self) -> &str {
        match self {
            Db::Sqlite(db) => &db.url,
            Db::Pg(db) => &db.url,
        }
    }
}

impl Fixture {
    /// A notifying server on SQLite whose default inbox has ana and ben besides its own
    /// person, each with a topic of their own on the stand-in ntfy server.
    async fn start(ana_quiet: Option<QuietHours>, ben_quiet: Option<QuietHours>) -> Fixture {
        Self::start_on(Db::Sqlite(fresh_sqlite_url()), ana_quiet, ben_quiet).await
    }

    /// The same on PostgreSQL; `None` when no server runs (outside CI).
    async fn start_pg() -> Option<Fixture> {
        let db = fresh_pg_url().await?;
        Some(Self::start_on(Db::Pg(db), None, None).await)
    }

    async fn start_on(
        db: Db,
        ana_quiet: Option<QuietHours>,
        ben_quiet: Option<QuietHours>,
    ) -> Fixture {
        let srv = TestServer::start_notifying(db.url(), None).await;
        let ntfy = Receiver::ntfy().await;
        let inbox = srv.default_inbox().await;
        let ana = person(&inbox, "ana", &ntfy, ana_quiet);
        let ben = person(&inbox, "ben", &ntfy, ben_quiet);
        for p in [&ana, &ben] {
            srv.svc.store().add_person(p).await.unwrap();
        }
        Fixture {
            srv,
            ntfy,
            ana,
            ben,
            _db: db,
        }
    }

    async fn create(&self, body: Value) -> Decision {
        let created = self.srv.create(body).await;
        let id: Uuid = s(&created, "decision_id").parse().unwrap();
        self.decision(id).await
    }

    async fn decision(&self, id: Uuid) -> Decision {
        self.srv
            .svc
            .store()
            .decision(None, id)
            .await
            .unwrap()
            .unwrap()
    }

    /// What was published to `p`'s topic, oldest first.
    fn published_to(&self, p: &Person) -> Vec<Value> {
        self.ntfy
            .requests()
            .iter()
            .map(Recorded::json)
            .filter(|body| body["topic"] == p.name)
            .collect()
    }

    /// The first publish to `p`'s topic, waiting up to `within` for it.
    async fn first_to(&self, p: &Person, within: Duration) -> Value {
        poll(&format!("a notification to {}", p.name), within, || {
            self.published_to(p).into_iter().next()
        })
        .await
    }

    /// `p`'s ntfy ask of `d` once it is held for quiet hours.
    async fn held_ask(&self, d: &Decision, p: &Person) -> OutboxMessage {
        let svc = &self.srv.svc;
        let deadline = Instant::now() + PROMPTLY;
        loop {
            let messages = svc.store().messages(d.id).await.unwrap();
            let ask = messages.into_iter().find(|m| {
                m.route == Route::Ntfy && m.purpose == Purpose::Ask && m.person == Some(p.id)
            });
            if let Some(m) = ask.filter(|m| m.last_error.is_some()) {
                return m;
            }
            assert!(
                Instant::now() < deadline,
                "{}'s ask of {} was not tried in time",
                p.name,
                d.id
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Answers yes through `url` (a person link), as ntfy's Yes button does.
    async fn say_yes(&self, url: &str) -> (StatusCode, Value) {
        send(self.srv.client.post(url).json(&json!({"value": "yes"}))).await
    }

    /// `p`'s own link to `d` from ntfy.
    fn ntfy_link(&self, d: &Decision, p: &Person) -> String {
        self.srv.svc.approve_url(d, PersonChannel::Ntfy, p.id)
    }
}

fn person(inbox: &Inbox, name: &str, ntfy: &Receiver, quiet: Option<QuietHours>) -> Person {
    Person {
        id: Uuid::now_v7(),
        inbox_id: inbox.id,
        name: name.into(),
        email: None,
        // The topic is the person's name: that is how the publishes are told apart.
        ntfy_url: Some(format!("{}/{name}", ntfy.base)),
        ntfy_token: None,
        chats: Default::default(),
        tz: quiet.as_ref().map(|q| q.tz.clone()),
        quiet,
        lang: None,
        created_at: OffsetDateTime::now_utc(),
    }
}

/// Quiet hours from an hour ago to an hour from now, in UTC: quiet now, whatever the time.
fn quiet_now() -> QuietHours {
    let now = OffsetDateTime::now_utc();
    let hm = |t: OffsetDateTime| format!("{:02}:{:02}", t.hour(), t.minute());
    let window = format!(
        "{}-{}",
        hm(now - time::Duration::hours(1)),
        hm(now + time::Duration::hours(1))
    );
    QuietHours::parse(&window, Some("UTC")).unwrap()
}

/// What ntfy answers a publish with: the message it made.
/// Calls `check` until it gives something, for up to `within`.
async fn poll<T>(what: &str, within: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `escalated` events of `d`.
async fn escalations(f: &Fixture, d: &Decision) -> Vec<Value> {
    f.srv
        .svc
        .store()
        .events(d.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EventKind::Escalated)
        .map(|e| e.detail)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_alone_is_notified_with_a_link_that_answers_as_her() {
    only_the_approver_is_notified(Fixture::start(None, None).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_alone_is_notified_on_postgres() {
    if let Some(f) = Fixture::start_pg().await {
        only_the_approver_is_notified(f).await;
    }
}

async fn only_the_approver_is_notified(f: Fixture) {
    let d = f
        .create(json!({
            "question": "Ship it?", "kind": "bool", "ttl_seconds": 30, "approvers": ["ana"],
        }))
        .await;

    let notice = f.first_to(&f.ana, PROMPTLY).await;
    let link = f.ntfy_link(&d, &f.ana);
    assert!(link.contains("/a/"), "{link}");
    assert_eq!(notice["click"], link);
    assert_eq!(notice["actions"][0]["url"], link);
    assert_eq!(
        common::question_and_expiry(&notice["message"]).0,
        "Ship it?"
    );

    // Every message of the decision is written by now: none is to ben.
    let messages = f.srv.svc.store().messages(d.id).await.unwrap();
    assert!(
        messages.iter().all(|m| m.person != Some(f.ben.id)),
        "{messages:?}"
    );
    assert!(f.published_to(&f.ben).is_empty());

    let (status, body) = f.say_yes(&link).await;
    assert_eq!(status, 200, "{body}");
    let d = f.decision(d.id).await;
    assert_eq!(d.outcome, Some(json!(true)));
    assert_eq!(d.answers.len(), 1);
    assert_eq!(d.answers[0].person.as_deref(), Some("ana"));
    assert_eq!(d.answers[0].person_id, Some(f.ana.id));
    // The resolution replaces ana's notification; ben never had one.
    let resolved = poll("ana's notification replaced", PROMPTLY, || {
        f.published_to(&f.ana).into_iter().nth(1)
    })
    .await;
    assert!(resolved.get("actions").is_none(), "{resolved}");
    assert!(f.published_to(&f.ben).is_empty());
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_decision_escalates_to_ben_who_may_then_answer() {
    escalates_to_ben(Fixture::start(None, None).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_decision_escalates_on_postgres() {
    if let Some(f) = Fixture::start_pg().await {
        escalates_to_ben(f).await;
    }
}

async fn escalates_to_ben(f: Fixture) {
    let started = Instant::now();
    let d = f
        .create(json!({
            "question": "Rotate the keys?", "kind": "bool", "ttl_seconds": 30,
            "approvers": ["ana"], "escalate_after_s": 2, "escalate_to": ["ben"],
        }))
        .await;
    let ben_link = f.ntfy_link(&d, &f.ben);
    let (status, body) = f.say_yes(&ben_link).await;
    assert_eq!(
        status, 404,
        "ben is not asked before the escalation: {body}"
    );
    f.first_to(&f.ana, PROMPTLY).await;
    assert!(escalations(&f, &d).await.is_empty());

    let notice = f.first_to(&f.ben, PROMPTLY).await;
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "escalated after {:?}",
        started.elapsed()
    );
    assert_eq!(notice["click"], ben_link);
    assert_eq!(escalations(&f, &d).await, vec![json!({"to": ["ben"]})]);

    let (status, body) = f.say_yes(&ben_link).await;
    assert_eq!(status, 200, "{body}");
    let d = f.decision(d.id).await;
    assert_eq!(d.outcome, Some(json!(true)));
    assert_eq!(d.answers[0].person.as_deref(), Some("ben"));
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_hours_hold_an_ask_until_they_end_but_not_an_urgent_one() {
    let quiet = quiet_now();
    let f = Fixture::start(Some(quiet.clone()), None).await;
    // Alive past the end of the quiet hours, so the ask waits for it.
    let d = f
        .create(json!({
            "question": "Merge the release branch?", "kind": "bool", "ttl_seconds": 7200,
            "approvers": ["ana"],
        }))
        .await;
    let held = f.held_ask(&d, &f.ana).await;
    let end = quiet.quiet_until(OffsetDateTime::now_utc()).unwrap();
    assert_eq!(held.status, MessageStatus::Pending);
    assert_eq!(
        held.last_error.as_deref(),
        Some(format!("held for quiet hours until {}", sayso::render::iso(end)).as_str())
    );
    // Due again at the window's end, not before.
    let store = f.srv.svc.store();
    let lease = Duration::from_secs(60);
    let before_end = store
        .claim_messages(end - time::Duration::minutes(1), lease, 50)
        .await
        .unwrap();
    assert!(before_end.iter().all(|m| m.id != held.id), "{before_end:?}");
    let at_end = store
        .claim_messages(end + time::Duration::seconds(1), lease, 50)
        .await
        .unwrap();
    assert!(at_end.iter().any(|m| m.id == held.id), "{at_end:?}");
    assert!(f.published_to(&f.ana).is_empty());

    // Urgent is the operator's to allow a key.
    assert!(f.srv.svc.set_key_urgent(&f.srv.key, true).await.unwrap());
    let urgent = f
        .create(json!({
            "question": "The disk is full: delete old logs?", "kind": "bool",
            "ttl_seconds": 30, "approvers": ["ana"], "urgent": true,
        }))
        .await;
    let notice = f.first_to(&f.ana, PROMPTLY).await;
    assert_eq!(
        common::question_and_expiry(&notice["message"]).0,
        "The disk is full: delete old logs?"
    );
    assert_eq!(notice["click"], f.ntfy_link(&urgent, &f.ana));
    assert_eq!(f.published_to(&f.ana).len(), 1);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalation_goes_through_quiet_hours_when_every_approver_is_in_theirs() {
    let f = Fixture::start(Some(quiet_now()), Some(quiet_now())).await;
    let d = f
        .create(json!({
            "question": "Roll back the deploy?", "kind": "bool", "ttl_seconds": 7200,
            "approvers": ["ana"], "escalate_after_s": 2, "escalate_to": ["ben"],
        }))
        .await;
    let held = f.held_ask(&d, &f.ana).await;
    assert!(
        held.last_error.unwrap().starts_with("held for quiet hours"),
        "ana's ask is held"
    );

    let notice = f.first_to(&f.ben, PROMPTLY).await;
    assert_eq!(notice["click"], f.ntfy_link(&d, &f.ben));
    assert_eq!(escalations(&f, &d).await, vec![json!({"to": ["ben"]})]);
    assert!(f.published_to(&f.ana).is_empty());
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalation_waits_for_the_targets_quiet_hours_when_an_approver_is_awake() {
    let f = Fixture::start(None, Some(quiet_now())).await;
    let d = f
        .create(json!({
            "question": "Renew the certificate?", "kind": "bool", "ttl_seconds": 7200,
            "approvers": ["ana"], "escalate_after_s": 1, "escalate_to": ["ben"],
        }))
        .await;
    f.first_to(&f.ana, PROMPTLY).await;
    let held = f.held_ask(&d, &f.ben).await;
    assert_eq!(held.status, MessageStatus::Pending);
    assert_eq!(held.payload["escalation"], true);
    assert!(
        held.last_error.unwrap().starts_with("held for quiet hours"),
        "ben's escalation ask is held"
    );
    assert_eq!(escalations(&f, &d).await, vec![json!({"to": ["ben"]})]);
    assert!(f.published_to(&f.ben).is_empty());
    f.srv.stop().await;
}
