//! The first run as a newcomer meets it: the inbox's own person named after the user (asked
//! on a terminal, never where nobody can answer), and on a terminal the feed link as a QR
//! code a phone's camera opens, never in the file or on a stdout that is not a terminal.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::common;
use crate::common::process::{listening_address, serve_command, spawn_talking, stderr_lines};
use crate::replica::{BIN, sayso, start_replica_with};

/// The half blocks a QR code is drawn with.
const BLOCKS: [char; 3] = ['█', '▀', '▄'];

/// Reads a QR code drawn in half blocks back as a camera would (each module 4×4 pixels), or
/// `None` when `text` holds no readable one.
fn read_qr(text: &str) -> Option<String> {
    let mut rows: Vec<Vec<bool>> = Vec::new();
    for line in text.lines() {
        // Strip the colour escapes: what remains of a code line is blocks and spaces.
        let mut plain = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                chars.by_ref().find(|&c| c == 'm');
            } else if c != '\r' {
                plain.push(c);
            }
        }
        if !plain.chars().any(|c| BLOCKS.contains(&c)) && !plain.starts_with("  ") {
            continue;
        }
        if !plain.chars().all(|c| c == ' ' || BLOCKS.contains(&c)) || plain.trim().is_empty() {
            continue;
        }
        let (top, bottom) = plain
            .chars()
            .map(|c| (c == '█' || c == '▀', c == '█' || c == '▄'))
            .unzip();
        rows.push(top);
        rows.push(bottom);
    }
    let width = rows.iter().map(Vec::len).max()?;
    // The quiet zone's blank lines were skipped above: put light rows back around the code.
    let blank = vec![false; width];
    let mut grid = vec![blank.clone(); 4];
    grid.extend(rows.into_iter().map(|mut r| {
        r.resize(width, false);
        r
    }));
    grid.extend(vec![blank; 4]);
    const SCALE: usize = 4;
    let mut img =
        rqrr::PreparedImage::prepare_from_greyscale(width * SCALE, grid.len() * SCALE, |x, y| {
            if grid[y / SCALE][x / SCALE] { 0 } else { 255 }
        });
    let grids = img.detect_grids();
    Some(grids.first()?.decode().ok()?.1)
}

fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_the_own_person_is_named_after_the_account_and_nothing_asks() {
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    // CI=true and pipes, not a terminal: a prompt would hang here; the server listens.
    let mut a = start_replica_with(&db.url, &[("USER", "Ana.Lopez"), ("CI", "true")]).await;
    let file = std::fs::read_to_string(a.state.file()).unwrap();
    assert!(
        file.contains("created the inbox \"default\" with you in it as \"ana-lopez\""),
        "{file}"
    );
    assert!(!file.contains(BLOCKS), "the file holds a QR code:\n{file}");
    a.child.kill().await.unwrap();
    let list = said(&sayso(&["person", "list"], &db.url).await);
    assert!(list.contains("ana-lopez"), "{list}");
    assert!(list.contains("(the inbox's own)"), "{list}");
    assert!(!list.lines().any(|l| l.starts_with("default")), "{list}");

    // An account that names nobody (root) gives "me".
    let db = common::db::fresh_sqlite_url();
    let mut b = start_replica_with(&db.url, &[("USER", "root"), ("CI", "true")]).await;
    let file = std::fs::read_to_string(b.state.file()).unwrap();
    assert!(file.contains("with you in it as \"me\""), "{file}");
    b.child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_the_first_run_asks_the_name_and_shows_the_link_as_a_qr_code() {
    if Command::new("script")
        .arg("--version")
        .output()
        .await
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "script (util-linux) is needed in CI"
        );
        eprintln!("SKIPPED: no `script` (util-linux) to give sayso a terminal");
        return;
    }
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    let state = common::first_run::StateDir::new();
    let (name, dir) = state.env();
    // `script` runs sayso on a pseudo-terminal of its own: stdin and stdout are a terminal.
    let mut child = spawn_talking(
        Command::new("script")
            .args(["-qfec", BIN, "/dev/null"])
            .env(name, dir)
            .env("SAYSO_DATABASE_URL", &db.url)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_PUBLIC_URL", "http://192.0.2.10:8080")
            .env("SAYSO_LOG", "warn")
            .env("USER", "ana")
            .env_remove("CI")
            .stderr(Stdio::null()),
        "script",
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut screen = String::new();
    let seen = tokio::time::timeout(Duration::from_secs(30), async {
        let mut answered = false;
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // As it comes: the prompt ends without a newline.
            let n = out.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
            screen = String::from_utf8_lossy(&bytes).into_owned();
            if !answered && screen.contains("Your name") && screen.ends_with("]: ") {
                assert!(screen.contains("[ana]"), "{screen}");
                stdin.write_all(b"Bo\n").await.unwrap();
                answered = true;
            }
            if screen.contains("changes your name.") {
                return answered;
            }
        }
        false
    })
    .await;
    child.kill().await.unwrap();
    assert_eq!(seen, Ok(true), "the first run's screen:\n{screen}");
    assert!(
        screen.contains("with you in it as \"bo\""),
        "the name typed is the person's: {screen}"
    );
    let secrets = state.secrets().expect("the first run wrote its file");
    assert_eq!(
        read_qr(&screen).as_deref(),
        Some(secrets.feed.as_str()),
        "the screen's QR code is the feed link:\n{screen}"
    );
    let file = std::fs::read_to_string(state.file()).unwrap();
    assert!(!file.contains(BLOCKS), "{file}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn person_link_qr_prints_a_code_of_the_link_and_rename_keeps_the_link() {
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    let mut a = start_replica_with(&db.url, &[("USER", "ana"), ("CI", "true")]).await;
    a.child.kill().await.unwrap();
    let out = sayso(&["person", "link", "ana", "--qr"], &db.url).await;
    assert!(out.status.success(), "{}", said(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let link = text.lines().next().unwrap();
    assert!(link.contains("/inbox/"), "{text}");
    assert_eq!(read_qr(&text).as_deref(), Some(link), "{text}");
    // Without --qr, the link alone.
    let out = sayso(&["person", "link", "ana"], &db.url).await;
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), link);

    let out = sayso(&["person", "rename", "ana", "ana-lopez"], &db.url).await;
    assert!(out.status.success(), "{}", said(&out));
    let out = sayso(&["person", "link", "ana-lopez"], &db.url).await;
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), link);
    // Refusals name what is wrong.
    let out = sayso(&["person", "add", "bo"], &db.url).await;
    assert!(out.status.success(), "{}", said(&out));
    for (args, want) in [
        (
            ["person", "rename", "bo", "ana-lopez"],
            "already has a person named \"ana-lopez\"",
        ),
        (["person", "rename", "cy", "dee"], "no person named \"cy\""),
        (["person", "rename", "bo", "Bo B"], "not a person's name"),
    ] {
        let out = sayso(&args, &db.url).await;
        assert!(!out.status.success(), "{args:?}");
        assert!(said(&out).contains(want), "{args:?}: {}", said(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_beyond_this_machine_without_a_public_url_is_warned_about_at_start() {
    let db = common::db::fresh_sqlite_url();
    let state = common::first_run::StateDir::new();
    let mut child = serve_command(BIN, &state, &db.url, Some("0.0.0.0:0"))
        .env("SAYSO_LOG", "warn,sayso::cli=info")
        .env("CI", "true")
        .stdout(Stdio::null())
        .spawn()
        .expect("sayso starts");
    let mut warnings = Vec::new();
    listening_address(
        &mut stderr_lines(&mut child),
        Duration::from_secs(30),
        |_, v| {
            if v["level"] == "WARN" {
                warnings.push(
                    v["fields"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        },
    )
    .await;
    child.kill().await.unwrap();
    assert!(
        warnings.iter().any(
            |w| w.contains("SAYSO_PUBLIC_URL is not set") && w.contains("set SAYSO_PUBLIC_URL")
        ),
        "{warnings:#?}"
    );
}
