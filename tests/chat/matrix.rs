//! Matrix against a real homeserver: Synapse from PyPI (pinned, SQLite, on loopback, started
//! per test), with the people as real Matrix clients (matrix-nio, tests/chat/synapse/person.py).
//! sayso's bot logs in with a password, makes each person's direct room, sends the asks,
//! reads reactions and replies through its own sync, and edits the asks as they settle.

mod fields;
mod homeserver;
mod person;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uuid::Uuid;

use self::homeserver::Homeserver;
use self::person::Person;
use crate::common::db::{SqliteTestDb, fresh_sqlite_url};
use crate::common::http::json_of;
use crate::common::process::SaysoProcess;
use crate::common::server::{TestServer, s};
use sayso::chat::{ChatSettings, MatrixSettings};
use sayso::domain::PersonChannel;
use sayso::domain::outbox::{MessageStatus, Route};
use sayso::domain::people::ChatUsers;

const BOT: &str = "@saysobot:sayso.test";
/// How long anything the bot should do at once may take on a busy machine.
const PROMPTLY: Duration = Duration::from_secs(30);

struct Fixture {
    srv: TestServer,
    hs: Homeserver,
    db: SqliteTestDb,
}

impl Fixture {
    /// Synapse with the bot and `names` registered; sayso with Matrix on, the bot logging in
    /// by localpart and password, and a person per name bound to their Matrix id. `None`
    /// when Synapse cannot be installed here (outside CI).
    async fn start(names: &[&str], unbound: &[&str]) -> Option<Fixture> {
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
    async fn bind(&self, name: &str, matrix: &str) {
        let mut p = self.srv.add_person(name).await;
        p.chats = ChatUsers {
            matrix: Some(matrix.to_string()),
            ..ChatUsers::default()
        };
        self.srv.svc.store().update_person(&p).await.unwrap();
    }

    async fn login(&self, name: &str) -> Person {
        Person::login(&self.hs, name).await
    }

    /// Creates a decision; its id.
    async fn create(&self, body: Value) -> String {
        s(&self.srv.create(body).await, "decision_id").to_string()
    }

    /// The decision once it is no longer pending.
    async fn settled(&self, id: &str) -> Value {
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
    async fn ask_sent(&self, id: &str) {
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
    async fn decision_and_person(&self, id: &str, name: &str) -> (sayso::domain::Decision, Uuid) {
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
    async fn after_a_while(&self, id: &str) -> Value {
        tokio::time::sleep(Duration::from_secs(2)).await;
        self.srv.get(id).await
    }
}

/// `name` answers `id` from their feed with `value`.
async fn answer_on_feed(f: &Fixture, id: &str, name: &str, value: Value) {
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
async fn first_ask(p: &mut Person, contains: &str) -> (String, String, Value) {
    let room = p.join_invite(BOT).await;
    let (event, content) = p.message(&room, BOT, contains).await;
    (room, event, content)
}

fn approval(command: &str, approvers: &[&str]) -> Value {
    json!({
        "question": "ignored for approvals", "kind": "choose", "options": ["Allow", "Deny"],
        "approval": {"harness": "claude", "tool_name": "Bash",
                     "tool_input": {"command": command}},
        "context_md": "Why: <b>bold</b> <a href=\"https://evil.example\">click</a> @room",
        "approvers": approvers,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_allowed_by_reaction_is_edited_in_place() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(approval("cargo publish --dry-run", &["ana"]))
        .await;
    let (room, ask, content) = first_ask(&mut ana, "cargo publish").await;

    // What runs is set apart exactly; what the asker wrote is text, not markup.
    let html = content["formatted_body"].as_str().unwrap();
    assert_eq!(content["format"], "org.matrix.custom.html");
    assert!(
        html.contains("<pre><code>cargo publish --dry-run</code></pre>"),
        "{html}"
    );
    assert!(
        html.contains("&lt;b&gt;bold&lt;/b&gt; &lt;a href=&quot;https://evil.example&quot;&gt;"),
        "{html}"
    );
    assert_eq!(
        html.matches("<a ").count(),
        1,
        "only the page's link: {html}"
    );
    assert_eq!(content["m.mentions"], json!({}), "the ask mentions no one");
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("React 👍 Allow · 👎 Deny"), "{body}");
    let d = f.srv.get(&id).await;
    let (decision, ana_id) = f.decision_and_person(&id, "ana").await;
    let link = f
        .srv
        .svc
        .person_url(&decision, PersonChannel::Matrix, ana_id);
    assert!(body.contains(&link), "the person's own Matrix link: {body}");
    assert_eq!(d["status"], "pending");

    // The answers are placed under the ask, one tap away.
    assert_eq!(ana.reactions(&room, &ask, BOT, 2).await, vec!["👍", "👎"]);
    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], "Allow", "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    assert_eq!(d["answers"][0]["person"], "ana", "{d}");

    let (sender, new) = ana.edit(&room, &ask, "Allowed by ana from Matrix").await;
    assert_eq!(sender, BOT);
    assert!(!new["body"].as_str().unwrap().contains("React"), "{new}");
    assert!(
        new["formatted_body"]
            .as_str()
            .unwrap()
            .contains("<pre><code>cargo publish --dry-run</code></pre>")
    );

    // A second answer after it settled changes nothing and is told who decided.
    ana.react(&room, &ask, "👎").await;
    ana.message(&room, BOT, "Already settled: Allowed by ana")
        .await;
    assert_eq!(f.srv.get(&id).await["outcome"], "Allow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_by_reply_keeps_its_reason() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f.create(approval("git push --force", &["ana"])).await;
    let (room, ask, _) = first_ask(&mut ana, "git push --force").await;
    ana.reply(&room, &ask, "deny: not on Friday").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Deny", "{d}");
    assert_eq!(d["remark"], "not on Friday", "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    ana.edit(&room, &ask, "Denied by ana from Matrix").await;

    // A reply that answers nothing is refused with why; a plain message gets a hint.
    let id2 = f.create(approval("make deploy", &["ana"])).await;
    let (ask2, _) = ana.message(&room, BOT, "make deploy").await;
    ana.reply(&room, &ask2, "perhaps later").await;
    ana.message(&room, BOT, "allow").await;
    ana.run(json!({"do": "send", "room": room,
                   "content": {"msgtype": "m.text", "body": "allow"}}))
        .await;
    ana.message(&room, BOT, "react to it or reply to it").await;
    assert_eq!(f.after_a_while(&id2).await["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_by_keycap_reaction_and_by_name() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let body = |q: &str| {
        json!({"question": q, "kind": "choose", "options": ["Red", "Blue", "Green"],
               "recommended": 1, "allow_other": false, "approvers": ["ana"]})
    };
    let id = f.create(body("Which colour <b>now</b>?")).await;
    let (room, ask, content) = first_ask(&mut ana, "Which colour").await;
    let html = content["formatted_body"].as_str().unwrap();
    assert!(
        html.contains("Which colour &lt;b&gt;now&lt;/b&gt;?"),
        "{html}"
    );
    assert!(
        content["body"]
            .as_str()
            .unwrap()
            .contains("1️⃣ Red · 2️⃣ Blue (recommended) · 3️⃣ Green"),
        "{content}"
    );
    assert_eq!(
        ana.reactions(&room, &ask, BOT, 3).await,
        vec!["1️⃣", "2️⃣", "3️⃣"]
    );
    // A keycap without its variation selector, as some clients send it.
    ana.react(&room, &ask, "2\u{20e3}").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Blue", "{d}");
    ana.edit(&room, &ask, "Answered “Blue” by ana from Matrix")
        .await;

    let id = f.create(body("And the roof?")).await;
    let (ask, _) = ana.message(&room, BOT, "And the roof?").await;
    ana.reply(&room, &ask, "green").await;
    assert_eq!(f.settled(&id).await["outcome"], "Green");

    // Where "Other" is allowed, a reply of one's own answers too.
    let id = f
        .create(json!({"question": "And the door?", "kind": "choose",
                       "options": ["Red", "Blue"], "approvers": ["ana"]}))
        .await;
    let (ask, content) = ana.message(&room, BOT, "And the door?").await;
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("1️⃣ Red · 2️⃣ Blue"), "{body}");
    assert!(body.contains("your own answer"), "{body}");
    ana.reply(&room, &ask, "Purple").await;
    let d = f.settled(&id).await;
    assert_eq!(
        (&d["outcome"], &d["custom"]),
        (&json!("Purple"), &json!(true)),
        "{d}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_answer_by_reply() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "Name the release", "kind": "text",
                       "placeholder": "a word", "approvers": ["ana"]}))
        .await;
    let (room, ask, content) = first_ask(&mut ana, "Name the release").await;
    assert!(
        content["body"]
            .as_str()
            .unwrap()
            .contains("Reply to this message with your answer (a word)."),
        "{content}"
    );
    // Sent right after the ask if at all: a bool's would be there by the notice.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(ana.reactions(&room, &ask, BOT, 0).await.is_empty());
    // A reply as older clients send it, quoting the ask first.
    ana.run(json!({"do": "send", "room": room, "content": {
        "msgtype": "m.text",
        "body": "> <@saysobot:sayso.test> Name the release\n\nLemur & <Lynx>",
        "m.relates_to": {"m.in_reply_to": {"event_id": ask}},
    }}))
    .await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Lemur & <Lynx>", "{d}");
    let (_, new) = ana.edit(&room, &ask, "Answered").await;
    assert!(
        new["formatted_body"]
            .as_str()
            .unwrap()
            .contains("Lemur &amp; &lt;Lynx&gt;"),
        "{new}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_two_counts_a_matrix_answer_and_a_feed_answer() {
    let Some(f) = Fixture::start(&["ana", "ben"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "Ship it?", "kind": "bool",
                       "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Ship it?").await;
    f.ask_sent(&id).await;
    ana.react(&room, &ask, "👍").await;
    ana.message(&room, BOT, "Counted. 1 of 2 said yes: ana")
        .await;
    ana.edit(&room, &ask, "1 of 2 said yes: ana").await;
    assert_eq!(f.srv.get(&id).await["status"], "pending");

    // ben answers from his feed; ana's message settles to say so.
    answer_on_feed(&f, &id, "ben", json!("yes")).await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true, "{d}");
    let (_, new) = ana.edit(&room, &ask, "by ben from the feed").await;
    assert!(!new["body"].as_str().unwrap().contains("React"), "{new}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_veto_from_matrix_settles_a_rule_of_two_at_once() {
    let Some(f) = Fixture::start(&["ana", "ben"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut ben = f.login("ben").await;
    let id = f.create(approval("terraform apply", &["ana", "ben"])).await;
    f.srv.get(&id).await;
    let (a_room, a_ask, _) = first_ask(&mut ana, "terraform apply").await;
    let (b_room, b_ask, _) = first_ask(&mut ben, "terraform apply").await;
    assert_ne!(a_room, b_room, "each person has a room of their own");
    ben.reply(&b_room, &b_ask, "deny: not without a plan").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Deny", "{d}");
    // Both messages settle: ben's where he answered, ana's too.
    ben.edit(&b_room, &b_ask, "Denied by ben from Matrix").await;
    ana.edit(&a_room, &a_ask, "Denied by ben from Matrix").await;
    ana.react(&a_room, &a_ask, "👍").await;
    ana.message(&a_room, BOT, "Already settled: Denied by ben")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_not_asked_is_told_so_and_nothing_is_recorded() {
    // eve is a person of the inbox with her own Matrix id, not asked; mallory is no one.
    let Some(f) = Fixture::start(&["ana", "eve"], &["mallory"]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut eve = f.login("eve").await;
    let mut mallory = f.login("mallory").await;
    let id = f
        .create(json!({"question": "Ship it?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Ship it?").await;

    // ana brings others into her room; their reactions and replies count for nothing.
    for who in [&eve.user_id, &mallory.user_id] {
        ana.run(json!({"do": "invite", "room": room, "user": who}))
            .await;
    }
    let (joined, _) = mallory.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    let (joined, _) = eve.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    mallory.react(&room, &ask, "👍").await;
    eve.reply(&room, &ask, "yes").await;
    let (_, notice) = ana.message(&room, BOT, "not yours to answer").await;
    assert_eq!(notice["msgtype"], "m.notice");
    assert_eq!(f.after_a_while(&id).await["status"], "pending");

    // eve's own room (made by an ask of her own): a reply there naming ana's ask is not an
    // answer to it.
    let mine = f
        .create(json!({"question": "Eve's own?", "kind": "bool", "approvers": ["eve"]}))
        .await;
    let (eve_room, _) = eve.join_from(BOT).await;
    eve.message(&eve_room, BOT, "Eve's own?").await;
    eve.reply(&eve_room, &ask, "yes").await;
    eve.message(&eve_room, BOT, "not one of sayso's questions here")
        .await;
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
    assert_eq!(f.srv.get(&mine).await["status"], "pending");

    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true);
    assert_eq!(d["answers"].as_array().unwrap().len(), 1, "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_sender_counts_for_nothing() {
    // mallory takes ana's display name and writes ana's id into the event: the homeserver
    // sets `sender` from mallory's token, and that is what the bot reads.
    let Some(f) = Fixture::start(&["ana"], &["mallory"]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut mallory = f.login("mallory").await;
    let id = f
        .create(json!({"question": "Rotate the keys?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Rotate the keys?").await;
    ana.run(json!({"do": "invite", "room": room, "user": mallory.user_id}))
        .await;
    mallory.join_from(&ana.user_id).await;
    mallory
        .run(json!({"do": "name", "displayname": "ana"}))
        .await;
    let forged = mallory
        .run(json!({"do": "send", "room": room, "content": {
            "msgtype": "m.text", "body": "yes",
            "sender": ana.user_id, "user_id": ana.user_id,
            "m.relates_to": {"m.in_reply_to": {"event_id": ask}},
        }}))
        .await;
    let forged = forged["event_id"].as_str().unwrap();
    mallory
        .run(
            json!({"do": "send", "room": room, "type": "m.reaction", "content": {
                "sender": ana.user_id,
                "m.relates_to": {"rel_type": "m.annotation", "event_id": ask, "key": "👍"},
            }}),
        )
        .await;
    ana.message(&room, BOT, "not yours to answer").await;
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
    // What everyone in the room sees: the homeserver's sender, mallory.
    let seen = ana
        .run(
            json!({"do": "message", "room": room, "sender": mallory.user_id,
                    "contains": "yes"}),
        )
        .await;
    assert_eq!(seen["event_id"], forged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiry_updates_the_message() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(
            json!({"question": "Quick one?", "kind": "bool", "ttl_seconds": 10,
                       "approvers": ["ana"]}),
        )
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Quick one?").await;
    let (_, new) = ana.edit(&room, &ask, "Expired").await;
    assert!(
        new["body"].as_str().unwrap().contains("unanswered"),
        "{new}"
    );
    assert_eq!(f.srv.get(&id).await["status"], "expired");
    ana.react(&room, &ask, "👍").await;
    ana.message(&room, BOT, "Already settled: Expired").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_made_while_the_homeserver_is_down_arrives_when_it_is_back() {
    let Some(mut f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    // The bot is logged in and syncing before the outage.
    tokio::time::sleep(Duration::from_secs(1)).await;
    f.hs.stop().await;
    let id = f
        .create(json!({"question": "During the outage?", "kind": "bool",
                       "approvers": ["ana"]}))
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let notes = f.srv.get(&id).await["notifications"].clone();
    let matrix = notes
        .as_array()
        .and_then(|n| n.iter().find(|m| m["channel"] == "matrix"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(matrix["status"], "pending", "retried, not failed: {notes}");
    f.hs.run().await;
    let mut ana = f.login("ana").await;
    let (room, ask, _) = first_ask(&mut ana, "During the outage?").await;
    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true, "{d}");
    ana.edit(&room, &ask, "by ana from Matrix").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_counts_only_in_the_persons_own_room() {
    // eve is asked too, but ana's room is ana's: eve's reaction there is not counted, her
    // reaction in her own room is.
    let Some(f) = Fixture::start(&["ana", "eve"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut eve = f.login("eve").await;
    let id = f
        .create(json!({"question": "Both of you?", "kind": "bool",
                       "approvers": ["ana", "eve"], "required": 2}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Both of you?").await;
    let (eve_room, eve_ask, _) = first_ask(&mut eve, "Both of you?").await;
    f.ask_sent(&id).await;
    ana.run(json!({"do": "invite", "room": room, "user": eve.user_id}))
        .await;
    let (joined, _) = eve.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    eve.react(&room, &ask, "👍").await;
    eve.message(&room, BOT, "not yours to answer").await;
    let d = f.after_a_while(&id).await;
    assert_eq!(d["answers"], json!([]), "{d}");

    eve.react(&eve_room, &eve_ask, "👍").await;
    eve.message(&eve_room, BOT, "Counted. 1 of 2 said yes: eve")
        .await;
    ana.edit(&room, &ask, "1 of 2 said yes: eve").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_to_a_user_no_homeserver_reaches_fails_naming_why() {
    let Some(f) = Fixture::start(&[], &[]).await else {
        return;
    };
    // ghost has no account; far is on a server this one does not federate with.
    f.bind("ghost", "@ghost:sayso.test").await;
    f.bind("far", "@far:elsewhere.example").await;
    for (who, why) in [
        ("ghost", "knows no user @ghost:sayso.test"),
        ("far", "403 M_FORBIDDEN"),
    ] {
        let id = f
            .create(json!({"question": "Anyone?", "kind": "bool", "approvers": [who]}))
            .await;
        let started = Instant::now();
        let detail = loop {
            let notes = f.srv.get(&id).await["notifications"].clone();
            let failed = notes
                .as_array()
                .into_iter()
                .flatten()
                .find(|n| n["channel"] == "matrix" && n["status"] == "failed")
                .map(|n| n["detail"].as_str().unwrap_or_default().to_string());
            if let Some(detail) = failed {
                break detail;
            }
            assert!(started.elapsed() < PROMPTLY, "not failed: {notes}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(detail.contains(why), "{who}: {detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_given_while_sayso_is_down_is_taken_after_its_restart() {
    answer_while_down(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_buried_under_a_long_gap_is_read_back_from_the_room() {
    // More events than one sync batch holds (Synapse gives at most 100 a room): the sync
    // comes back "limited", and the answer before them is read from the room's history.
    answer_while_down(250).await;
}

/// The real binary, killed and started again on the same database: the sync resumes where
/// it stopped (its token is kept in the database), so a reply made in between counts, even
/// with `fillers` other events after it.
async fn answer_while_down(fillers: usize) {
    const BIN: &str = env!("CARGO_BIN_EXE_sayso");
    let Some(hs) = Homeserver::start().await else {
        return;
    };
    hs.register(&["saysobot", "ana"]).await;
    let db = fresh_sqlite_url();
    let env = [
        ("SAYSO_MATRIX_HOMESERVER", hs.url.as_str()),
        ("SAYSO_MATRIX_USER", "@saysobot:sayso.test"),
        ("SAYSO_MATRIX_PASSWORD", "saysobot-password"),
    ];
    let first = SaysoProcess::start_with_env(BIN, &db.url, &env).await;
    let key = first.key.clone().expect("the first run writes a key");
    let store = sayso::storage::connect(&db.url).await.unwrap();
    let inbox = store.inbox_by_name("default").await.unwrap().unwrap();
    store
        .add_person(&sayso::domain::people::Person {
            id: uuid::Uuid::now_v7(),
            inbox_id: inbox.id,
            name: "ana".into(),
            email: None,
            ntfy_url: None,
            ntfy_token: None,
            chats: ChatUsers {
                matrix: Some("@ana:sayso.test".into()),
                ..ChatUsers::default()
            },
            tz: None,
            quiet: None,
            lang: None,
            created_at: sayso::service::now(),
        })
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let created: Value = json_of(
        client
            .post(format!("{}/v1/decisions", first.base))
            .bearer_auth(&key)
            .json(&json!({"question": "Over the restart?", "kind": "bool", "approvers": ["ana"]})),
    )
    .await;
    let id = s(&created, "decision_id").to_string();
    let mut ana = Person::login(&hs, "ana").await;
    let (room, ask, _) = first_ask(&mut ana, "Over the restart?").await;
    // Its sync has seen the room before it goes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let since = store.setting("chat.matrix.since").await.unwrap();
    assert!(
        since.is_some_and(|t| !t.is_empty()),
        "the sync token is kept"
    );
    first.kill().await;
    if fillers > 0 {
        // The killed process's last long poll is still answered by Synapse, which keeps the
        // answer for an identical request a while: that answer gets this first event, so
        // the reply comes in the next, limited, batch.
        ana.run(json!({"do": "spam", "room": room, "count": 1}))
            .await;
    }
    ana.reply(&room, &ask, "yes").await;
    if fillers > 0 {
        // Notices, which the bot leaves alone (a plain message would get a hint each).
        ana.run(json!({"do": "spam", "room": room, "count": fillers}))
            .await;
    }

    let second = SaysoProcess::start_with_env(BIN, &db.url, &env).await;
    let started = Instant::now();
    let d = loop {
        let d: Value = json_of(
            client
                .get(format!("{}/v1/decisions/{id}", second.base))
                .bearer_auth(&key),
        )
        .await;
        if d["status"] != "pending" {
            break d;
        }
        assert!(started.elapsed() < PROMPTLY, "still pending: {d}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(d["outcome"], true, "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    ana.edit(&room, &ask, "by ana from Matrix").await;
    second.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_answered_on_the_page_its_link_given() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(
            json!({"question": "New laptop", "kind": "form", "approvers": ["ana"],
                       "schema": {"type": "object", "required": ["os"], "properties": {
                           "os": {"type": "string", "enum": ["linux", "mac"]}}}}),
        )
        .await;
    let (room, ask, content) = first_ask(&mut ana, "New laptop").await;
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("Answer on the page."), "{body}");
    assert!(!body.contains("React"), "{body}");
    ana.reply(&room, &ask, "linux").await;
    let (_, notice) = ana
        .message(&room, BOT, "Answer this one on the page.")
        .await;
    let html = notice["formatted_body"].as_str().unwrap();
    assert!(
        html.contains("<a href=\"http://"),
        "the page's link: {html}"
    );
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_message_opens_the_room_the_asks_then_use() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"))
        .args(["person", "test", "ana", "--channel", "matrix"])
        .env("SAYSO_DATABASE_URL", &f.db.url)
        .env("SAYSO_PUBLIC_URL", &f.srv.base)
        .env("SAYSO_LOG", "warn")
        .env("SAYSO_MATRIX_HOMESERVER", &f.hs.url)
        .env("SAYSO_MATRIX_USER", "saysobot")
        .env("SAYSO_MATRIX_PASSWORD", "saysobot-password")
        .output()
        .await
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("sent a test message to @ana:sayso.test"),
        "{said}"
    );
    let mut ana = f.login("ana").await;
    let room = ana.join_invite(BOT).await;
    ana.message(&room, BOT, "questions for ana will arrive here")
        .await;
    assert!(said.contains(&room), "{said}");

    // The server asks in the same room, and takes ana's answer there.
    let id = f
        .create(json!({"question": "Same room?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (ask, _) = ana.message(&room, BOT, "Same room?").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_three_shows_each_count_in_place() {
    let Some(f) = Fixture::start(&["ana", "ben", "cy"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "All three?", "kind": "bool",
                       "approvers": ["ana", "ben", "cy"], "required": 3}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "All three?").await;
    // A tally goes to the asks already recorded as sent: ana's is, once its courier is done.
    f.ask_sent(&id).await;
    answer_on_feed(&f, &id, "ben", json!("yes")).await;
    ana.edit(&room, &ask, "1 of 3 said yes: ben").await;
    answer_on_feed(&f, &id, "cy", json!("yes")).await;
    ana.edit(&room, &ask, "2 of 3 said yes: ben, cy").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
    ana.edit(&room, &ask, "by ana from Matrix").await;
}
