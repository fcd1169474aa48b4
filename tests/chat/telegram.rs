//! Telegram end to end: a server whose Telegram courier and long-polling listener talk to a
//! recording stand-in for the Bot API (telegram_standin.rs; Telegram cannot run here), with
//! presses and replies built as Telegram sends them.

use std::time::Duration;

use serde_json::{Value, json};

use sayso::chat::{ChatSettings, TelegramSettings};
use sayso::domain::PersonChannel;
use sayso::domain::outbox::{MessageStatus, Route};
use sayso::service::PersonSettings;

use crate::common::db::{self, SqliteTestDb};
use crate::common::server::TestServer;
use crate::telegram_standin::{BotApiStandIn, Sent, TOKEN};

pub const ANA: i64 = 1001;
const BO: i64 = 1002;

fn settings(api: &BotApiStandIn, webhook_secret: Option<&str>) -> ChatSettings {
    ChatSettings {
        telegram: Some(TelegramSettings {
            bot_token: TOKEN.into(),
            webhook_secret: webhook_secret.map(str::to_string),
            api_url: api.base.parse().unwrap(),
        }),
        ..ChatSettings::default()
    }
}

/// A server on `url` with Telegram on, by long polling unless a webhook secret is given, and
/// the people ana and bo on Telegram.
pub async fn start(url: &str, webhook_secret: Option<&str>) -> (TestServer, BotApiStandIn) {
    let api = BotApiStandIn::start().await;
    let srv = TestServer::start_chatting(url, settings(&api, webhook_secret)).await;
    for (name, user) in [("ana", ANA), ("bo", BO)] {
        add_on_telegram(&srv, name, user).await;
    }
    (srv, api)
}

/// A person's settings with the Telegram user `user`.
fn on_telegram(user: impl ToString) -> PersonSettings {
    PersonSettings {
        telegram: Some(user.to_string()),
        ..PersonSettings::default()
    }
}

/// Adds the person `name` to the inbox, on Telegram as the user `user`.
async fn add_on_telegram(srv: &TestServer, name: &str, user: impl ToString) {
    srv.add_person(name).await;
    srv.set_person(name, &on_telegram(user)).await;
}

/// A server on a fresh SQLite file with Telegram by long polling, and ana and bo on it.
pub async fn start_polling() -> (SqliteTestDb, TestServer, BotApiStandIn) {
    let db = db::fresh_sqlite_url();
    let (srv, api) = start(&db.url, None).await;
    (db, srv, api)
}

/// Ends a test: the server kept to the Bot API throughout, and stops.
pub async fn finish(srv: TestServer, api: BotApiStandIn) {
    assert_eq!(api.violations(), Vec::<String>::new());
    srv.stop().await;
}

pub fn approval(command: &str, approvers: &[&str], required: u32) -> Value {
    json!({
        "question": "Claude Code wants to run a Bash command",
        "kind": "choose", "options": ["Allow", "Deny"],
        "approvers": approvers, "required": required,
        "approval": {"harness": "claude", "tool_name": "Bash",
                     "tool_input": {"command": command}},
    })
}

fn id(created: &Value) -> String {
    created["decision_id"].as_str().unwrap().to_string()
}

async fn status_becomes(srv: &TestServer, id: &str, status: &str) -> Value {
    for _ in 0..300 {
        let d = srv.get(id).await;
        if d["status"] == status {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{id} did not become {status}: {}", srv.get(id).await);
}

/// Asks ana alone to approve `command`; the decision's id, and the message she was sent
/// with its buttons (`what`, should it never come).
async fn ask_ana(
    srv: &TestServer,
    api: &BotApiStandIn,
    command: &str,
    what: &str,
) -> (String, Sent) {
    let d = id(&srv.create(approval(command, &["ana"], 1)).await);
    let ask = api.wait_for(&ANA.to_string(), what, has_buttons).await;
    (d, ask)
}

fn has_buttons(s: &Sent) -> bool {
    s.markup
        .as_ref()
        .is_some_and(|m| m.get("inline_keyboard").is_some())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_allowed_with_a_button_and_the_message_says_so() {
    let (_db, srv, api) = start_polling().await;
    let (d, ask) = ask_ana(&srv, &api, "make release", "with Allow and Deny").await;
    // What runs is set apart exactly as asked; no one else was asked.
    assert!(ask.text.contains("<pre>make release</pre>"), "{}", ask.text);
    assert!(api.sent_to(&BO.to_string()).is_empty());
    let allow = BotApiStandIn::button(&ask, "Allow");
    assert!(allow.len() <= 64 && !allow.contains("http"), "{allow}");
    api.queue(api.press_update(ANA, &ask, &allow));
    let done = status_becomes(&srv, &d, "answered").await;
    assert_eq!(done["outcome"], "Allow");
    let settled = api
        .wait_for(&ANA.to_string(), "settled", |s| {
            s.text.contains("Allowed by ana")
        })
        .await;
    assert!(settled.text.contains("from Telegram"), "{}", settled.text);
    assert_eq!(settled.markup, None, "the buttons are gone");
    assert_eq!(settled.message_id, ask.message_id, "edited in place");
    // A second press says who decided and changes nothing.
    api.queue(api.press_update(ANA, &ask, &allow));
    let answers = api.wait_calls("answerCallbackQuery", 2).await;
    assert!(
        answers[1].body["text"]
            .as_str()
            .unwrap()
            .contains("Allowed by ana")
    );
    assert_eq!(srv.get(&d).await["outcome"], "Allow");
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_denies_with_a_reason_and_a_choice_and_a_text_are_answered() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    // Deny with a reason: a reply to the ask.
    let (d, ask) = ask_ana(&srv, &api, "git push --force", "the approval").await;
    api.queue(api.reply_update(ANA, &ana, Some(ask.message_id), "deny: not on a Friday"));
    let denied = status_becomes(&srv, &d, "answered").await;
    assert_eq!(
        (&denied["outcome"], &denied["remark"]),
        (&json!("Deny"), &json!("not on a Friday"))
    );
    api.wait_for(&ana, "denied", |s| s.text.contains("Denied by ana"))
        .await;

    // A choice: one button per option, the recommended one marked.
    let c = id(&srv
        .create(json!({"question": "Which colour?", "kind": "choose",
            "options": ["Red", "Blue", "Green"], "recommended": 1, "approvers": ["ana"]}))
        .await);
    let ask = api
        .wait_for(&ana, "the choice", |s| {
            s.text.contains("Which colour?") && has_buttons(s)
        })
        .await;
    let blue = BotApiStandIn::button(&ask, "★ Blue");
    api.queue(api.press_update(ANA, &ask, &blue));
    assert_eq!(
        status_becomes(&srv, &c, "answered").await["outcome"],
        "Blue"
    );

    // A text: a forced reply, answered by replying.
    let t = id(&srv
        .create(json!({"question": "Name the release", "kind": "text", "approvers": ["ana"]}))
        .await);
    let ask = api
        .wait_for(&ana, "the text", |s| s.text.contains("Name the release"))
        .await;
    assert_eq!(ask.markup.as_ref().unwrap()["force_reply"], true);
    api.queue(api.reply_update(ANA, &ana, Some(ask.message_id), "orbit <b>2</b>"));
    assert_eq!(
        status_becomes(&srv, &t, "answered").await["outcome"],
        "orbit <b>2</b>"
    );
    let settled = api
        .wait_for(&ana, "the text settled", |s| {
            s.message_id == ask.message_id && s.text.contains("Answered")
        })
        .await;
    assert!(
        settled.text.contains("orbit &lt;b&gt;2&lt;/b&gt;"),
        "{}",
        settled.text
    );
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_two_counts_telegram_and_the_feed_and_a_deny_vetoes() {
    let Some(db) = db::fresh_pg_url().await else {
        return;
    };
    let (srv, api) = start(&db.url, None).await;
    let (ana, bo) = (ANA.to_string(), BO.to_string());
    let created = srv
        .create(approval("terraform apply", &["ana", "bo"], 2))
        .await;
    let d = id(&created);
    let ask = api.wait_for(&ana, "ana's ask", has_buttons).await;
    api.press(ANA, &ask, "Allow");
    // ana's Allow counts; the message shows the tally and keeps its buttons.
    let tally = api
        .wait_for(&ana, "the tally", |s| {
            s.text.contains("1 of 2 allowed: ana")
        })
        .await;
    assert!(has_buttons(&tally));
    api.wait_for(&bo, "bo's tally", |s| {
        s.text.contains("1 of 2 allowed: ana")
    })
    .await;
    assert_eq!(srv.get(&d).await["status"], "pending");
    // bo allows from his feed: resolved, and both messages say by whom.
    let decision = srv
        .svc
        .store()
        .decision(None, d.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let people = srv.svc.store().people(decision.inbox_id).await.unwrap();
    let bo_id = people.iter().find(|p| p.name == "bo").unwrap().id;
    let link = srv.svc.person_url(&decision, PersonChannel::Feed, bo_id);
    let resp = srv
        .client
        .post(&link)
        .json(&json!({"value": "Allow"}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
    status_becomes(&srv, &d, "answered").await;
    for chat in [&ana, &bo] {
        api.wait_for(chat, "settled by bo", |s| {
            s.text.contains("Allowed by bo from the feed")
        })
        .await;
    }

    // A veto: one Deny of two needed Allows resolves it at once.
    let v = id(&srv.create(approval("rm -rf /srv", &["ana", "bo"], 2)).await);
    let ask = api
        .wait_for(&bo, "the second ask", |s| {
            s.text.contains("rm -rf /srv") && has_buttons(s)
        })
        .await;
    api.press(BO, &ask, "Deny");
    assert_eq!(
        status_becomes(&srv, &v, "answered").await["outcome"],
        "Deny"
    );
    api.wait_for(&ana, "vetoed", |s| s.text.contains("Denied by bo"))
        .await;
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_not_asked_and_a_forged_button_change_nothing() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    let (d, ask) = ask_ana(&srv, &api, "make deploy", "the ask").await;
    let allow = BotApiStandIn::button(&ask, "Allow");
    // bo (in the inbox, not asked) and a stranger press ana's button (a forwarded message).
    api.queue(api.press_update(BO, &ask, &allow));
    api.queue(api.press_update(666, &ask, &allow));
    // A button naming the decision on a message that is not its ask.
    let other = id(&srv.create(approval("ls", &["ana"], 1)).await);
    let other_ask = api
        .wait_for(&ana, "the other ask", |s| s.text.contains("<pre>ls</pre>"))
        .await;
    api.queue(api.press_update(ANA, &other_ask, &allow));
    let answers = api.wait_calls("answerCallbackQuery", 3).await;
    for a in &answers[..2] {
        assert!(
            a.body["text"].as_str().unwrap().contains("not yours"),
            "{:?}",
            a.body
        );
        assert_eq!(a.body["show_alert"], true);
    }
    assert!(
        answers[2].body["text"]
            .as_str()
            .unwrap()
            .contains("not one of sayso's")
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(srv.get(&d).await["status"], "pending");
    assert_eq!(srv.get(&other).await["status"], "pending");
    // A reply to a message that is no ask is told so.
    api.queue(api.reply_update(ANA, &ana, Some(999), "allow"));
    api.wait_for(&ana, "told", |s| {
        s.text.contains("not one of sayso's questions")
    })
    .await;
    // /start tells a person the id to be bound with.
    api.queue(api.reply_update(4242, "4242", None, "/start"));
    let hello = api
        .wait_for("4242", "hello", |s| s.text.contains("4242"))
        .await;
    assert!(hello.text.contains("--telegram 4242"), "{}", hello.text);
    assert_eq!(srv.get(&d).await["status"], "pending");
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_refuses_a_forged_request_and_takes_an_update_once() {
    let db = db::fresh_sqlite_url();
    let secret = "s3cret_webhook-token";
    let (srv, api) = start(&db.url, Some(secret)).await;
    api.wait_calls("setWebhook", 1).await;
    let set = &api.calls("setWebhook")[0].body;
    assert_eq!(set["secret_token"], secret);
    assert_eq!(set["url"], format!("{}/chat/telegram/webhook", srv.base));
    assert!(
        api.calls("getUpdates").is_empty(),
        "no long polling beside a webhook"
    );
    let (d, ask) = ask_ana(&srv, &api, "make release", "the ask").await;
    let press = api.press(ANA, &ask, "Allow");
    let hook = srv.url("/chat/telegram/webhook");
    // Without the secret, or with a wrong one: refused, nothing recorded.
    for token in [None, Some("guess")] {
        let mut req = srv.client.post(&hook).json(&press);
        if let Some(t) = token {
            req = req.header("x-telegram-bot-api-secret-token", t);
        }
        assert_eq!(req.send().await.unwrap().status(), 401);
    }
    assert_eq!(srv.get(&d).await["status"], "pending");
    // With it: taken once; the same update again (Telegram retrying, or a replay) is not.
    for _ in 0..2 {
        let resp = srv
            .client
            .post(&hook)
            .header("x-telegram-bot-api-secret-token", secret)
            .json(&press)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(
        status_becomes(&srv, &d, "answered").await["outcome"],
        "Allow"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        api.calls("answerCallbackQuery").len(),
        1,
        "the replay was not taken"
    );
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiry_updates_the_message_and_an_outage_delays_it_only() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    // Telegram is down when the question is asked: the ask is delivered once it is back.
    api.down();
    let mut body = approval("make backup", &["ana"], 1);
    body["ttl_seconds"] = json!(10);
    let d = id(&srv.create(body).await);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(api.sent_to(&ana).is_empty());
    api.up();
    let ask = api
        .wait_for(&ana, "the ask after the outage", has_buttons)
        .await;
    status_becomes(&srv, &d, "expired").await;
    let expired = api
        .wait_for(&ana, "expired", |s| s.text.contains("Expired"))
        .await;
    assert_eq!(expired.message_id, ask.message_id);
    assert_eq!(expired.markup, None);
    // Sent once, however often it was tried.
    assert_eq!(
        api.sent_to(&ana)
            .iter()
            .filter(|s| s.text.contains("make backup"))
            .count(),
        1
    );
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalation_asks_on_telegram_and_says_so_where_it_first_asked() {
    let (_db, srv, api) = start_polling().await;
    let (ana, bo) = (ANA.to_string(), BO.to_string());
    // cy is in quiet hours for the next day (from a minute ago until two minutes before
    // now, in UTC): her escalation waits, as on every channel, whatever the time of day the
    // test runs (a fixed "00:00-23:59" ended within the question's life just before midnight).
    let now = time::OffsetDateTime::now_utc();
    let at = |t: time::OffsetDateTime| format!("{:02}:{:02}", t.hour(), t.minute());
    let quiet = format!(
        "{}-{}",
        at(now - time::Duration::minutes(1)),
        at(now - time::Duration::minutes(2))
    );
    srv.add_person("cy").await;
    let settings = PersonSettings {
        quiet: Some(quiet),
        ..on_telegram("1003")
    };
    srv.set_person("cy", &settings).await;
    let mut body = approval("make migrate", &["ana"], 1);
    body["escalate_after_s"] = json!(1);
    body["escalate_to"] = json!(["bo", "cy"]);
    let d = id(&srv.create(body).await);
    api.wait_for(&ana, "ana's ask", has_buttons).await;
    let escalated = api
        .wait_for(&bo, "the escalation", |s| {
            s.text.contains("Escalated to you")
        })
        .await;
    assert!(has_buttons(&escalated));
    api.wait_for(&ana, "told it escalated", |s| {
        s.text.contains("Escalated to bo, cy") && has_buttons(s)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(api.sent_to("1003").is_empty(), "cy's quiet hours hold it");
    let messages = srv.svc.store().messages(d.parse().unwrap()).await.unwrap();
    // Her window outlasts the question: her ask is skipped, saying why.
    let held: Vec<_> = messages
        .iter()
        .filter(|m| m.route == Route::Telegram && m.status == MessageStatus::Skipped)
        .collect();
    assert_eq!(held.len(), 1, "{messages:#?}");
    assert!(
        held[0]
            .last_error
            .as_deref()
            .unwrap_or_default()
            .contains("quiet hours"),
        "{held:?}"
    );
    // bo answers from his escalation; ana's and bo's messages both settle.
    api.press(BO, &escalated, "Allow");
    status_becomes(&srv, &d, "answered").await;
    for chat in [&ana, &bo] {
        api.wait_for(chat, "settled", |s| {
            s.text.contains("Allowed by bo from Telegram")
        })
        .await;
    }
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_three_shows_each_count() {
    let (_db, srv, api) = start_polling().await;
    add_on_telegram(&srv, "cy", "1003").await;
    let d = id(&srv
        .create(approval("kubectl drain node-7", &["ana", "bo", "cy"], 3))
        .await);
    for (user, tally) in [
        (ANA, "1 of 3 allowed: ana"),
        (BO, "2 of 3 allowed: ana, bo"),
    ] {
        let chat = user.to_string();
        let ask = api.wait_for(&chat, "the ask", has_buttons).await;
        api.press(user, &ask, "Allow");
        api.wait_for("1003", tally, |s| s.text.contains(tally))
            .await;
    }
    assert_eq!(srv.get(&d).await["status"], "pending");
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_that_wants_a_passkey_is_given_on_the_page() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    let mut body = approval("make release", &["ana"], 1);
    body["approval"]["step_up"] = json!("passkey");
    let d = id(&srv.create(body).await);
    let ask = api
        .wait_for(&ana, "the ask", |s| s.text.contains("make release"))
        .await;
    // No Allow button; Deny is there; the page is linked.
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        !buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );
    assert!(ask.text.contains("Allow on the page"), "{}", ask.text);
    assert!(
        ask.text.contains("/a/"),
        "the person's own link: {}",
        ask.text
    );
    // A forged Allow press (the code an Allow button would carry) and the reply "allow" are
    // both answered with the page's link; nothing is recorded.
    let allow = format!("{}.a", d.replace('-', ""));
    api.queue(api.press_update(ANA, &ask, &allow));
    api.queue(api.reply_update(ANA, &ana, Some(ask.message_id), "allow"));
    let links = api
        .wait_for(&ana, "the page's link", |s| {
            s.text.contains("Answer on the page")
        })
        .await;
    assert!(links.text.contains("/a/"), "{}", links.text);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(srv.get(&d).await["status"], "pending");
    // Deny answers from the chat.
    api.press(ANA, &ask, "Deny");
    assert_eq!(
        status_becomes(&srv, &d, "answered").await["outcome"],
        "Deny"
    );
    finish(srv, api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_takes_updates_after_the_last_one_taken() {
    let (db, srv, api) = start_polling().await;
    let (d, ask) = ask_ana(&srv, &api, "make release", "the ask").await;
    let press = api.press(ANA, &ask, "Deny");
    status_becomes(&srv, &d, "answered").await;
    let key = srv.key.clone();
    srv.stop().await;
    let before = api.calls("getUpdates").len();
    // The same database, the same bot: the listener asks for what came after that press.
    let again = TestServer::restart_chatting(&db.url, &key, settings(&api, None)).await;
    let calls = api.wait_calls("getUpdates", before + 1).await;
    let offset = calls[before].body["offset"].as_i64().unwrap();
    assert_eq!(offset, press["update_id"].as_i64().unwrap() + 1);
    assert_eq!(api.calls("answerCallbackQuery").len(), 1, "not taken twice");
    again.stop().await;
}
