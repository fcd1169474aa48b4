//! The admin commands where they go wrong for a newcomer: run away from the server's
//! database they create nothing and say where they looked; the links they print are the
//! server's public URL, as `sayso serve` recorded it, never a guess from a listen address.

mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{BIN, output, stderr, stdout};
use common::process::SaysoProcess;
use common::server::fresh_server;

/// `sayso ARGS` in `dir`, with `env` and none of the `SAYSO_*` settings of the test run.
async fn sayso_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = common::cli::sayso(args);
    cmd.current_dir(dir)
        .env("SAYSO_LOG", "warn")
        .envs(env.iter().copied());
    output(cmd).await
}

/// A new empty directory, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("sayso-cli-admin-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        TempDir(dir.canonicalize().unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn admin_commands_in_the_wrong_folder_create_nothing_and_say_where_they_looked() {
    let dir = TempDir::new();
    let expected = dir.0.join("sayso.db");
    for args in [
        &["key", "create"][..],
        &["person", "add", "ana"],
        &["export", "--inbox", "default"],
        &["inbox", "create", "ops"],
        &["key", "list"],
    ] {
        let out = sayso_in(&dir.0, &[], args).await;
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "there is no sayso database at {}",
                expected.display()
            )),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("--database-url") && err.contains("SAYSO_DATABASE_URL"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no inbox named"), "{args:?}: {err}");
        assert!(
            !expected.exists(),
            "{args:?} created {}",
            expected.display()
        );
    }
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);
}

#[tokio::test]
async fn a_file_that_is_not_a_sayso_database_is_said_to_be_one_serve_has_not_made() {
    let dir = TempDir::new();
    let file = dir.0.join("other.db");
    std::fs::write(&file, b"").unwrap();
    let url = format!("sqlite://{}", file.display());
    let out = sayso_in(&dir.0, &[("SAYSO_DATABASE_URL", &url)], &["key", "create"]).await;
    assert!(!out.status.success(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{} is not a sayso database yet", file.display()))
            && err.contains("run `sayso serve`"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        0,
        "nothing was written"
    );
}

#[tokio::test]
async fn a_postgres_database_without_sayso_tables_is_not_migrated_by_an_admin_command() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let dir = TempDir::new();
    let out = sayso_in(
        &dir.0,
        &[("SAYSO_DATABASE_URL", &db.url)],
        &["key", "create"],
    )
    .await;
    assert!(!out.status.success(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("is not a sayso database yet: run `sayso serve` on it once"),
        "{err}"
    );
    // Still not one: the command made no table.
    let again = sayso_in(&dir.0, &[("SAYSO_DATABASE_URL", &db.url)], &["key", "list"]).await;
    assert!(
        stderr(&again).contains("is not a sayso database yet"),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_are_those_of_the_public_url_serve_recorded() {
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    let server = SaysoProcess::start(BIN, &db.url).await;
    let dir = TempDir::new();
    let env = [("SAYSO_DATABASE_URL", db.url.as_str())];
    // The server listens on a port of its own (port 0): the link names it, not 8080.
    let out = sayso_in(&dir.0, &env, &["person", "add", "ana"]).await;
    assert!(out.status.success(), "{out:?}");
    let link = stdout(&out);
    assert!(
        link.trim().starts_with(&format!("{}/inbox/", server.base)),
        "{link} is not on {}",
        server.base
    );
    let (status, _) = common::server::feed_page(link.trim()).await;
    assert!(status.is_success(), "the printed link opens: {status}");
    let out = sayso_in(&dir.0, &env, &["inbox", "create", "ops"]).await;
    assert!(
        stdout(&out).starts_with(&format!("{}/inbox/", server.base)),
        "{out:?}"
    );

    // One given to the command wins, as a flag or a variable.
    let out = sayso_in(
        &dir.0,
        &env,
        &[
            "person",
            "link",
            "ana",
            "--public-url",
            "https://ask.example.com/",
        ],
    )
    .await;
    assert!(
        stdout(&out).starts_with("https://ask.example.com/inbox/"),
        "{out:?}"
    );
    let with_variable = [env[0], ("SAYSO_PUBLIC_URL", "https://sayso.example.org")];
    let out = sayso_in(&dir.0, &with_variable, &["person", "link", "ana"]).await;
    assert!(
        stdout(&out).starts_with("https://sayso.example.org/inbox/"),
        "{out:?}"
    );
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_recorded_public_url_a_link_is_refused_with_the_reason() {
    // A database whose server never recorded its URL (the in-process test server does not).
    let (db, srv) = fresh_server().await;
    let dir = TempDir::new();
    let env = [("SAYSO_DATABASE_URL", db.url.as_str())];
    let out = sayso_in(&dir.0, &env, &["person", "add", "ana"]).await;
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("cannot tell the address of the links")
            && err.contains("--public-url")
            && err.contains("SAYSO_PUBLIC_URL"),
        "{err}"
    );
    assert!(!err.contains("127.0.0.1:8080"), "{err}");
    // Refused before anything was done: ana was not added.
    let out = sayso_in(&dir.0, &env, &["person", "list"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(!stdout(&out).contains("ana"), "{out:?}");
    // Commands that print no link need no public URL.
    let out = sayso_in(&dir.0, &env, &["key", "create"]).await;
    assert!(out.status.success(), "{out:?}");
    drop(srv);
}

#[tokio::test]
async fn the_servers_flags_before_an_admin_command_are_refused_not_ignored() {
    let dir = TempDir::new();
    let out = sayso_in(
        &dir.0,
        &[],
        &["--database-url", "sqlite://elsewhere.db", "key", "create"],
    )
    .await;
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("cannot be used with"), "{out:?}");
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);
}
