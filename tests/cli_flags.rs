//! The client commands in the user's words: their help shows their own flags only, `--kind`
//! defaults to yes/no, an `--option` carries its description, mistakes are named by the flag
//! that was typed, and a server that cannot be reached is said to be so within 3 s, with the
//! likely mistake. And `sayso` alone still serves.

mod common;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::cli::{BIN, client, output, stderr, stdout};
use common::port::free_port;
use common::process::{listening_address, serve_command, stderr_lines};
use common::server::{fresh_server, s};
use serde_json::Value;

const CLIENT_COMMANDS: [&str; 7] = ["ask", "get", "await", "cancel", "todo", "list", "mcp"];

async fn run(base: &str, key: Option<&str>, args: &[&str]) -> Output {
    output(client(base, key, args)).await
}

#[tokio::test]
async fn client_help_shows_client_flags_only_and_nothing_the_environment_gives_as_required() {
    for command in CLIENT_COMMANDS {
        let out = run("http://127.0.0.1:1", None, &[command, "--help"]).await;
        assert!(out.status.success(), "{command}: {out:?}");
        let help = stdout(&out);
        for server_flag in [
            "--database-url",
            "--listen",
            "--log",
            "--log-format",
            "--public-url",
        ] {
            assert!(
                !help.contains(server_flag),
                "`sayso {command} --help` shows {server_flag}:\n{help}"
            );
        }
        assert!(
            help.contains("--server") && help.contains("--key"),
            "{help}"
        );
        let usage = help.lines().find(|l| l.starts_with("Usage:")).unwrap();
        assert!(
            !usage.contains("--server") && !usage.contains("--key"),
            "{command}: {usage}"
        );
        // Not shown, and not taken either.
        let out = run(
            "http://127.0.0.1:1",
            None,
            &[command, "--database-url", "sqlite://x.db"],
        )
        .await;
        assert!(
            stderr(&out).contains("unexpected argument '--database-url'"),
            "{command}: {out:?}"
        );
    }
    let todo = stdout(&run("http://127.0.0.1:1", None, &["todo", "--help"]).await);
    assert!(
        !todo.contains("question"),
        "a to-do is not a question:\n{todo}"
    );
    let ask = stdout(&run("http://127.0.0.1:1", None, &["ask", "--help"]).await);
    assert!(ask.contains("[default: bool]"), "{ask}");
    assert!(ask.contains("LABEL[: DESCRIPTION]"), "{ask}");
}

#[tokio::test]
async fn a_missing_key_names_the_flag_and_the_variable() {
    for args in [&["ask", "Deploy?"][..], &["list"], &["mcp"]] {
        let out = run("http://127.0.0.1:1", None, args).await;
        assert!(!out.status.success(), "{args:?}: {out:?}");
        let err = stderr(&out);
        assert!(
            err.contains("--key") && err.contains("SAYSO_KEY"),
            "{args:?}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_defaults_to_yes_or_no_and_options_carry_descriptions() {
    let (_db, srv) = fresh_server().await;
    let out = run(&srv.base, Some(&srv.key), &["ask", "Deploy?", "--json"]).await;
    assert!(out.status.success(), "{out:?}");
    let handle: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let d = srv.get(s(&handle, "decision_id")).await;
    assert_eq!(d["kind"], "bool", "{d}");

    let out = run(
        &srv.base,
        Some(&srv.key),
        &[
            "ask",
            "Which plan?",
            "--kind",
            "choose",
            "--option",
            "Blue: calm, the default",
            "--option",
            "Plan A\\: fast: the quick one",
            "--json",
        ],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let handle: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let page = reqwest::get(s(&handle, "web_url"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for shown in ["Blue", "calm, the default", "Plan A: fast", "the quick one"] {
        assert!(page.contains(shown), "the page lacks {shown:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistakes_are_named_by_the_flag_typed_and_nothing_is_sent() {
    let (_db, srv) = fresh_server().await;
    let ask = |args: &'static [&'static str]| run(&srv.base, Some(&srv.key), args);
    let out = ask(&["ask", "Which?", "--kind", "choose"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("--kind choose needs --option LABEL, once for each choice"),
        "{err}"
    );
    assert!(!err.contains("options:"), "{err}");
    let out = ask(&["ask", "Soon?", "--ttl", "5s"]).await;
    let err = stderr(&out);
    assert!(
        err.contains("--ttl: must be from 10s to 30d (got 5s)"),
        "{err}"
    );
    assert!(!err.contains("ttl_seconds"), "{err}");
    let out = ask(&["todo", "Later", "--ttl", "31d"]).await;
    assert!(
        stderr(&out).contains("--ttl: must be from 10s to 30d"),
        "{out:?}"
    );
    let out = ask(&["ask", "Yes?", "--option", "A"]).await;
    assert!(
        stderr(&out).contains("--option is for --kind choose; this is --kind bool"),
        "{out:?}"
    );
    // Checked before sending: none of these reached the server.
    let (status, page) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    assert_eq!(status, 200);
    assert_eq!(page["items"].as_array().unwrap().len(), 0, "{page}");

    // What only the server can tell is put in the flag's name too.
    let out = ask(&["ask", "Ship?", "--approvers", "zed"]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("--approvers: the inbox \"default\" has no person named \"zed\""),
        "{err}"
    );
    assert!(!err.contains("approvers[0]"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_said_within_3_s_with_the_likely_mistake() {
    let (_db, srv) = fresh_server().await;
    let closed = format!("http://127.0.0.1:{}", free_port());
    let https = srv.base.replace("http://", "https://");
    let cases: [(&str, &[&str], &str); 6] = [
        (
            &closed,
            &["get", "some-id"],
            "nothing listens at 127.0.0.1:",
        ),
        (&closed, &["ask", "Deploy?"], "nothing listens at"),
        (&closed, &["list"], "nothing listens at"),
        (&https, &["get", "some-id"], "speaks plain HTTP, not HTTPS"),
        // Waiting commands wait for a server that went away, not for one never reached.
        (&closed, &["ask", "Deploy?", "--wait"], "nothing listens at"),
        (
            &https,
            &["await", "some-id"],
            "write http:// instead of https://",
        ),
    ];
    for (base, args, hint) in cases {
        let started = Instant::now();
        let out = run(base, Some(&srv.key), args).await;
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(3), "{args:?} on {base}: {out:?}");
        assert!(
            took < Duration::from_secs(3),
            "{args:?} on {base} took {took:?}"
        );
        let err = stderr(&out);
        assert!(err.contains(hint), "{args:?} on {base}: {err}");
        assert!(!err.contains("retrying"), "{err}");
    }
    let out = run(&format!("{}/v1", srv.base), Some(&srv.key), &["list"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("ends in /v1"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_link_given_as_sayso_url_is_named_and_never_echoed() {
    let (_db, srv) = fresh_server().await;
    let feed = srv.feed_url().await;
    let handle = srv
        .create(serde_json::json!({"question": "Deploy?", "kind": "bool"}))
        .await;
    let answer = s(&handle, "web_url").to_string();
    let cases = [
        (
            feed.clone(),
            "that is your feed's link, which answers as you",
        ),
        (answer.clone(), "that is a question's answer link"),
    ];
    for (link, says) in cases {
        for args in [&["list"][..], &["ask", "Deploy?"], &["await", "some-id"]] {
            let out = run(&link, Some(&srv.key), args).await;
            assert_eq!(out.status.code(), Some(64), "{args:?}: {out:?}");
            let err = stderr(&out);
            assert!(err.contains(says), "{err}");
            assert!(
                err.contains(&format!(
                    "SAYSO_URL is the server's address: {}\n",
                    srv.base
                )),
                "{err}"
            );
            // The link is a secret: its token is not printed again.
            let token = link.rsplit('/').next().unwrap();
            assert!(!err.contains(token), "{err}");
        }
    }
    // Nothing was asked through it.
    let (_, page) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1, "{page}");
}

#[tokio::test]
async fn a_mistyped_command_line_exits_64_and_a_hooks_keeps_its_harnesss_code() {
    let nowhere = "http://127.0.0.1:1";
    for args in [
        &["frobnicate"][..],
        &["lsit"],
        &["ask", "Deploy?", "--bogus"],
        &["key", "create", "--bogus"],
        &["person", "list", "--bogus"],
        &["serve", "--listen", "not-an-address"],
        &["hook", "doctor", "claude", "--bogus"],
        &["ask", "Deploy?"],
    ] {
        // The last: no key, a setting the command line lacks.
        let out = run(nowhere, None, args).await;
        assert_eq!(out.status.code(), Some(64), "{args:?}: {out:?}");
        assert!(stderr(&out).contains("error") || stderr(&out).contains("no API key"));
    }
    let out = run(nowhere, None, &["--help"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A harness reads its own codes: Claude Code's deny is exit 2.
    let out = run(nowhere, None, &["hook", "claude", "--bogus"]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("denied"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_cannot_be_read_is_3_and_one_that_is_not_json_is_64() {
    let (_db, srv) = fresh_server().await;
    let dir = std::env::temp_dir().join(format!("sayso-cli-flags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let not_json = dir.join("form.json");
    std::fs::write(&not_json, "{not json").unwrap();
    let missing = dir.join("missing.json");
    let form = |path: &std::path::Path| {
        let mut cmd = client(&srv.base, Some(&srv.key), &[]);
        cmd.args(["ask", "Form?", "--kind", "form", "--schema-file"])
            .arg(path);
        cmd
    };
    let out = form(&not_json).output().await.unwrap();
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("--schema-file"), "{out:?}");
    let out = form(&missing).output().await.unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("cannot read"), "{out:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Starts `sayso ARGS` with the database and first-run folder of a test, and returns the
/// address it says it listens on.
async fn serves(args: &[&str]) -> String {
    let db = common::db::fresh_sqlite_url();
    let state = common::first_run::StateDir::new();
    let mut child = serve_command(BIN, &state, &db.url, None)
        .args(args)
        .stdout(Stdio::null())
        .spawn()
        .expect("sayso starts");
    let address = listening_address(
        &mut stderr_lines(&mut child),
        Duration::from_secs(60),
        |_, _| {},
    )
    .await;
    let _ = child.kill().await;
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sayso_alone_or_with_the_servers_flags_still_serves() {
    let at = serves(&["--listen", "127.0.0.1:0"]).await;
    assert!(at.starts_with("127.0.0.1:"), "{at}");
    let at = serves(&["serve", "--listen", "127.0.0.1:0", "--log", "info"]).await;
    assert!(at.starts_with("127.0.0.1:"), "{at}");
}

/// `sayso config | head -1`: the reader goes away, and the command ends as other tools do,
/// without a panic's backtrace on the terminal.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    // The reading end is closed before the command starts, so its first write fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(BIN)
        .arg("config")
        .env_remove("SAYSO_DATABASE_URL")
        .env_remove("SAYSO_LISTEN")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(13), "ended by SIGPIPE: {out:?}");
}
