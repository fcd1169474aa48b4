//! `sayso config` as an operator runs it: the real binary, in a clean environment, prints every
//! setting with the value serve would use and where it came from (a flag, a variable, a
//! default, or "derived from" what a computed default follows), secrets masked, and `# unset`
//! only where the setting is off.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sayso");

fn config(args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = std::env::temp_dir();
    Command::new(BIN)
        .arg("config")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn has(lines: &[String], want: &str) {
    assert!(lines.iter().any(|l| l == want), "{want} in {lines:#?}");
}

#[test]
fn the_defaults_in_effect_are_printed_with_what_they_follow() {
    let l = lines(&config(&[], &[]));
    has(&l, "SAYSO_LISTEN=127.0.0.1:8080  # default");
    has(
        &l,
        "SAYSO_PUBLIC_URL=http://127.0.0.1:8080  # derived from SAYSO_LISTEN",
    );
    has(
        &l,
        "SAYSO_WAITING_PER_KEY=7500  # derived from SAYSO_MAX_CONNECTIONS (half of it)",
    );
    has(
        &l,
        "SAYSO_WAITING_CONNECTIONS=13500  # derived from SAYSO_MAX_CONNECTIONS (nine tenths of it)",
    );
    has(
        &l,
        "SAYSO_CONNECTIONS_PER_ADDRESS=13500  # derived from SAYSO_WAITING_CONNECTIONS (the same)",
    );
    has(&l, "SAYSO_IDLE_TIMEOUT_S=5  # default");
    has(&l, "SAYSO_RATE_LIMIT_PER_S=100  # default");
    has(&l, "SAYSO_RATE_LIMIT_BURST=400  # default");
    has(
        &l,
        "SAYSO_MCP_ALLOWED_HOSTS=localhost,127.0.0.1,::1  # derived from SAYSO_PUBLIC_URL (its host, and localhost)",
    );
    has(&l, "SAYSO_SMTP_URL=  # unset: email is off");
    // `# unset` only where the setting is off: each says what that means, with no value.
    let unset: Vec<&String> = l.iter().filter(|x| x.contains("# unset")).collect();
    assert!(!unset.is_empty());
    for line in unset {
        assert!(line.contains("=  # unset: "), "{line}");
        let name = line.split('=').next().unwrap();
        assert!(
            [
                "SAYSO_SMTP_URL",
                "SAYSO_RETENTION_DAYS",
                "SAYSO_TRUSTED_PROXIES",
                "SAYSO_MCP_ALLOWED_ORIGINS",
                "SAYSO_METRICS_TOKEN",
                "SAYSO_METRICS_LISTEN",
                // The chats, each off until its token is set (docs/CHANNELS.md).
                "SAYSO_SLACK_BOT_TOKEN",
                "SAYSO_SLACK_SIGNING_SECRET",
                "SAYSO_SLACK_APP_TOKEN",
                "SAYSO_MATRIX_HOMESERVER",
                "SAYSO_MATRIX_USER",
                "SAYSO_MATRIX_PASSWORD",
                "SAYSO_MATRIX_ACCESS_TOKEN",
                "SAYSO_TELEGRAM_BOT_TOKEN",
                "SAYSO_TELEGRAM_WEBHOOK_SECRET",
            ]
            .contains(&name),
            "{line}: has a value in effect"
        );
    }
}

#[test]
fn each_value_says_whether_a_flag_a_variable_or_a_default_gave_it() {
    let l = lines(&config(
        &["--max-await-s", "30", "--listen", "0.0.0.0:9000"],
        &[
            ("SAYSO_MAX_CONNECTIONS", "100"),
            ("SAYSO_WAITING_PER_KEY", "7"),
            ("SAYSO_METRICS_TOKEN", "hunter2-token"),
            ("SAYSO_SMTP_URL", "smtp://me:hunter2@mail.example.com:587"),
        ],
    ));
    has(&l, "SAYSO_MAX_AWAIT_S=30  # flag --max-await-s");
    has(&l, "SAYSO_MAX_CONNECTIONS=100  # variable");
    has(&l, "SAYSO_WAITING_PER_KEY=7  # variable");
    has(
        &l,
        "SAYSO_WAITING_CONNECTIONS=90  # derived from SAYSO_MAX_CONNECTIONS (nine tenths of it)",
    );
    has(
        &l,
        "SAYSO_CONNECTIONS_PER_ADDRESS=90  # derived from SAYSO_WAITING_CONNECTIONS (the same)",
    );
    has(
        &l,
        "SAYSO_PUBLIC_URL=http://localhost:9000  # derived from SAYSO_LISTEN",
    );
    has(
        &l,
        "SAYSO_METRICS_LISTEN=0.0.0.0:9000  # derived from SAYSO_LISTEN (/metrics is served on the main address)",
    );
    has(&l, "SAYSO_METRICS_TOKEN=****  # variable");
    has(
        &l,
        "SAYSO_SMTP_URL=smtp://me:****@mail.example.com:587  # variable",
    );
    assert!(!l.iter().any(|x| x.contains("hunter2")), "{l:#?}");
}

#[test]
fn settings_serve_would_refuse_are_named_not_printed() {
    let out = config(&["--public-url", "ftp://example.com"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sayso serve would refuse these settings") && err.contains("SAYSO_PUBLIC_URL"),
        "{err}"
    );
}

fn warnings(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(String::from)
        .collect()
}

#[test]
fn listening_beyond_this_machine_without_a_public_url_is_warned_about() {
    assert_eq!(warnings(&config(&[], &[])), Vec::<String>::new());
    let w = warnings(&config(&[], &[("SAYSO_LISTEN", "0.0.0.0:8080")]));
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains("SAYSO_PUBLIC_URL is not set") && w[0].contains("http://localhost:8080"),
        "{w:#?}"
    );
    // Set, it is quiet again.
    let w = warnings(&config(
        &["--listen", "0.0.0.0:8080"],
        &[("SAYSO_PUBLIC_URL", "https://ask.example.com")],
    ));
    assert_eq!(w, Vec::<String>::new());
}

#[test]
fn a_plain_http_public_url_off_this_machine_is_warned_about() {
    let w = warnings(&config(
        &[],
        &[
            ("SAYSO_LISTEN", "0.0.0.0:8080"),
            ("SAYSO_PUBLIC_URL", "http://192.168.1.20:8080"),
        ],
    ));
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains("plain http") && w[0].contains("SAYSO_PUBLIC_URL=https://"),
        "{w:#?}"
    );
    // On this machine, plain http is a secure context: nothing to say.
    let w = warnings(&config(
        &[],
        &[("SAYSO_PUBLIC_URL", "http://localhost:8080")],
    ));
    assert_eq!(w, Vec::<String>::new());
}
