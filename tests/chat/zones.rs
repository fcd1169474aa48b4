//! One instant, told in one zone everywhere: a person in Asia/Kolkata (half an hour off any
//! whole-hour zone, so a wrong zone shows) reads a decision's expiry on its page (and in
//! Chromium at 360 px), in a mail (a real SMTP server), in an ntfy message, in a Telegram
//! message (the Bot API stand-in), and in `sayso list --tz`.

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::process::Command;

use sayso::chat::{ChatSettings, TelegramSettings};
use sayso::domain::PersonChannel;
use sayso::render::Zone;

use crate::common::browser::Browser;
use crate::common::db;
use crate::common::receiver::Receiver;
use crate::common::server::{TestServer, s};
use crate::common::smtp::SmtpSink;
use crate::telegram_standin::{BotApiStandIn, TOKEN};

const BIN: &str = env!("CARGO_BIN_EXE_sayso");
const ANA: &str = "1001";

/// `sayso ARGS` with the environment given, its stdout; it must succeed.
async fn sayso(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .env("SAYSO_LOG", "warn")
        .env_remove("SAYSO_LISTEN")
        .kill_on_drop(true)
        .output()
        .await
        .expect("sayso runs");
    assert!(out.status.success(), "sayso {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// "20:34 IST": the wall-clock time and the zone's name of `at` in `zone`, which every
/// surface states (a mail with the date before it, a page today without).
/// `at` as the surfaces state it in `zone`: the time, with the date before it when `at`
/// falls on another local day than now (a question asked late in the evening there).
fn clock_of(at: OffsetDateTime, zone: &str) -> String {
    Zone::named(zone).clock(at, OffsetDateTime::now_utc())
}

fn expires_at(handle: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(s(handle, "expires_at"), &Rfc3339).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_zone_is_the_one_every_surface_states_a_time_in() {
    let Some(smtp) = SmtpSink::start().await else {
        return;
    };
    let ntfy = Receiver::ntfy().await;
    let telegram = BotApiStandIn::start().await;
    let db = db::fresh_sqlite_url();
    let chats = ChatSettings {
        telegram: Some(TelegramSettings {
            bot_token: TOKEN.into(),
            webhook_secret: None,
            api_url: telegram.base.parse().unwrap(),
        }),
        ..ChatSettings::default()
    };
    let srv = TestServer::start_on_every_channel(&db.url, &smtp.url(), chats).await;

    // ana is in Kolkata; the inbox's own person, who stands for the inbox, in New York.
    let ana = srv.add_person("ana").await;
    let admin = [("SAYSO_DATABASE_URL", db.url.as_str())];
    let topic = format!("{}/ana-topic", ntfy.base);
    let shown = sayso(
        &[
            "person",
            "set",
            "ana",
            "--email",
            "ana@example.com",
            "--ntfy-url",
            &topic,
            "--telegram",
            ANA,
            "--tz",
            "asia/kolkata",
        ],
        &admin,
    )
    .await;
    assert!(shown.contains("tz:         Asia/Kolkata"), "{shown}");
    sayso(
        &["inbox", "set", "default", "--tz", "America/New_York"],
        &admin,
    )
    .await;

    // One decision by mail, one by ntfy and Telegram, both to ana alone.
    let by_mail = srv
        .create(json!({"question": "Renew the certificate?", "kind": "bool",
                       "approvers": ["ana"], "notify": "email"}))
        .await;
    let by_push = srv
        .create(json!({"question": "Ship v2 today?", "kind": "bool",
                       "approvers": ["ana"], "notify": "push"}))
        .await;
    let (mail_at, push_at) = (expires_at(&by_mail), expires_at(&by_push));
    let (mail_ist, push_ist) = (
        clock_of(mail_at, "Asia/Kolkata"),
        clock_of(push_at, "Asia/Kolkata"),
    );
    assert!(mail_ist.ends_with(" IST") && push_ist.ends_with(" IST"));
    // What a surface that ignored the zone would say instead.
    let (mail_utc, push_utc) = (clock_of(mail_at, "UTC"), clock_of(push_at, "UTC"));

    // The mail.
    let mail = smtp.wait_for(1).await.remove(0);
    assert_eq!(mail.rcpt_tos, ["ana@example.com"]);
    for part in ["text/plain", "text/html"] {
        let body = mail.part(part).expect("both parts");
        assert!(body.contains(&mail_ist), "{part} says {mail_ist}: {body}");
        assert!(!body.contains(&mail_utc), "{part}: {body}");
    }

    // The ntfy message, to ana's own topic.
    let mut ntfy = ntfy;
    let published = ntfy.next().await.json();
    assert_eq!(published["topic"], "ana-topic");
    let message = published["message"].as_str().unwrap();
    assert!(
        message.ends_with(&format!(", at {push_ist}")),
        "ntfy says {push_ist}: {message}"
    );

    // The Telegram message, in ana's private chat with the bot.
    let sent = telegram
        .wait_for(ANA, "asking Ship v2", |m| m.text.contains("Ship v2 today?"))
        .await;
    assert!(
        sent.text.contains(&format!(", at {push_ist}")),
        "Telegram says {push_ist}: {}",
        sent.text
    );
    assert!(!sent.text.contains(&push_utc), "{}", sent.text);

    // The page, through ana's own link; the decision's bare link is the inbox's own
    // person's, in New York.
    let web_url = s(&by_push, "web_url");
    let d = srv
        .svc
        .store()
        .decision(None, s(&by_push, "decision_id").parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let ana_url = srv.svc.person_url(&d, PersonChannel::Feed, ana.id);
    let page = srv.client.get(&ana_url).send().await.unwrap();
    let html = page.text().await.unwrap();
    assert!(html.contains(&format!(">{push_ist}</time>")), "{html}");
    let bare = srv.page_text(web_url).await;
    let new_york = clock_of(push_at, "America/New_York");
    assert!(bare.contains(&format!(">{new_york}</time>")), "{bare}");

    // The command line: --tz over the machine's zone (TZ), and the same instants.
    let client = [
        ("SAYSO_URL", srv.base.as_str()),
        ("SAYSO_KEY", srv.key.as_str()),
        ("COLUMNS", "140"),
        ("TZ", "Europe/Lisbon"),
    ];
    let table = sayso(&["list", "--tz", "Asia/Kolkata"], &client).await;
    for (id, ist) in [(&by_mail, &mail_ist), (&by_push, &push_ist)] {
        let row = table
            .lines()
            .find(|l| l.starts_with(s(id, "decision_id")))
            .unwrap_or_else(|| panic!("{table}"));
        assert!(row.contains(&format!("until {ist}")), "{table}");
    }
    // Without --tz, the machine's.
    let table = sayso(&["list"], &client).await;
    let lisbon = clock_of(push_at, "Europe/Lisbon");
    assert!(table.contains(&format!("until {lisbon}")), "{table}");
    // JSON stays RFC 3339 UTC.
    let json = sayso(&["list", "--json", "--tz", "Asia/Kolkata"], &client).await;
    assert!(json.contains(s(&by_push, "expires_at")), "{json}");

    // What a phone shows: the page at 360 px, which the screenshot keeps.
    if let Some(b) = Browser::start().await {
        b.goto(&ana_url).await;
        let expires = b.wait_for("#expires").await.text().await.unwrap();
        assert!(expires.ends_with(&format!("at {push_ist}")), "{expires}");
        let shot = b.screenshot("zone-kolkata-360").await;
        eprintln!("screenshot: {}", shot.display());
        b.close().await;
    }
}
