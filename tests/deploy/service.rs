//! The image's health check (`sayso health`) and the service unit of deploy/.

use std::process::Stdio;

use tokio::process::Command;

use super::stack::{Sayso, TempDir, free_port, on_path};

async fn health(env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sayso"))
        .arg("health")
        .args(args)
        .env_remove("SAYSO_LISTEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("sayso health runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sayso_health_exits_0_while_the_server_is_ready_and_1_otherwise() {
    let sayso = Sayso::start("https://sayso.example.com", &[]).await;
    // The image listens on 0.0.0.0: the check goes to loopback on the same port.
    let listen = format!("0.0.0.0:{}", sayso.addr.port());
    let (ok, text) = health(&[("SAYSO_LISTEN", &listen)], &[]).await;
    assert!(ok, "{text}");
    assert_eq!(text.trim(), "ready");
    let url = format!("http://{}", sayso.addr);
    assert!(health(&[], &["--url", &url]).await.0);

    let closed = format!("127.0.0.1:{}", free_port());
    let (ok, text) = health(&[("SAYSO_LISTEN", &closed)], &[]).await;
    assert!(!ok, "nothing listens on {closed}: {text}");
    assert!(text.contains("/readyz"), "{text}");
}

/// `systemd-analyze verify` reads the unit as systemd would (every directive known, the
/// binary and environment file present), and `systemd-analyze security` scores its
/// sandboxing; both run offline, on the unit with only the two paths pointed at this build.
#[tokio::test]
async fn the_service_unit_is_valid_and_sandboxed() {
    let Some(analyze) = on_path("systemd-analyze") else {
        eprintln!("SKIPPED: systemd-analyze not found (Debian: the systemd package)");
        return;
    };
    let dir = TempDir::new("unit");
    let unit = std::fs::read_to_string(super::stack::deploy_file("sayso.service")).unwrap();
    let env_file = super::stack::deploy_file("sayso.env");
    let unit = unit
        .replace("/usr/local/bin/sayso", env!("CARGO_BIN_EXE_sayso"))
        .replace("/etc/sayso/sayso.env", &env_file.display().to_string());
    let path = dir.path().join("sayso.service");
    std::fs::write(&path, unit).unwrap();

    let verify = Command::new(&analyze)
        .arg("verify")
        .arg(&path)
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stderr).to_string();
    assert!(verify.status.success(), "systemd-analyze verify: {said}");
    assert!(!said.contains("sayso.service"), "warnings: {said}");

    let security = Command::new(&analyze)
        .args(["security", "--offline=true", "--threshold=20"])
        .arg(&path)
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&security.stdout).to_string();
    let exposure = report
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no score in: {report}"));
    eprintln!("{exposure}");
    // systemd scores 0 (locked down) to 10 (unprotected); "OK" is below 2.
    let score: f64 = exposure
        .split(':')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("unreadable: {exposure}"));
    assert!(score <= 2.0, "{exposure}");
}
