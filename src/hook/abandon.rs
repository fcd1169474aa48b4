//! Noticing that nothing waits for the hook's answer any more, and making sure its question
//! is withdrawn then, however the hook ends.
//!
//! While it waits, the hook watches for the signals a harness or terminal sends (SIGTERM,
//! SIGINT, SIGHUP), for its parent going away (the harness exited; the hook is adopted by
//! another process), and for its stdout's reader going away (the harness stopped reading
//! the answer). It does not watch stdin: Claude Code, Codex and the others close it once
//! they have written the call, and that is normal.
//!
//! A hook killed outright (SIGKILL: Codex kills a hook that runs past its timeout that way)
//! runs no code at all, so a small guard process is started before the question is sent:
//! it holds the read end of a pipe whose write end only the hook has, and when that pipe
//! closes without the hook having said "settled", the guard withdraws the question, finding
//! it again by its `Idempotency-Key` when the hook stopped before the create came back.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use clap::Args;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use crate::client::abandon::{StopSignals, WITHDRAW_WITHIN, withdraw};
use crate::client::args::ServerArgs;
use crate::client::http::{Api, Failure};

/// How often the parent and stdout are looked at: a harness that gave up is noticed within
/// a fraction of a second, at the cost of a few system calls.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// How long the guard keeps trying to withdraw (a server restarting): it has no harness
/// waiting on it, so it may take longer than the hook itself.
const GUARD_WITHIN: Duration = Duration::from_secs(10);
/// The most the guard reads from the hook: the create body (a tool input of up to 4 MiB,
/// escaped) and two short lines.
const MAX_HEARD_BYTES: u64 = 16 * 1024 * 1024;

/// What the hook watches while its question is open.
pub struct Watch {
    signals: Option<StopSignals>,
    parent: u32,
}

impl Watch {
    /// Starts watching; from now on SIGTERM, SIGINT and SIGHUP no longer end the process at
    /// once, but make `stopped` return.
    pub fn start() -> Watch {
        Watch {
            signals: StopSignals::listen(),
            parent: std::os::unix::process::parent_id(),
        }
    }

    /// Returns, with why, once nothing waits for the answer any more; never otherwise.
    pub async fn stopped(&mut self) -> String {
        let parent = self.parent;
        let watched = async {
            let mut tick = tokio::time::interval(WATCH_EVERY);
            loop {
                tick.tick().await;
                // Adopted by another process (init, or a subreaper): the harness is gone.
                // A hook started by init itself has no harness to lose.
                if parent != 1 && std::os::unix::process::parent_id() != parent {
                    return "the harness exited".to_string();
                }
                if stdout_reader_gone() {
                    return "the harness stopped reading the hook's answer".to_string();
                }
            }
        };
        match &mut self.signals {
            Some(signals) => tokio::select! {
                name = signals.next() => format!("the harness stopped the hook ({name})"),
                why = watched => why,
            },
            None => watched.await,
        }
    }
}

/// Whether stdout is a pipe nobody reads any more: poll reports an error on the write end
/// of a pipe without readers (a file, a terminal or /dev/null never does).
fn stdout_reader_gone() -> bool {
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(n) if n > 0 => fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)),
        _ => false,
    }
}

/// The guard of one question; dropping it without `settled` lets the guard withdraw it.
///
/// It is started before the create is sent, and told what is sent: a hook stopped while the
/// create is still on its way (a signal, its deadline, a kill) cannot know whether the
/// server will make the question, so the guard sends the same create again under the same
/// `Idempotency-Key`, which gives the question the first one made (or makes it, if that one
/// never arrives), and withdraws it. Each thing the hook tells the guard is one line of
/// JSON on the pipe; the last one it heard decides.
pub struct Guard {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guard {
    /// Starts a guard: this program again, as `sayso hook guard`, in a process group of its
    /// own (a kill of the hook's group leaves it), its stdout and stderr closed (the harness
    /// waits for the hook's to close). `None` when it cannot be started: the hook then still
    /// withdraws whenever it gets to run.
    pub fn start(api: &Api) -> Option<Guard> {
        let exe = std::env::current_exe().ok()?;
        let (server, key) = api.credentials();
        let mut child = Command::new(exe)
            .args(["hook", "guard"])
            .env("SAYSO_URL", server)
            .env("SAYSO_KEY", key)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let pipe = child.stdin.take();
        Some(Guard { child, pipe })
    }

    /// The create about to be sent: its `Idempotency-Key` and body. Said before it is sent,
    /// so a hook stopped at any point after has a guard that can find the question again.
    pub fn creating(&mut self, key: &str, body: &Value) {
        self.say(&json!({"create": {"key": key, "body": body}}));
    }

    /// The server made (or gave back) decision `id`.
    pub fn created(&mut self, id: &str) {
        self.say(&json!({ "decision_id": id }));
    }

    /// The question needs no withdrawing (answered, withdrawn already, or never made): the
    /// guard exits.
    pub fn settled(mut self) {
        self.say(&json!({"settled": true}));
        drop(self);
    }

    fn say(&mut self, line: &Value) {
        if let Some(pipe) = &mut self.pipe {
            // A guard that is gone takes nothing; the hook goes on without it.
            let _ = writeln!(pipe, "{line}");
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Closing the pipe is the guard's cue; it is not waited for (the hook has a harness
        // waiting), and it reaps itself as init's child once the hook is gone.
        drop(self.pipe.take());
        let _ = self.child.try_wait();
    }
}

/// `sayso hook guard`: started by the hook, never by hand; told the rest on its stdin.
#[derive(Debug, Clone, Args)]
pub struct GuardArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}

/// What the guard heard from the hook by the time the pipe closed.
#[derive(Debug, Default, PartialEq)]
struct Heard {
    create: Option<(String, Value)>,
    id: Option<String>,
    settled: bool,
}

impl Heard {
    /// Reads the hook's lines; a line cut short (the hook killed while writing it) is
    /// skipped: what it would have said had not happened yet.
    fn read(said: &[u8]) -> Heard {
        let mut heard = Heard::default();
        for line in said.split(|b| *b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let (Some(key), Some(body)) = (v["create"]["key"].as_str(), v["create"].get("body"))
            {
                heard.create = Some((key.to_string(), body.clone()));
            }
            if let Some(id) = v["decision_id"].as_str() {
                heard.id = Some(id.to_string());
            }
            if v["settled"] == true {
                heard.settled = true;
            }
        }
        heard
    }
}

/// Waits for the hook to end; withdraws its question unless the hook said it was settled.
pub async fn guard(args: GuardArgs) -> anyhow::Result<u8> {
    let mut said = Vec::new();
    // Ends when the hook closes its end: on purpose, or by dying in any way.
    let _ = tokio::io::stdin()
        .take(MAX_HEARD_BYTES)
        .read_to_end(&mut said)
        .await;
    let heard = Heard::read(&said);
    if heard.settled {
        return Ok(0);
    }
    let api = Api::new(&args.server.server, args.server.key.as_deref())?.quiet();
    let give_up = Instant::now() + GUARD_WITHIN;
    let id = match (heard.id, heard.create) {
        (Some(id), _) => id,
        (None, Some((key, body))) => match create_again(&api, &key, &body, give_up).await? {
            Some(id) => id,
            None => return Ok(0),
        },
        // Stopped before it sent anything: there is no question.
        (None, None) => return Ok(0),
    };
    withdraw(&api, &id, give_up.saturating_duration_since(Instant::now())).await?;
    Ok(0)
}

/// Sends the hook's create again under its `Idempotency-Key`: the server gives back the
/// question the hook's own create made, or makes it now (the hook's, arriving later, then
/// gets this one back and notifies nobody again). `None` when the server refuses it: then
/// it refused the hook's too, and there is no question.
async fn create_again(
    api: &Api,
    key: &str,
    body: &Value,
    give_up: Instant,
) -> Result<Option<String>, Failure> {
    let url = api.url(&["v1", "decisions"]);
    let sent = api
        .send(
            || {
                api.request_until(Method::POST, url.clone(), give_up)
                    .header("Idempotency-Key", key)
                    .json(body)
            },
            give_up,
        )
        .await;
    match sent {
        Ok(d) => Ok(d["decision_id"].as_str().map(str::to_string)),
        Err(Failure::Refused { status, .. }) if status.is_client_error() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Withdraws `id` within the short time a stopping hook has; whether it is settled now.
pub async fn withdraw_now(api: &Api, id: &str) -> bool {
    withdraw(api, id, WITHDRAW_WITHIN).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_goes_by_the_last_whole_line_it_heard() {
        let create = r#"{"create":{"key":"hook-claude-PreToolUse-t1","body":{"question":"q"}}}"#;
        let heard = Heard::read(format!("{create}\n").as_bytes());
        assert_eq!(
            heard.create,
            Some(("hook-claude-PreToolUse-t1".into(), json!({"question": "q"})))
        );
        assert_eq!((heard.id, heard.settled), (None, false));
        // Killed while saying the id: the create is still known, and sent again.
        let heard = Heard::read(format!("{create}\n{{\"decision_id\":\"d").as_bytes());
        assert!(heard.create.is_some() && heard.id.is_none());
        let heard = Heard::read(format!("{create}\n{{\"decision_id\":\"d1\"}}\n").as_bytes());
        assert_eq!(heard.id.as_deref(), Some("d1"));
        let heard = Heard::read(
            format!("{create}\n{{\"decision_id\":\"d1\"}}\n{{\"settled\":true}}\n").as_bytes(),
        );
        assert!(heard.settled);
        // Killed while saying what it creates: nothing was sent yet.
        assert_eq!(Heard::read(&create.as_bytes()[..20]), Heard::default());
    }
}
