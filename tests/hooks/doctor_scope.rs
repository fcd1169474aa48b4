//! `sayso hook doctor`'s report, as a newcomer and an operator read it: failures first, then
//! risks, then advice, then what passed, each under its heading and mark, advice never
//! labelled ok, for every harness; and it looks only at the server `SAYSO_URL` names, and at
//! it only when it runs as the hook's own user: another server, or another user's, is never
//! named.

use std::path::Path;
use std::time::Duration;

use crate::common::db::fresh_sqlite_url;
use crate::common::process::SaysoProcess;
use crate::run::{BIN, Dir, hook_command, server};

/// `sayso ARGS` in `dir` (also its HOME), with `sayso` on the PATH; gives stdout.
async fn sayso(dir: &Path, base: &str, key: &str, args: &[&str]) -> String {
    let path = format!(
        "{}:/usr/bin:/bin",
        Path::new(BIN).parent().unwrap().display()
    );
    let mut cmd = hook_command(dir, base, Some(key), args);
    cmd.env("PATH", path)
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("COPILOT_ALLOW_ALL")
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR");
    let out = cmd.output().await.unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The groups of a report in the order printed, each with the marks of its findings; panics
/// on a finding outside a group.
fn groups(report: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in report.lines().skip(1) {
        if !line.starts_with(' ') && line.ends_with(':') {
            out.push((line.split(':').next().unwrap().to_string(), vec![]));
        } else if let Some(finding) = line.strip_prefix("  ")
            && !finding.starts_with(' ')
        {
            let mark = finding.split_whitespace().next().unwrap().to_string();
            out.last_mut()
                .unwrap_or_else(|| panic!("a finding before any heading: {report}"))
                .1
                .push(mark);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_doctor_prints_failures_then_risks_then_advice_then_what_passed() {
    let (_db, srv) = server().await;
    let order = ["Failures", "Risks", "Advice", "Passed"];
    let mark = |g: &str| match g {
        "Failures" => "FAIL",
        "Risks" => "risk",
        "Advice" => "advice",
        _ => "ok",
    };
    for harness in ["claude", "codex", "gemini", "copilot", "cursor", "pi"] {
        let dir = Dir::new();
        let d = dir.path().to_str().unwrap();
        sayso(
            dir.path(),
            &srv.base,
            &srv.key,
            &["hook", "install", harness, "--dir", d],
        )
        .await;
        // A wrong key: one failure beside whatever else this harness says.
        let report = sayso(
            dir.path(),
            &srv.base,
            "sk_wrong",
            &["hook", "doctor", harness, "--dir", d],
        )
        .await;
        let groups = groups(&report);
        let names: Vec<&str> = groups.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(names.first(), Some(&"Failures"), "{harness}: {report}");
        let mut at = 0;
        for name in &names {
            let i = order.iter().position(|o| o == name).unwrap();
            assert!(i >= at, "{harness}: {name} out of order: {report}");
            at = i;
        }
        for (group, marks) in &groups {
            assert!(!marks.is_empty(), "{harness}: an empty {group}: {report}");
            assert!(
                marks.iter().all(|m| m == mark(group)),
                "{harness}: {group} holds {marks:?}: {report}"
            );
        }
        assert!(report.contains("The one thing to fix first:"), "{report}");
        // Advice a harness always needs is advice, never a passed check.
        for line in report.lines().filter(|l| l.trim_start().starts_with("ok ")) {
            assert!(
                !line.contains("--yolo") && !line.contains("has not been run"),
                "{harness}: advice labelled ok: {line}"
            );
        }
        if harness == "cursor" {
            assert!(
                report.contains("  advice Cursor's agent has not been run"),
                "{report}"
            );
        }
        if harness == "gemini" {
            assert!(
                report.contains("  advice the doctor cannot see gemini-cli's command line"),
                "{report}"
            );
        }
        if harness == "copilot" {
            assert!(
                report.contains("  advice ") && report.contains("--trust-folder"),
                "{report}"
            );
        }
    }
}

/// `sayso serve` as the user nobody, on its own database in a folder of nobody's; `None`
/// (after a loud SKIPPED) when this process is not root, except in CI.
async fn serve_as_nobody(dir: &Path) -> Option<(tokio::process::Child, String)> {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        assert!(
            std::env::var_os("CI").is_none(),
            "these checks need root in CI"
        );
        eprintln!("SKIPPED: not root, so no server can run as another user");
        return None;
    }
    std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
    let port = crate::common::port::free_port();
    let child = tokio::process::Command::new("/usr/bin/setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            BIN,
            "serve",
        ])
        .current_dir(dir)
        .env(
            "SAYSO_DATABASE_URL",
            format!("sqlite://{}/other.db", dir.display()),
        )
        .env("SAYSO_STATE_DIR", dir)
        .env("SAYSO_LISTEN", format!("127.0.0.1:{port}"))
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Some((child, format!("http://127.0.0.1:{port}")));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("sayso did not listen as nobody");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_server_sayso_url_names_is_looked_into_and_only_as_its_own_user() {
    // Two servers of this user: the doctor names the one SAYSO_URL names, never the other.
    let (db_a, db_b) = (fresh_sqlite_url(), fresh_sqlite_url());
    let a = SaysoProcess::start(BIN, &db_a.url).await;
    let b = SaysoProcess::start(BIN, &db_b.url).await;
    let (pid_a, pid_b) = (a.child.id().unwrap(), b.child.id().unwrap());
    let key = a.key.clone().unwrap();
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();
    let doctor = ["hook", "doctor", "claude", "--dir", d];
    let report = sayso(dir.path(), &a.base, &key, &doctor).await;
    assert!(
        report.contains(&format!(
            "risk   sayso serve (pid {pid_a}) at {} runs as this user, which reads its environment, its database {}",
            a.base,
            db_a.path.display()
        )),
        "{report}"
    );
    assert!(
        !report.contains(&format!("pid {pid_b}"))
            && !report.contains(&db_b.path.display().to_string()),
        "another server was named: {report}"
    );
    // A server SAYSO_URL does not name on this machine names nothing of either.
    let report = sayso(dir.path(), "http://127.0.0.1:9", &key, &doctor).await;
    assert!(!report.contains("sayso serve (pid"), "{report}");
    b.kill().await;

    // Another user's server: nothing of it is printed, though root could read it all.
    let other = Dir::new();
    let Some((mut child, base)) = serve_as_nobody(other.path()).await else {
        a.kill().await;
        return;
    };
    let pid = child.id().unwrap();
    let report = sayso(dir.path(), &base, &key, &doctor).await;
    assert!(
        !report.contains(&format!("pid {pid}"))
            && !report.contains(&other.path().display().to_string()),
        "another user's server was looked into: {report}"
    );
    assert!(
        report.contains(&format!(
            "risk   this user is root, and {base} runs on this machine"
        )),
        "{report}"
    );
    child.kill().await.unwrap();
    a.kill().await;
}
