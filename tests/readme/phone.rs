//! README.md's fastest way to a ringing phone, run as a newcomer runs it: the blocks marked
//! `sh phone-walkthrough`, as written, against a stand-in for Telegram's Bot API (Telegram
//! itself cannot run here). The server starts as the README's step 3 starts it, with the
//! token its block exports and the user `ana`; the person says hello to the bot (step 4),
//! and when the question arrives in their chat they press the button the README names.
//!
//! What the test changes, and nothing more: the Bot API's address (`SAYSO_TELEGRAM_API_URL`,
//! the stand-in), the database (`SAYSO_DATABASE_URL`: the test server's is not `sayso.db` in
//! the folder) and, in the `export SAYSO_URL=` line, the port in use.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::{BIN, README_URL, check_output, tools_present};
use crate::common::cli::path_with_sayso;
use crate::common::db::fresh_sqlite_url;
use crate::common::process::SaysoProcess;
use crate::telegram_standin::{BotApiStandIn, Sent};

/// The mark of the blocks this test runs.
const MARK: &str = "phone-walkthrough";
/// The user the README's commands name, as the first run names them after `$USER`.
const USER: &str = "ana";
/// The Telegram user id the README's commands name.
const TELEGRAM_ID: i64 = 4242;
/// The button the README says to press.
const BUTTON: &str = "Yes";

/// The shell blocks marked `phone-walkthrough`, in order.
fn phone_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !info.split_whitespace().any(|w| w == MARK) {
            continue;
        }
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .collect();
        blocks.push(block.join("\n") + "\n");
    }
    assert!(
        !blocks.is_empty(),
        "README.md has no block marked `sh {MARK}`: the fastest way to a phone lost its marks"
    );
    blocks
}

/// The token the blocks export, which the server is started with too.
fn exported_token(script: &str) -> String {
    script
        .lines()
        .find_map(|l| l.trim().strip_prefix("export SAYSO_TELEGRAM_BOT_TOKEN="))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .expect("the phone walk-through exports SAYSO_TELEGRAM_BOT_TOKEN")
}

/// The newest message the bot sent to `chat` that `ok` accepts, within a minute.
async fn arrives(api: &BotApiStandIn, chat: &str, what: &str, ok: impl Fn(&Sent) -> bool) -> Sent {
    for _ in 0..1200 {
        if let Some(s) = api.sent_to(chat).into_iter().rev().find(|s| ok(s)) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "no message to {chat} {what} within a minute; sent: {:#?}; violations: {:?}",
        api.sent_to(chat),
        api.violations()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_rings_the_phone_through_a_telegram_bot_as_written() {
    if !tools_present(&["bash", "jq"]) {
        return;
    }
    crate::common::server::init_tls();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    let blocks = phone_blocks(&readme);
    let written = blocks.concat();
    let token = exported_token(&written);
    let chat = TELEGRAM_ID.to_string();
    for command in [
        format!("sayso person set {USER} --telegram {chat}"),
        format!("sayso person test {USER} --channel telegram"),
    ] {
        assert!(
            written.contains(&command),
            "the README no longer says `{command}`"
        );
    }

    let api = BotApiStandIn::start_with_token(&token).await;
    let db = fresh_sqlite_url();
    // Step 3: `sayso` with the token exported, run by the user ana, with nobody to ask.
    let server = SaysoProcess::start_with_env(
        BIN,
        &db.url,
        &[
            ("SAYSO_TELEGRAM_BOT_TOKEN", token.as_str()),
            ("SAYSO_TELEGRAM_API_URL", api.base.as_str()),
            ("USER", USER),
            ("CI", "true"),
        ],
    )
    .await;

    // Step 4: the person presses Start; the bot answers with their id and the command.
    api.queue(api.reply_update(TELEGRAM_ID, &chat, None, "/start"));
    let hello = arrives(&api, &chat, "answering /start", |s| {
        s.text.contains(&format!("--telegram {chat}"))
    })
    .await;
    assert!(hello.text.contains("sayso person set"), "{}", hello.text);

    // Step 5, as written.
    let script = format!(
        "set -eo pipefail\n{}",
        written.replace(
            &format!("export SAYSO_URL={README_URL}"),
            &format!("export SAYSO_URL={}", server.base)
        )
    );
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(server.state.path())
        .env("PATH", path_with_sayso())
        .env("SAYSO_DATABASE_URL", &db.url)
        .env("SAYSO_TELEGRAM_API_URL", &api.base)
        .env_remove("SAYSO_URL")
        .env_remove("SAYSO_KEY")
        .env_remove("SAYSO_TELEGRAM_BOT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("bash starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let printed = tokio::spawn(async move {
        let mut text = String::new();
        while let Ok(Some(line)) = stdout.next_line().await {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
        text
    });

    // The phone rings: the test message, then the question with its buttons.
    arrives(&api, &chat, "testing the chat", |s| {
        s.text.contains("This is a test from sayso")
    })
    .await;
    let ask = arrives(&api, &chat, "asking the question", |s| {
        s.text.contains("Does the phone ring?") && s.markup.is_some()
    })
    .await;
    let yes = BotApiStandIn::button(&ask, BUTTON);
    api.queue(api.press_update(TELEGRAM_ID, &ask, &yes));

    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the walk-through ends within a minute of the answer")
        .expect("bash ends");
    let printed = printed.await.unwrap();
    let errors = errors.await.unwrap();
    assert!(
        status.success(),
        "the phone walk-through failed ({status})\nscript:\n{script}\nstdout:\n{printed}\nstderr:\n{errors}"
    );
    let expected: Vec<String> = written
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("# →"))
        .map(|w| w.trim().to_string())
        .collect();
    assert!(
        !expected.is_empty(),
        "the phone walk-through promises no output"
    );
    check_output(&printed, &expected);
    assert_eq!(api.violations(), Vec::<String>::new());
}
