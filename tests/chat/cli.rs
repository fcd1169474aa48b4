//! `sayso person set --slack/--matrix/--telegram` and `sayso person test`: the real binary on
//! the database of a running server.

use std::process::Output;

use tokio::process::Command;

use crate::common::db;
use crate::common::server::TestServer;
use crate::telegram_standin::{BotApiStandIn, TOKEN};

const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// `sayso ARGS` on the database of `srv`, its links naming `srv`, with `env` on top.
pub async fn sayso(
    srv: &TestServer,
    db: &db::SqliteTestDb,
    env: &[(&str, &str)],
    args: &[&str],
) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("SAYSO_DATABASE_URL", &db.url)
        .env("SAYSO_PUBLIC_URL", &srv.base)
        .env("SAYSO_LOG", "warn")
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.expect("sayso runs")
}

/// Everything `out` printed, stdout then stderr.
pub fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_gets_chat_users_checked_and_a_test_message() {
    let db = db::fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    let out = sayso(&srv, &db, &[], &["person", "add", "ana"]).await;
    assert!(out.status.success(), "{}", said(&out));
    let out = sayso(&srv, &db, &[], &["person", "add", "bo"]).await;
    assert!(out.status.success(), "{}", said(&out));
    let out = sayso(
        &srv,
        &db,
        &[],
        &[
            "person",
            "set",
            "ana",
            "--telegram",
            "4242",
            "--slack",
            "U012AB3CD",
            "--matrix",
            "@ana:example.org",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", said(&out));
    for line in [
        "telegram:   4242",
        "slack:      U012AB3CD",
        "matrix:     @ana:example.org",
    ] {
        assert!(said(&out).contains(line), "{}", said(&out));
    }
    let list = said(&sayso(&srv, &db, &[], &["person", "list"]).await);
    assert!(
        list.contains("slack:U012AB3CD matrix:@ana:example.org telegram:4242"),
        "{list}"
    );
    // Names, handles and groups are not user ids; each refusal says what one looks like.
    for (flag, bad, hint) in [
        ("--telegram", "@ana", "digits"),
        ("--telegram", "-100123", "group"),
        ("--slack", "@ana", "U012AB3CD"),
        ("--matrix", "ana", "@ana:example.org"),
    ] {
        let arg = format!("{flag}={bad}");
        let out = sayso(&srv, &db, &[], &["person", "set", "bo", &arg]).await;
        assert!(!out.status.success(), "{flag} {bad} was taken");
        assert!(said(&out).contains(hint), "{flag} {bad}: {}", said(&out));
    }
    // One platform user is one person of an inbox.
    let out = sayso(
        &srv,
        &db,
        &[],
        &["person", "set", "bo", "--telegram", "4242"],
    )
    .await;
    assert!(!out.status.success());
    assert!(said(&out).contains("already ana's"), "{}", said(&out));

    // A test message with the server's settings.
    let api = BotApiStandIn::start().await;
    let env = [
        ("SAYSO_TELEGRAM_BOT_TOKEN", TOKEN),
        ("SAYSO_TELEGRAM_API_URL", api.base.as_str()),
    ];
    let out = sayso(
        &srv,
        &db,
        &env,
        &["person", "test", "ana", "--channel", "telegram"],
    )
    .await;
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("chat 4242"), "{}", said(&out));
    let sent = api.sent_to("4242");
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].text.contains("questions for ana"),
        "{}",
        sent[0].text
    );
    // Without the setting, or for someone not on Telegram: told why, nothing sent.
    let out = sayso(
        &srv,
        &db,
        &[],
        &["person", "test", "ana", "--channel", "telegram"],
    )
    .await;
    assert!(!out.status.success());
    assert!(
        said(&out).contains("SAYSO_TELEGRAM_BOT_TOKEN"),
        "{}",
        said(&out)
    );
    let out = sayso(
        &srv,
        &db,
        &env,
        &["person", "test", "bo", "--channel", "telegram"],
    )
    .await;
    assert!(!out.status.success());
    assert!(
        said(&out).contains("bo has no telegram user"),
        "{}",
        said(&out)
    );
    assert_eq!(api.sent_to("4242").len(), 1);
    // `sayso config` shows the chats' secrets masked.
    let out = sayso(&srv, &db, &env, &["config"]).await;
    let config = said(&out);
    assert!(config.contains("SAYSO_TELEGRAM_BOT_TOKEN=****"), "{config}");
    assert!(!config.contains("TEST-token"), "{config}");
    assert_eq!(api.violations(), Vec::<String>::new());
    srv.stop().await;
}
