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

/// `sayso hook doctor claude --dir DIR ARGS`, as [`sayso`] runs it.
async fn doctor(dir: &Dir, base: &str, key: Option<&str>, args: &[&str]) -> (i32, String) {
    let d = dir.path().to_str().unwrap();
    let all = [&["hook", "doctor", "claude", "--dir", d][..], args].concat();
    sayso(dir.path(), base, key, &all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_the_one_thing_to_fix_first() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();

    // Nothing installed: the harness will not run the hook at all.
    let (code, out) = doctor(&dir, &srv.base, Some(&srv.key), &[]).await;
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
    let (_, out) = doctor(&dir, &srv.base, Some(&srv.key), &[]).await;
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
    let (code, out) = doctor(&dir, &srv.base, Some(&srv.key), &["--timeout-s", "3600"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the harness gives the hook 930 s, less than the hook's wait (3600 s)"),
        "{out}"
    );

    // A key the server refuses, and a server that is not there.
    let (code, out) = doctor(&dir, &srv.base, Some("sk_wrong"), &[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL   the server refuses or cannot be reached"),
        "{out}"
    );
    let (code, out) = doctor(&dir, "http://127.0.0.1:9", Some(&srv.key), &[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cannot be reached") || out.contains("refuses"),
        "{out}"
    );
    let (code, out) = doctor(&dir, &srv.base, None, &[]).await;
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
        out.contains("FAIL   `/nowhere/sayso` does not exist"),
        "{out}"
    );
    let (code, out) = doctor(&dir, &srv.base, Some(&srv.key), &["--command", missing]).await;
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
    let (_, out) = doctor(&dir, &server.base, Some(&key), &[]).await;
    assert!(
        out.contains(&format!(
            "risk   sayso serve (pid {pid}) at {} runs as this user, which reads its environment, its database {}",
            server.base,
            db.path.display()
        )),
        "{out}"
    );
    // The fix says what a safe set-up is, to start now, not only that this one is a risk.
    assert!(out.contains("run sayso as another user"), "{out}");
    assert!(
        out.contains("`sudo -u sayso -H sh -c 'cd /var/lib/sayso && sayso'`")
            && out.contains("give the agent only SAYSO_URL and that key"),
        "{out}"
    );

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
        out.contains("risk   SAYSO_DATABASE_URL is set where the hook runs"),
        "{out}"
    );
    server.kill().await;
}

/// `sayso hook doctor claude --command COMMAND` as the unprivileged user `nobody`, with `path`
/// as its PATH: the tests run as root, for whom access(2) allows every write. `None` (after
/// a loud SKIPPED) when this process is not root, except in CI.
async fn doctor_as_nobody(
    dir: &Path,
    base: &str,
    key: &str,
    path: &str,
    command: &str,
) -> Option<String> {
    let root =
        std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if !root.unwrap_or(false) {
        assert!(
            std::env::var_os("CI").is_none(),
            "the doctor's program checks need root in CI"
        );
        eprintln!("SKIPPED: not root, so the doctor cannot be run as another user");
        return None;
    }
    let mut cmd = tokio::process::Command::new("/usr/bin/setpriv");
    cmd.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
        BIN,
    ])
    .args(["hook", "doctor", "claude", "--command", command, "--dir"])
    .arg(dir)
    .current_dir(dir)
    .env("HOME", dir)
    .env("SAYSO_URL", base)
    .env("SAYSO_KEY", key)
    .env("PATH", path)
    .env_remove("SAYSO_HOOK_POLICY")
    .env_remove("SAYSO_DATABASE_URL");
    let out = cmd.output().await.unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A folder with a stand-in `sayso` (the doctor never runs it), both owned by `uid`, of mode
/// `mode`.
fn program_dir(under: &Path, name: &str, uid: u32, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = under.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("sayso");
    std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::chown(&program, Some(uid), Some(uid)).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// The attack: the agent's user rewrites the `sayso` the harness runs (it sits in a folder of
/// that user's, as `~/.cargo/bin` is), or puts its own earlier on the PATH; every call is then
/// allowed. The doctor names both as risks, and says nothing of a root-owned program.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_program_the_agent_could_swap_is_named_as_a_risk() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let nobody = 65534;
    let mine = program_dir(dir.path(), "home-bin", nobody, 0o755);
    let system = program_dir(dir.path(), "system-bin", 0, 0o755);
    let empty = dir.path().join("home-empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::os::unix::fs::chown(&empty, Some(nobody), Some(nobody)).unwrap();
    let bins = "/usr/bin:/bin";

    // Root's program, root's folders, nothing the user writes before it: no risk.
    let path = format!("{}:{bins}", system.display());
    let Some(out) =
        doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, "sayso hook claude").await
    else {
        return;
    };
    assert!(
        out.contains(&format!("`sayso` is {}/sayso", system.display())),
        "{out}"
    );
    assert!(
        !out.contains("can replace") && !out.contains("PATH entries"),
        "{out}"
    );

    // The user's own copy, found first: it can rewrite it.
    let path = format!("{}:{}:{bins}", mine.display(), system.display());
    let out = doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, "sayso hook claude")
        .await
        .unwrap();
    assert!(
        out.contains(&format!(
            "risk   this user can replace {}/sayso, the program the hook runs",
            mine.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("--command '/usr/local/bin/sayso hook claude'"),
        "{out}"
    );

    // Read-only, but the user's own: it may chmod it back.
    let locked = program_dir(dir.path(), "home-locked", nobody, 0o555);
    let path = format!("{}:{bins}", locked.display());
    let out = doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, "sayso hook claude")
        .await
        .unwrap();
    assert!(
        out.contains(&format!(
            "risk   this user can replace {}/sayso",
            locked.display()
        )),
        "{out}"
    );

    // A folder of the user's before root's program on the PATH: a `sayso` put there wins.
    let path = format!("{}:{}:{bins}", empty.display(), system.display());
    let out = doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, "sayso hook claude")
        .await
        .unwrap();
    assert!(
        out.contains(&format!(
            "risk   PATH entries before {} that this user can write into: {}",
            system.display(),
            empty.display()
        )),
        "{out}"
    );
    assert!(!out.contains("can replace"), "{out}");
    // Named by its absolute path, root's program is found without the PATH: no risk.
    let command = format!("{}/sayso hook claude", system.display());
    let out = doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, &command)
        .await
        .unwrap();
    assert!(
        !out.contains("can replace") && !out.contains("PATH entries"),
        "{out}"
    );

    // A root-owned link to the user's program is followed to it.
    let links = program_dir(dir.path(), "system-links", 0, 0o755);
    std::fs::remove_file(links.join("sayso")).unwrap();
    std::os::unix::fs::symlink(mine.join("sayso"), links.join("sayso")).unwrap();
    let path = format!("{}:{bins}", links.display());
    let out = doctor_as_nobody(dir.path(), &srv.base, &srv.key, &path, "sayso hook claude")
        .await
        .unwrap();
    assert!(
        out.contains("risk   this user can replace") && out.contains("home-bin"),
        "{out}"
    );
}
