//! A server with Matrix on, a real Synapse and its people, and what a test reads off them.

use super::*;

pub(super) struct Fixture {
    pub(super) srv: TestServer,
    pub(super) hs: Homeserver,
    pub(super) db: SqliteTestDb,
}

impl Fixture {
    /// Synapse with the bot and `names` registered; sayso with Matrix on, the bot logging in
    /// by localpart and password, and a person per name bound to their Matrix id. `None`
    /// when Synapse cannot be installed here (outside CI).
    pub(super) async fn start(names: &[&str], unbound: &[&str]) -> Option<Fixture> {
        let hs = Homeserver::start().await?;
        let mut all = vec!["saysobot"];
        all.extend(names);
        all.extend(unbound);
        hs.register(&all).await;
        let db = fresh_sqlite_url();
        let chats = ChatSettings {
            matrix: Some(MatrixSettings {
                homeserver: url::Url::parse(&format!("{}/", hs.url)).unwrap(),
                user: "saysobot".into(),
                password: Some("saysobot-password".into()),
                access_token: None,
            }),
            ..ChatSettings::default()
        };
        let srv = TestServer::start_chatting(&db.url, chats).await;
        let f = Fixture { srv, hs, db };
        for name in names {
            f.bind(name, &format!("@{name}:sayso.test")).await;
        }
        Some(f)
    }

    /// Adds the person `name`, bound to the Matrix id `matrix`.
    pub(super) async fn bind(&self, name: &str, matrix: &str) {
        let mut p = self.srv.add_person(name).await;
        p.chats = ChatUsers {
            matrix: Some(matrix.to_string()),
            ..ChatUsers::default()
        };
        self.srv.svc.store().update_person(&p).await.unwrap();
    }

    pub(super) async fn login(&self, name: &str) -> Person {
        Person::login(&self.hs, name).await
    }

    /// Creates a decision; its id.
    pub(super) async fn create(&self, body: Value) -> String {
        s(&self.srv.create(body).await, "decision_id").to_string()
    }

    /// The decision once it is no longer pending.
    pub(super) async fn settled(&self, id: &str) -> Value {
        let started = Instant::now();
        loop {
            let d = self.srv.get(id).await;
            if d["status"] != "pending" {
                return d;
            }
            assert!(started.elapsed() < PROMPTLY, "{id} still pending: {d}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until every Matrix ask of the decision is recorded as sent.
    pub(super) async fn ask_sent(&self, id: &str) {
        let started = Instant::now();
        loop {
            let all = self
                .srv
                .svc
                .store()
                .messages(id.parse().unwrap())
                .await
                .unwrap();
            let asks = all.iter().filter(|m| {
                m.route == Route::Matrix && m.purpose == sayso::domain::outbox::Purpose::Ask
            });
            if asks.clone().count() > 0 && asks.into_iter().all(|m| m.status == MessageStatus::Sent)
            {
                return;
            }
            assert!(started.elapsed() < PROMPTLY, "asks not sent: {all:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The stored decision `id` and the id of its inbox's person `name`.
    pub(super) async fn decision_and_person(
        &self,
        id: &str,
        name: &str,
    ) -> (sayso::domain::Decision, Uuid) {
        let store = self.srv.svc.store();
        let d = store
            .decision(None, id.parse().unwrap())
            .await
            .unwrap()
            .unwrap();
        let people = store.people(d.inbox_id).await.unwrap();
        let person = people.iter().find(|p| p.name == name).unwrap().id;
        (d, person)
    }

    /// The decision as it is, after giving the bot time to act on what it was sent.
    pub(super) async fn after_a_while(&self, id: &str) -> Value {
        tokio::time::sleep(Duration::from_secs(2)).await;
        self.srv.get(id).await
    }
}

/// `name` answers `id` from their feed with `value`.
pub(super) async fn answer_on_feed(f: &Fixture, id: &str, name: &str, value: Value) {
    let (d, person) = f.decision_and_person(id, name).await;
    let url = f.srv.svc.approve_url(&d, PersonChannel::Feed, person);
    let resp = f
        .srv
        .client
        .post(url)
        .json(&json!({ "value": value }))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
}

/// `p` joins the bot's room and reads the ask that says `contains`: the room and the event.
pub(super) async fn first_ask(p: &mut Person, contains: &str) -> (String, String, Value) {
    let room = p.join_invite(BOT).await;
    let (event, content) = p.message(&room, BOT, contains).await;
    (room, event, content)
}

pub(super) fn approval(command: &str, approvers: &[&str]) -> Value {
    json!({
        "question": "ignored for approvals", "kind": "choose", "options": ["Allow", "Deny"],
        "approval": {"harness": "claude", "tool_name": "Bash",
                     "tool_input": {"command": command}},
        "context_md": "Why: <b>bold</b> <a href=\"https://evil.example\">click</a> @room",
        "approvers": approvers,
    })
}
