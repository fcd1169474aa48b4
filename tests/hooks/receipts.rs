//! The hook and receipts: `sayso hook install` pins the server's receipt key, and then
//! something posing as sayso between the hook and the server (here a proxy that rewrites
//! the server's answers) cannot get a call allowed, while the person's real Allow still
//! goes through.

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use crate::common::server::{TestServer, s};
use crate::relay::{Asked, Relay, Rewrite};
use crate::run::claude_input;
use crate::run::{Dir, finish, hook_command, pending_decision, run, server, start};

/// What the proxy does to the server's answers.
#[derive(Debug, Clone, PartialEq, Default)]
enum Mode {
    /// Passes everything as it is.
    #[default]
    Genuine,
    /// Says every decision the hook reads is answered Allow, from the person's feed.
    ForgeAllow,
    /// Hands the hook, for its new question, the id of another decision (one the person
    /// allowed for another command).
    SwapDecision(String),
    /// Lists every decision as one of this session (so another session's "Allow for this
    /// session" looks like this one's).
    ForgeSession(String),
}

/// The proxy in front of the real sayso.
type Impostor = Relay<Mode>;

impl Rewrite for Mode {
    fn rewrite(self, asked: &Asked, status: &mut u16, json: &mut Value) {
        let (method, path) = (&asked.method, asked.path.as_str());
        match self {
            Mode::ForgeAllow if asked.reads_a_decision() && (200..300).contains(status) => {
                json["status"] = json!("answered");
                json["outcome"] = json!("Allow");
                json["answered_by"] = json!({"channel": "feed", "device_id": null});
            }
            Mode::SwapDecision(other) if method == "POST" && path == "/v1/decisions" => {
                json["decision_id"] = json!(other);
            }
            Mode::ForgeSession(session) if method == "GET" && path == "/v1/decisions" => {
                for d in json["items"].as_array_mut().into_iter().flatten() {
                    d["approval"]["session_id"] = json!(session);
                }
            }
            _ => {}
        }
    }
}

fn input(dir: &Dir, command: &str) -> String {
    input_in(dir, "s-receipts", command)
}

fn input_in(dir: &Dir, session: &str, command: &str) -> String {
    claude_input(
        "PreToolUse",
        &dir.path().display().to_string(),
        session,
        command,
    )
}

fn decision_of(out: &crate::run::Ended) -> (&str, &str) {
    let o = &out.stdout["hookSpecificOutput"];
    (
        o["permissionDecision"].as_str().unwrap_or_default(),
        o["permissionDecisionReason"].as_str().unwrap_or_default(),
    )
}

/// `sayso hook claude` in `dir` with `srv`'s key, its server at `via`, waiting 30 s, with
/// `extra` arguments.
fn claude_hook(dir: &Dir, via: &str, srv: &TestServer, extra: &[&str]) -> Command {
    let args = [&["hook", "claude", "--timeout-s", "30"], extra].concat();
    hook_command(dir.path(), via, Some(&srv.key), &args)
}

/// Runs the hook through the impostor and answers its question on the real server.
async fn answered(srv: &TestServer, dir: &Dir, via: &str, command: &str, answer: &str) -> Value {
    let cmd = claude_hook(dir, via, srv, &[]);
    let (child, started) = start(cmd, &input(dir, command)).await;
    let d = pending_decision(srv).await;
    srv.answer_ok(s(&d, "web_url"), json!({ "value": answer }))
        .await;
    let out = finish(child, started).await;
    json!({"out": out.stdout, "code": out.code, "stderr": out.stderr, "id": d["decision_id"]})
}

/// The pending decision whose question names `command` (earlier ones may still be open),
/// asked by the hook `child`: waits up to 60 s (a busy machine can be slow to start it), and
/// fails at once with the hook's output should it end without asking.
async fn pending_about(srv: &TestServer, child: &mut Child, command: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, page) = crate::common::server::send(
            srv.req(reqwest::Method::GET, "/v1/decisions?status=pending"),
        )
        .await;
        if let Some(d) = page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|d| d["question"].as_str().unwrap_or_default().contains(command))
        {
            return d.clone();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut out = String::new();
            if let Some(mut pipe) = child.stdout.take() {
                pipe.read_to_string(&mut out).await.ok();
            }
            if let Some(mut pipe) = child.stderr.take() {
                pipe.read_to_string(&mut out).await.ok();
            }
            panic!("the hook ended ({status}) without asking about {command}: {out}");
        }
        if std::time::Instant::now() >= deadline {
            let (_, all) =
                crate::common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
            panic!("no question about {command} within 60 s; the server holds {all}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_key_lets_no_impostor_forge_an_allow() {
    let (_db, srv) = server().await;
    let impostor = Impostor::start(&srv.base).await;
    let dir = Dir::new();
    let d = dir.path().display().to_string();

    // Installed while the URL still leads to sayso: the server's key is pinned.
    let mut cmd = hook_command(
        dir.path(),
        &impostor.url(),
        Some(&srv.key),
        &["hook", "install", "claude", "--dir", &d],
    );
    cmd.stdin(std::process::Stdio::null());
    let out = cmd.output().await.unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("pinned the receipt key of"), "{said}");
    assert!(
        said.contains("the hook allows only on receipts signed by the pinned key"),
        "{said}"
    );
    let pins: Value = serde_json::from_str(&dir.read(".config/sayso/receipt-keys.json")).unwrap();
    let key = srv.svc.receipt_public_key().await.unwrap().to_text();
    assert_eq!(pins[impostor.url()], key.as_str());

    // The genuine path: the person's Allow, with its receipt, allows.
    let allowed = answered(&srv, &dir, &impostor.url(), "cargo publish", "Allow").await;
    assert_eq!(allowed["code"], 0, "{allowed}");
    assert_eq!(
        allowed["out"]["hookSpecificOutput"]["permissionDecision"], "allow",
        "{allowed}"
    );
    let allowed_id = allowed["id"].as_str().unwrap().to_string();

    // The impostor says Allow to a question nobody answered: no receipt, denied.
    impostor.set(Mode::ForgeAllow);
    let cmd = claude_hook(&dir, &impostor.url(), &srv, &[]);
    let out = run(cmd, &input(&dir, "rm -rf /srv/data")).await;
    assert_eq!(out.code, 0, "{out:?}");
    let (decision, reason) = decision_of(&out);
    assert_eq!(decision, "deny", "{out:?}");
    assert!(
        reason.contains("no receipt") && reason.contains("still pending"),
        "{reason}"
    );

    // The impostor hands over the person's real, signed Allow of another command: the
    // receipt is genuine, but not for this question.
    impostor.set(Mode::SwapDecision(allowed_id));
    let cmd = claude_hook(&dir, &impostor.url(), &srv, &[]);
    let out = run(cmd, &input(&dir, "rm -rf /srv/backups")).await;
    let (decision, reason) = decision_of(&out);
    assert_eq!(decision, "deny", "{out:?}");
    assert!(
        reason.contains("the receipt is for another question than the one this hook asked"),
        "{reason}"
    );

    // A key other than the server's pinned: even the person's real Allow is refused, and
    // the reason names the key.
    impostor.set(Mode::Genuine);
    let other = sayso::domain::receipt::ReceiptKey::from_stored(
        &sayso::domain::receipt::ReceiptKey::generate(),
    )
    .unwrap()
    .public()
    .to_text();
    let cmd = claude_hook(&dir, &impostor.url(), &srv, &["--receipt-key", &other]);
    let (mut child, started) = start(cmd, &input(&dir, "make deploy")).await;
    let pending = pending_about(&srv, &mut child, "make deploy").await;
    srv.answer_ok(s(&pending, "web_url"), json!({"value": "Allow"}))
        .await;
    let out = finish(child, started).await;
    let (decision, reason) = decision_of(&out);
    assert_eq!(decision, "deny", "{out:?}");
    assert!(reason.contains("signed with another key"), "{reason}");
}

/// Without a pinned key the hook takes the answer as the server gives it: the same impostor
/// gets its Allow through. This is what `sayso hook doctor` warns of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_pinned_key_the_hook_takes_the_answer_unsigned() {
    let (_db, srv) = server().await;
    let impostor = Impostor::start(&srv.base).await;
    impostor.set(Mode::ForgeAllow);
    let dir = Dir::new();
    let cmd = claude_hook(&dir, &impostor.url(), &srv, &[]);
    let out = run(cmd, &input(&dir, "rm -rf /srv/data")).await;
    assert_eq!(decision_of(&out).0, "allow", "{out:?}");

    let d = dir.path().display().to_string();
    let mut cmd = hook_command(
        dir.path(),
        &srv.base,
        Some(&srv.key),
        &["hook", "doctor", "claude", "--dir", &d],
    );
    cmd.stdin(std::process::Stdio::null());
    let out = cmd.output().await.unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("no receipt key is pinned for") && said.contains("could forge one"),
        "{said}"
    );
}

/// With a pinned key an "Allow for this session" counts only as its receipt tells it: the
/// person's real one covers the session's next call of the tool, while the same allowance
/// listed by the impostor as another session's covers nothing there, and that call is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_allowance_counts_only_as_its_receipt_tells_it() {
    let (_db, srv) = server().await;
    let impostor = Impostor::start(&srv.base).await;
    let dir = Dir::new();
    let key = srv.svc.receipt_public_key().await.unwrap().to_text();
    let hook = || claude_hook(&dir, &impostor.url(), &srv, &["--receipt-key", &key]);
    let (mut child, started) = start(hook(), &input(&dir, "ls -la")).await;
    let d = pending_about(&srv, &mut child, "ls -la").await;
    srv.answer_ok(s(&d, "web_url"), json!({"value": "Allow for this session"}))
        .await;
    assert_eq!(decision_of(&finish(child, started).await).0, "allow");

    // The same session's next Bash call: allowed on the allowance's receipt, nobody asked.
    let out = run(hook(), &input(&dir, "ls src")).await;
    let o = &out.stdout["hookSpecificOutput"];
    assert_eq!(o["permissionDecision"], "allow", "{out:?}");
    assert!(
        o["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .contains("for this session"),
        "{out:?}"
    );

    // Another session, with the impostor listing the allowance as that session's: the
    // receipt says whose it is, so the call is put to the person, who denies it.
    impostor.set(Mode::ForgeSession("s-other".into()));
    let (mut child, started) =
        start(hook(), &input_in(&dir, "s-other", "cat ~/.ssh/id_ed25519")).await;
    let asked = pending_about(&srv, &mut child, "cat ~/.ssh/id_ed25519").await;
    srv.answer_ok(s(&asked, "web_url"), json!({"value": "Deny"}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(decision_of(&out).0, "deny", "{out:?}");
}
