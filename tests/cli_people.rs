//! `sayso person`: the real binary managing an inbox's people on the SQLite database of a
//! running server, whose pages then open (or no longer open) the links it printed.

mod common;

use std::process::Output;

use common::cli::{output, stderr, stdout};
use common::server::{TestServer, fresh_server};
use reqwest::StatusCode;

/// `sayso ARGS` on the server's database, with links naming the server.
async fn sayso(srv: &TestServer, db: &common::db::SqliteTestDb, args: &[&str]) -> Output {
    let mut cmd = common::cli::sayso(args);
    cmd.env("SAYSO_DATABASE_URL", &db.url)
        .env("SAYSO_PUBLIC_URL", &srv.base)
        .env("SAYSO_LOG", "warn")
        // The machine's zone, which the times printed are in.
        .env("TZ", "UTC");
    output(cmd).await
}

/// Runs `sayso ARGS`, expects success, returns its stdout.
async fn ok(srv: &TestServer, db: &common::db::SqliteTestDb, args: &[&str]) -> String {
    let out = sayso(srv, db, args).await;
    assert!(out.status.success(), "sayso {args:?} failed: {out:?}");
    stdout(&out)
}

/// Runs `sayso ARGS`, expects a failure, returns its stderr.
async fn refused(srv: &TestServer, db: &common::db::SqliteTestDb, args: &[&str]) -> String {
    let out = sayso(srv, db, args).await;
    assert!(!out.status.success(), "sayso {args:?} succeeded: {out:?}");
    assert_eq!(stdout(&out), "", "a refusal prints nothing on stdout");
    stderr(&out)
}

/// The feed a browser sees opening `link` (it binds the device and goes on to `/inbox`).
async fn open(_srv: &TestServer, link: &str) -> (StatusCode, String) {
    common::server::feed_page(link).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_people_have_links_of_their_own_that_open_their_feed() {
    let (db, srv) = fresh_server().await;
    let ana = ok(
        &srv,
        &db,
        &[
            "person",
            "add",
            "ana",
            "--email",
            "ana@example.com",
            "--quiet",
            "22:00-07:00",
            "--tz",
            "Europe/Berlin",
        ],
    )
    .await;
    let bob = ok(
        &srv,
        &db,
        &[
            "person",
            "add",
            "bob",
            "--inbox",
            "default",
            "--ntfy-url",
            "https://ntfy.sh/bob-topic",
            "--lang",
            "de",
        ],
    )
    .await;
    // The link alone on stdout, one line.
    for link in [&ana, &bob] {
        assert_eq!(link.lines().count(), 1, "{link:?}");
        assert!(link.starts_with(&format!("{}/inbox/", srv.base)), "{link}");
    }
    let (ana, bob) = (ana.trim(), bob.trim());
    assert_ne!(ana, bob);

    let (status, page) = open(&srv, ana).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("ana · inbox default"), "{page}");
    let (status, page) = open(&srv, bob).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    // bob chose German: his feed speaks it, whatever the browser asks for.
    assert!(page.contains("bob · Postfach default"), "{page}");
    assert!(page.contains("<html lang=\"de\">"), "{page}");

    // `link` prints the same link again; the inbox's own person's is the inbox's.
    assert_eq!(ok(&srv, &db, &["person", "link", "ana"]).await.trim(), ana);
    let inbox = srv.default_inbox().await;
    assert_eq!(
        ok(&srv, &db, &["person", "link", "default"]).await.trim(),
        srv.svc.feed_url(&inbox)
    );

    let list = ok(&srv, &db, &["person", "list"]).await;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list}");
    let words = |line: &str| {
        line.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(lines[0]),
        [
            "default", "-", "-", "-", "-", "-", "-", "(the", "inbox's", "own)"
        ],
        "{list}"
    );
    assert_eq!(
        words(lines[1]),
        [
            "ana",
            "ana@example.com",
            "-",
            "-",
            "Europe/Berlin",
            "22:00-07:00",
            "-"
        ],
        "{list}"
    );
    assert_eq!(
        words(lines[2]),
        [
            "bob",
            "-",
            "https://ntfy.sh/bob-topic",
            "-",
            "-",
            "-",
            "lang:de"
        ],
        "{list}"
    );
    // Aligned: each column starts where its widest cell above or below needs it to (the
    // chats' column, all "-", between the ntfy topic and the zone).
    let (email, ntfy) = (9, 9 + 15 + 2);
    let zone = ntfy + 25 + 2 + 1 + 2;
    let quiet = zone + 13 + 2;
    for (line, cells) in lines.iter().zip([
        ["-", "-", "-", "-"],
        ["ana@example.com", "-", "Europe/Berlin", "22:00-07:00"],
        ["-", "https://ntfy.sh/bob-topic", "-", "-"],
    ]) {
        assert!(line[email..].starts_with(cells[0]), "{list}");
        assert!(line[ntfy..].starts_with(cells[1]), "{list}");
        assert!(line[zone..].starts_with(cells[2]), "{list}");
        assert!(line[quiet..].starts_with(cells[3]), "{list}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_changes_what_is_given_and_refuses_an_hour_that_is_not_one() {
    let (db, srv) = fresh_server().await;
    ok(
        &srv,
        &db,
        &["person", "add", "ana", "--email", "ana@example.com"],
    )
    .await;

    let shown = ok(
        &srv,
        &db,
        &[
            "person",
            "set",
            "ana",
            "--quiet",
            "23:00-06:30",
            "--tz",
            "europe/berlin",
        ],
    )
    .await;
    assert!(shown.contains("email:      ana@example.com"), "{shown}");
    assert!(shown.contains("tz:         Europe/Berlin"), "{shown}");
    assert!(shown.contains("quiet:      23:00-06:30"), "{shown}");
    let ana = srv
        .svc
        .list_people("default")
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.name == "ana")
        .unwrap();
    assert_eq!(ana.quiet.unwrap().window(), "23:00-06:30");

    let err = refused(
        &srv,
        &db,
        &["person", "set", "ana", "--quiet", "25:00-07:00"],
    )
    .await;
    assert!(
        err.contains("quiet hours \"25:00-07:00\": 25 is not an hour (0–23)"),
        "{err}"
    );
    // Nothing changed by the refusal; "" removes a setting.
    let shown = ok(&srv, &db, &["person", "set", "ana", "--email", ""]).await;
    assert!(shown.contains("email:      (none)"), "{shown}");
    assert!(shown.contains("quiet:      23:00-06:30"), "{shown}");
    assert!(shown.contains("tz:         Europe/Berlin"), "{shown}");
    // Quiet hours go and the zone stays; the zone alone is set, and "" makes it UTC.
    let shown = ok(&srv, &db, &["person", "set", "ana", "--quiet", ""]).await;
    assert!(shown.contains("quiet:      (none)"), "{shown}");
    assert!(shown.contains("tz:         Europe/Berlin"), "{shown}");
    let shown = ok(&srv, &db, &["person", "set", "ana", "--tz", "Asia/Kolkata"]).await;
    assert!(shown.contains("tz:         Asia/Kolkata"), "{shown}");
    let shown = ok(&srv, &db, &["person", "set", "ana", "--tz", ""]).await;
    assert!(shown.contains("tz:         (none: UTC)"), "{shown}");
    let err = refused(
        &srv,
        &db,
        &["person", "set", "ana", "--tz", "Asia/Kolkatta"],
    )
    .await;
    assert!(
        err.contains("unknown time zone \"Asia/Kolkatta\": did you mean \"Asia/Kolkata\"?"),
        "{err}"
    );
    // The inbox's own person's zone is the inbox's too.
    let shown = ok(
        &srv,
        &db,
        &["inbox", "set", "default", "--tz", "Europe/Lisbon"],
    )
    .await;
    assert!(shown.contains("tz:         Europe/Lisbon"), "{shown}");
    let own = srv.svc.named_person("default", "default").await.unwrap();
    assert_eq!(own.tz.as_deref(), Some("Europe/Lisbon"));
    let err = refused(&srv, &db, &["inbox", "set", "default", "--tz", "Lisbon"]).await;
    assert!(err.contains("unknown time zone \"Lisbon\""), "{err}");

    // A language: one sayso speaks, shown back; another is refused naming those there
    // are; "" leaves it to the browser again.
    let shown = ok(&srv, &db, &["person", "set", "ana", "--lang", "de"]).await;
    assert!(shown.contains("lang:       de"), "{shown}");
    let err = refused(&srv, &db, &["person", "set", "ana", "--lang", "fr"]).await;
    assert!(
        err.contains("\"fr\" is not a language sayso speaks; it speaks en, de"),
        "{err}"
    );
    let shown = ok(&srv, &db, &["person", "set", "ana", "--lang", ""]).await;
    assert!(shown.contains("lang:       (none)"), "{shown}");

    let err = refused(&srv, &db, &["person", "set", "ana", "--email", "not-mail"]).await;
    assert!(
        err.contains("\"not-mail\" is not an email address"),
        "{err}"
    );
    let err = refused(&srv, &db, &["person", "set", "nobody", "--email", ""]).await;
    assert!(
        err.contains("the inbox \"default\" has no person named \"nobody\""),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_refuses_a_taken_name_an_unknown_inbox_and_an_unknown_zone() {
    let (db, srv) = fresh_server().await;
    ok(&srv, &db, &["person", "add", "ana"]).await;
    let err = refused(&srv, &db, &["person", "add", "ana"]).await;
    assert!(
        err.contains("the inbox \"default\" already has a person named \"ana\""),
        "{err}"
    );
    // The inbox's own person holds the inbox's name.
    let err = refused(&srv, &db, &["person", "add", "default"]).await;
    assert!(
        err.contains("already has a person named \"default\""),
        "{err}"
    );

    let err = refused(&srv, &db, &["person", "add", "bob", "--inbox", "nope"]).await;
    assert!(err.contains("there is no inbox named \"nope\""), "{err}");
    let err = refused(&srv, &db, &["person", "list", "--inbox", "nope"]).await;
    assert!(err.contains("there is no inbox named \"nope\""), "{err}");

    let err = refused(&srv, &db, &["person", "add", "bob", "--tz", "Europe/Berln"]).await;
    assert!(
        err.contains("unknown time zone \"Europe/Berln\": did you mean \"Europe/Berlin\"?"),
        "{err}"
    );
    let err = refused(&srv, &db, &["person", "add", "Bob Smith"]).await;
    assert!(err.contains("is not a person's name"), "{err}");
    let err = refused(
        &srv,
        &db,
        &["person", "add", "bob", "--ntfy-url", "ntfy.sh"],
    )
    .await;
    assert!(err.contains("is not an ntfy topic URL"), "{err}");
    let err = refused(
        &srv,
        &db,
        &[
            "person",
            "add",
            "bob",
            "--quiet",
            "22-7",
            "--tz",
            "Mars/Olympus",
        ],
    )
    .await;
    assert!(err.contains("unknown time zone \"Mars/Olympus\""), "{err}");

    // None of the refused ones was added.
    let list = ok(&srv, &db, &["person", "list"]).await;
    assert_eq!(list.lines().count(), 2, "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_persons_link_stops_opening_and_the_last_person_stays() {
    let (db, srv) = fresh_server().await;
    let bob = ok(&srv, &db, &["person", "add", "bob"]).await;
    let bob = bob.trim();
    assert_eq!(open(&srv, bob).await.0, StatusCode::OK);

    let out = ok(&srv, &db, &["person", "remove", "bob"]).await;
    assert!(out.contains("removed \"bob\""), "{out}");
    let (status, page) = open(&srv, bob).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{page}");
    let err = refused(&srv, &db, &["person", "link", "bob"]).await;
    assert!(err.contains("has no person named \"bob\""), "{err}");
    let err = refused(&srv, &db, &["person", "remove", "bob"]).await;
    assert!(err.contains("has no person named \"bob\""), "{err}");

    // A new inbox has one person, its own: it cannot go.
    ok(&srv, &db, &["inbox", "create", "solo"]).await;
    let err = refused(&srv, &db, &["person", "remove", "solo", "--inbox", "solo"]).await;
    assert!(err.contains("an inbox needs at least one person"), "{err}");
    let list = ok(&srv, &db, &["person", "list", "--inbox", "solo"]).await;
    assert!(list.starts_with("solo "), "{list}");

    // With someone else in it, the inbox's own person may go; the other then stays.
    ok(&srv, &db, &["person", "add", "ana", "--inbox", "solo"]).await;
    ok(&srv, &db, &["person", "remove", "solo", "--inbox", "solo"]).await;
    let err = refused(&srv, &db, &["person", "remove", "ana", "--inbox", "solo"]).await;
    assert!(err.contains("an inbox needs at least one person"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_passkeys_are_listed_and_one_is_removed_by_the_start_of_its_id() {
    let (db, srv) = fresh_server().await;
    let ana = srv.add_person("ana").await;
    for (id, browser) in [
        ("AAAAbbbbCCCCdddd1", Some("Firefox on Linux")),
        ("AAAAbbbbCCCCdddd2", None),
        ("Zzzz", Some("Safari on iPhone")),
    ] {
        let passkey = sayso::storage::StoredPasskey {
            credential_id: id.into(),
            public_key: "k".into(),
            sign_count: 0,
            added_at: time::macros::datetime!(2030-01-02 03:04 UTC),
            last_used_at: None,
            user_agent: browser.map(str::to_string),
        };
        srv.svc.store().add_passkey(&ana, &passkey).await.unwrap();
    }
    let list = ok(&srv, &db, &["person", "passkeys", "ana"]).await;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines,
        [
            "AAAAbbbbCCCC  added 2030-01-02 03:04 UTC  never used  Firefox on Linux",
            "AAAAbbbbCCCC  added 2030-01-02 03:04 UTC  never used  (browser unknown)",
            "Zzzz  added 2030-01-02 03:04 UTC  never used  Safari on iPhone",
        ],
        "{list}"
    );
    let err = refused(
        &srv,
        &db,
        &["person", "passkeys", "ana", "--remove", "AAAA"],
    )
    .await;
    assert!(
        err.contains("2 passkeys of \"ana\" start with \"AAAA\""),
        "{err}"
    );
    let err = refused(&srv, &db, &["person", "passkeys", "ana", "--remove", "Q"]).await;
    assert!(
        err.contains("has no passkey whose id starts with \"Q\""),
        "{err}"
    );
    let err = refused(&srv, &db, &["person", "passkeys", "bob"]).await;
    assert!(err.contains("no person named \"bob\""), "{err}");

    let out = ok(
        &srv,
        &db,
        &["person", "passkeys", "ana", "--remove", "AAAAbbbbCCCCdddd2"],
    )
    .await;
    assert_eq!(
        out.trim(),
        "removed the passkey AAAAbbbbCCCC of \"ana\" (inbox \"default\")"
    );
    let left = srv.svc.store().passkeys(ana.id).await.unwrap();
    let ids: Vec<&str> = left.iter().map(|p| p.credential_id.as_str()).collect();
    assert_eq!(ids, ["AAAAbbbbCCCCdddd1", "Zzzz"]);
    let own = ok(&srv, &db, &["person", "passkeys", "default"]).await;
    assert_eq!(own.trim(), "\"default\" has no passkey");
}
