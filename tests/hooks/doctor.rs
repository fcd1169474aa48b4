//! `sayso hook doctor`: the checks every harness shares (the settings entry, its timeout, the
//! program on the PATH, the server with the key), and `install` ending with the same report.
//! What one harness alone needs is checked beside that harness's real program, in
//! tests/harnesses/.

use std::path::Path;

use crate::run::{BIN, Dir, hook_command, server};

/// `sayso ARGS` in `dir`, with `sayso` itself on the PATH; gives (exit code, stdout).
async fn sayso(dir: &Path, base: &str, key: Option<&str>, args: &[&str]) -> (i32, String) {
    let path = format!(
        "{}:/usr/bin:/bin",
        Path::new(BIN).parent().unwrap().display()
    );
    let mut cmd = hook_command(dir, base, key, args);
    cmd.env("PATH", path);
    let out = cmd.output().await.unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_the_one_thing_to_fix_first() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();

    // Nothing installed: the harness will not run the hook at all.
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL") && out.contains(".claude/settings.json does not exist"),
        "{out}"
    );
    assert!(
        out.contains("The one thing to fix first: run `sayso hook install` for this harness"),
        "{out}"
    );

    // Installed: install ends with the same report, and every shared check passes.
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &["hook", "install", "claude", "--dir", d],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("sayso hook doctor claude:"), "{out}");
    let (_, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert!(
        out.contains("runs `sayso hook claude` with 930 s to answer"),
        "{out}"
    );
    assert!(
        out.contains(&format!("{} takes the key", srv.base)),
        "{out}"
    );
    assert!(out.contains(&format!("`sayso` is {BIN}")), "{out}");

    // A wait longer than the harness gives the hook: the harness would kill it first.
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &[
            "hook",
            "doctor",
            "claude",
            "--dir",
            d,
            "--timeout-s",
            "3600",
        ],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the harness gives the hook 930 s, less than the hook's wait (3600 s)"),
        "{out}"
    );

    // A key the server refuses, and a server that is not there.
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some("sk_wrong"),
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL the server refuses or cannot be reached"),
        "{out}"
    );
    let (code, out) = sayso(
        dir.path(),
        "http://127.0.0.1:9",
        Some(&srv.key),
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cannot be reached") || out.contains("refuses"),
        "{out}"
    );
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        None,
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no API key"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_program_the_harness_cannot_find_fails() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();
    let missing = "/nowhere/sayso hook claude";
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &[
            "hook",
            "install",
            "claude",
            "--dir",
            d,
            "--command",
            missing,
        ],
    )
    .await;
    assert_eq!(code, 0, "install writes the entry all the same: {out}");
    assert!(
        out.contains("FAIL `/nowhere/sayso` does not exist"),
        "{out}"
    );
    let (code, out) = sayso(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &["hook", "doctor", "claude", "--dir", d, "--command", missing],
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("The one thing to fix first:"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_database_the_agent_can_read_is_named() {
    use crate::common::db::fresh_sqlite_url;
    use crate::common::process::SaysoProcess;

    // The real `sayso serve`, as this same user: the agent's user reads its environment and
    // its database file.
    let db = fresh_sqlite_url();
    let server = SaysoProcess::start(BIN, &db.url).await;
    let pid = server.child.id().unwrap();
    let key = server.key.clone().expect("the first run writes a key");
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();
    let (_, out) = sayso(
        dir.path(),
        &server.base,
        Some(&key),
        &["hook", "doctor", "claude", "--dir", d],
    )
    .await;
    assert!(
        out.contains(&format!(
            "risk sayso serve (pid {pid}) runs where this user reads its environment, its database {}",
            db.path.display()
        )),
        "{out}"
    );
    assert!(out.contains("run sayso as another user"), "{out}");

    // The database URL in the agent's own environment is named too.
    let mut cmd = hook_command(
        dir.path(),
        &server.base,
        Some(&key),
        &["hook", "doctor", "claude", "--dir", d],
    );
    cmd.env("SAYSO_DATABASE_URL", &db.url);
    let out = String::from_utf8(cmd.output().await.unwrap().stdout).unwrap();
    assert!(
        out.contains("risk SAYSO_DATABASE_URL is set where the hook runs"),
        "{out}"
    );
    server.kill().await;
}
