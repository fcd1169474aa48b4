//! README.md's walk-through, run as a reader runs it, so that it stays true.
//!
//! The README marks its walk-through where a reader does not see it: each shell block of it
//! opens with the info string `sh walkthrough`, and the step where the reader plays the person
//! carries an HTML comment `<!-- readme-person: opens $VAR, writes "REMARK" as the remark,
//! presses "BUTTON" -->` above its prose. This test starts the real `sayso` binary on a free
//! port with a fresh SQLite database, then runs the blocks with bash, in one shell, in the
//! folder where the first run wrote `first-run.txt` (as the reader's second terminal is):
//!
//! - `export SAYSO_URL=http://127.0.0.1:8080` is the one line changed, to the port in use; no
//!   other command may name that address (every example goes through `$SAYSO_URL`), and
//!   `SAYSO_KEY` is taken as the README says to take it;
//! - at the person's step the shell pauses, and the test opens the link the README names, as
//!   a browser would (no API key: the person's link is their permission), writes the remark
//!   and presses the button the README names;
//! - every `# → …` line is the output the README promises, `…` standing for anything; each
//!   must be printed, in order;
//! - the person is slower than the long-poll: its `timeout_s=50` is shortened to 1 s and the
//!   person answers after 3 s, as a reader who takes over 50 s does, so a wait that does not
//!   call again until answered shows `pending` and fails the promised output.
//!
//! The blocks marked `sh phone-walkthrough` (the fastest way to a ringing phone) are run by
//! `phone.rs`, against a stand-in for Telegram's Bot API.
//!
//! bash, curl and jq are needed; where one is missing the test is SKIPPED, except under
//! `CI=true`, where that fails it.

mod common;
#[path = "readme/phone.rs"]
mod phone;
#[path = "chat/standin.rs"]
#[allow(dead_code)]
mod standin;
#[path = "chat/telegram_standin.rs"]
#[allow(dead_code)]
mod telegram_standin;

use std::process::Stdio;
use std::time::Duration;

use common::cli::path_with_sayso;
use common::db::fresh_sqlite_url;
use common::process::{SaysoProcess, spawn_talking};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sayso");
/// The address the README's walk-through names, as the server prints it by default.
const README_URL: &str = "http://127.0.0.1:8080";
/// What the script prints when the person's turn comes; the test answers on stdin.
const PERSON_CUE: &str = "@@readme-person ";
/// The walk-through's long-poll, as the README writes it and as the test shortens it.
const README_POLL: &str = "timeout_s=50";
const TEST_POLL: &str = "timeout_s=1";
/// How long the person takes to answer: longer than a few of the test's long-polls.
const PERSON_TAKES: Duration = Duration::from_secs(3);

#[tokio::test]
async fn the_readme_walk_through_runs_as_written() {
    if !tools_present(&["bash", "curl", "jq"]) {
        return;
    }
    common::server::init_tls();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    let steps = walk_through(&readme);

    let db = fresh_sqlite_url();
    let server = SaysoProcess::start(BIN, &db.url).await;
    assert!(
        server.state.file().exists(),
        "the first run wrote no first-run.txt, which the walk-through reads"
    );
    let script = script(&steps, &server.base);
    let expected = expectations(&steps, &server.base);
    let output = run(&script, &server, &steps).await;
    check_output(&output, &expected);
}

/// A piece of the walk-through, in README order.
#[derive(Debug, Clone)]
enum Step {
    /// A shell block marked `walkthrough`, as written.
    Shell(String),
    /// The reader plays the person: opens the link held in `var`, writes `remark`, presses
    /// `button`.
    Person {
        var: String,
        remark: String,
        button: String,
    },
}

/// The walk-through's steps; panics, naming what is wrong, when the README lost its marks.
fn walk_through(readme: &str) -> Vec<Step> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(info) = line.strip_prefix("```")
            && info.split_whitespace().any(|w| w == "walkthrough")
        {
            let mut block = String::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                block.push_str(lines[i]);
                block.push('\n');
                i += 1;
            }
            steps.push(Step::Shell(block));
        } else if let Some(rest) = line.strip_prefix("<!-- readme-person:") {
            let step = parse_person(rest.trim_end_matches("-->").trim());
            let prose: String = lines[i + 1..]
                .iter()
                .take_while(|l| !l.trim().is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            if let Step::Person { remark, button, .. } = &step {
                for (what, word) in [("remark", remark), ("button", button)] {
                    assert!(
                        prose.contains(&format!("**{word}**")),
                        "the person's step tells the test the {what} {word:?}, but the prose the \
                         reader sees under it does not say **{word}**: {prose}"
                    );
                }
            }
            steps.push(step);
        }
        i += 1;
    }
    let shells = steps.iter().filter(|s| matches!(s, Step::Shell(_))).count();
    assert!(
        shells >= 2,
        "README.md has {shells} shell blocks marked `sh walkthrough`; the walk-through lost its marks"
    );
    assert!(
        steps.iter().any(|s| matches!(s, Step::Person { .. })),
        "README.md's walk-through has no `<!-- readme-person: … -->` step: nobody answers"
    );
    steps
}

/// `opens $LINK, writes "after 6pm" as the remark, presses "Yes"`.
fn parse_person(text: &str) -> Step {
    let usage =
        "<!-- readme-person: opens $VAR, writes \"REMARK\" as the remark, presses \"BUTTON\" -->";
    let quoted = |s: &str| -> Option<String> {
        let s = s.trim().strip_prefix('"')?;
        Some(s[..s.find('"')?].to_string())
    };
    let parts: Vec<&str> = text.split(", ").collect();
    let step = match parts.as_slice() {
        [opens, writes, presses] => (|| {
            let var = opens.trim().strip_prefix("opens $")?.to_string();
            let remark = quoted(writes.trim().strip_prefix("writes")?)?;
            writes.trim().ends_with("as the remark").then_some(())?;
            let button = quoted(presses.trim().strip_prefix("presses")?)?;
            Some(Step::Person {
                var,
                remark,
                button,
            })
        })(),
        _ => None,
    };
    step.unwrap_or_else(|| panic!("the person's step {text:?} is not of the form {usage}"))
}

/// One bash script: the blocks as written, with the README's address turned into the test
/// server's in the `export SAYSO_URL=` line alone, and a pause at each person's step.
fn script(steps: &[Step], base: &str) -> String {
    let export = format!("export SAYSO_URL={README_URL}");
    let mut script = String::from("set -eo pipefail\n");
    let mut exported = false;
    for step in steps {
        match step {
            Step::Shell(block) => {
                for line in block.lines() {
                    let code = line.split(" # ").next().unwrap_or(line).trim();
                    if code == export {
                        assert!(!exported, "SAYSO_URL is exported twice in the walk-through");
                        exported = true;
                        script.push_str(&format!("export SAYSO_URL={base}\n"));
                        continue;
                    }
                    if !code.starts_with('#') {
                        assert!(
                            !code.contains("127.0.0.1") && !code.contains("localhost"),
                            "a walk-through command names the server's address instead of \
                             using $SAYSO_URL: {line}"
                        );
                    }
                    script.push_str(&line.replace(README_POLL, TEST_POLL));
                    script.push('\n');
                }
            }
            Step::Person { var, .. } => {
                assert!(
                    exported,
                    "the person's step comes before SAYSO_URL is exported"
                );
                script.push_str(&format!(
                    "printf '\\n{PERSON_CUE}%s\\n' \"${var}\"; read -r _\n"
                ));
            }
        }
    }
    assert!(
        exported,
        "the walk-through never says `{export}`: the reader is told where the server is once, \
         and every example uses $SAYSO_URL"
    );
    assert!(
        script.contains(TEST_POLL),
        "the walk-through no longer long-polls with `{README_POLL}`: the test cannot play a \
         person slower than the long-poll"
    );
    script
}

/// The `# → …` lines, in order, with the README's address as the test server's.
fn expectations(steps: &[Step], base: &str) -> Vec<String> {
    let mut expected = Vec::new();
    for step in steps {
        if let Step::Shell(block) = step {
            for line in block.lines() {
                if let Some(want) = line.trim_start().strip_prefix("# →") {
                    expected.push(want.trim().replace(README_URL, base));
                }
            }
        }
    }
    assert!(
        !expected.is_empty(),
        "the walk-through shows no output (`# → …`) to hold the program to"
    );
    expected
}

/// Runs the script with bash where the first run wrote its file, playing the person when the
/// script pauses; returns everything it printed. Panics when bash fails.
async fn run(script: &str, server: &SaysoProcess, steps: &[Step]) -> String {
    let mut child = spawn_talking(
        Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(server.state.path())
            .env("PATH", path_with_sayso())
            .env_remove("SAYSO_URL")
            .env_remove("SAYSO_KEY")
            .stderr(Stdio::piped()),
        "bash",
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let errors = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
        text
    });
    let mut people = steps.iter().filter_map(|s| match s {
        Step::Person { remark, button, .. } => Some((remark.clone(), button.clone())),
        Step::Shell(_) => None,
    });
    let mut printed = String::new();
    let finished = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = stdout.next_line().await.expect("bash's output") {
            if let Some(link) = line.strip_prefix(PERSON_CUE) {
                let (remark, button) = people.next().expect("a person's step for each pause");
                let link = url::Url::parse(link.trim()).unwrap_or_else(|e| {
                    panic!(
                        "the person was given {link:?}, not a link ({e}); the walk-through \
                            printed so far:\n{printed}"
                    )
                });
                // Slower than the long-poll: the wait must call again until answered.
                tokio::time::sleep(PERSON_TAKES).await;
                answer_as_the_person(link, &remark, &button).await;
                stdin.write_all(b"\n").await.expect("bash reads on");
                continue;
            }
            printed.push_str(&line);
            printed.push('\n');
        }
        child.wait().await.expect("bash ends")
    })
    .await;
    let errors = errors.await.unwrap_or_default();
    let status = finished.unwrap_or_else(|_| {
        panic!(
            "the walk-through did not finish within 120 s\nstdout:\n{printed}\nstderr:\n{errors}"
        )
    });
    assert!(
        status.success(),
        "the walk-through failed ({status})\nscript:\n{script}\nstdout:\n{printed}\nstderr:\n{errors}"
    );
    printed
}

/// Opens `link` as a browser does, writes `remark` in the remark box and presses the button
/// labelled `button`: a form post of that button's name and value, with no API key.
async fn answer_as_the_person(link: url::Url, remark: &str, button: &str) {
    let client = reqwest::Client::new();
    let page = client
        .get(link.clone())
        .send()
        .await
        .expect("the page opens");
    assert!(
        page.status().is_success(),
        "{link} answered {}",
        page.status()
    );
    let html = page.text().await.unwrap();
    let form_start = html
        .find("<form id=\"answer\"")
        .unwrap_or_else(|| panic!("the page at {link} has no answer form:\n{html}"));
    let form = &html[form_start..];
    let form = &form[..form.find("</form>").expect("the form ends")];
    let action = attribute(form, "action").expect("the form has an action");
    let (name, value) = button_named(form, button).unwrap_or_else(|| {
        panic!("the README says to press {button:?}, but the page has no such button:\n{form}")
    });
    assert!(
        form.contains("name=\"remark\""),
        "the README says to write a remark, but the page has no remark box:\n{form}"
    );
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair(&name, &value)
        .append_pair("remark", remark)
        .finish();
    let resp = client
        .post(link.join(&action).expect("the action is a URL"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("the answer is sent");
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    assert!(
        status.is_success(),
        "pressing {button:?} answered {status}:\n{text}"
    );
}

/// The `name` and `value` of the submit button whose text is `label`.
fn button_named(form: &str, label: &str) -> Option<(String, String)> {
    form.split("<button").skip(1).find_map(|b| {
        let (tag, rest) = b.split_once('>')?;
        let text = rest.split("</button>").next()?.trim();
        (text == label).then(|| Some((attribute(tag, "name")?, attribute(tag, "value")?)))?
    })
}

/// The value of the first `name="…"` attribute in `html`.
fn attribute(html: &str, name: &str) -> Option<String> {
    let start = html.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = html[start..].find('"')?;
    Some(html[start..start + end].replace("&amp;", "&"))
}

/// Every expectation printed, in order; `…` matches anything within a line.
fn check_output(output: &str, expected: &[String]) {
    let lines: Vec<&str> = output.lines().collect();
    let mut from = 0;
    for want in expected {
        let found = lines[from..].iter().position(|l| matches(l, want));
        match found {
            Some(at) => from += at + 1,
            None => panic!(
                "the README promises the output\n  {want}\nbut the walk-through printed (from \
                 the previous promise on):\n{}",
                lines[from..].join("\n")
            ),
        }
    }
}

/// Whether `line` holds the pieces of `pattern` between its `…`s, in order, the first at the
/// line's start and the last at its end.
fn matches(line: &str, pattern: &str) -> bool {
    let line = line.trim();
    let pieces: Vec<&str> = pattern.split('…').collect();
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return line == first;
    }
    if line.len() < first.len() + last.len() || !line.starts_with(first) || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Whether each tool is on the PATH; a loud SKIPPED (a failure under CI) when one is not.
fn tools_present(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|tool| {
            !std::process::Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "the README's walk-through needs {}; not found: {}",
        tools.join(", "),
        missing.join(", ")
    );
    let ci = std::env::var("CI").unwrap_or_default().to_ascii_lowercase();
    if matches!(ci.as_str(), "1" | "true" | "yes" | "on") {
        panic!("{why} (required in CI)");
    }
    eprintln!("SKIPPED: {why}");
    false
}

#[test]
fn the_output_patterns_match_as_the_readme_means_them() {
    assert!(matches(r#"{"a":"x","b":[1]}"#, r#"{"a":"…","b":[…]}"#));
    assert!(matches("already_resolved", "already_resolved"));
    assert!(!matches("already_resolved!", "already_resolved"));
    assert!(!matches(r#"{"a":"x"}"#, r#"{"b":"…"}"#));
    assert!(!matches("ab", "ab…b"));
}
