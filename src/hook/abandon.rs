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
//! runs no code at all, so a small guard process is started with the question: it holds
//! the read end of a pipe whose write end only the hook has, and when that pipe closes
//! without the hook having said "settled", the guard withdraws the question.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use clap::Args;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio::io::AsyncReadExt;

use crate::client::abandon::{StopSignals, WITHDRAW_WITHIN, withdraw};
use crate::client::args::ServerArgs;
use crate::client::http::Api;

/// How often the parent and stdout are looked at: a harness that gave up is noticed within
/// a fraction of a second, at the cost of a few system calls.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// How long the guard keeps trying to withdraw (a server restarting): it has no harness
/// waiting on it, so it may take longer than the hook itself.
const GUARD_WITHIN: Duration = Duration::from_secs(10);
/// What the hook writes to the guard when the question needs no withdrawing.
const SETTLED: &[u8] = b"settled";

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

/// The guard of one open question; dropping it without `settled` lets the guard withdraw it.
pub struct Guard {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guard {
    /// Starts the guard of decision `id`: this program again, as `sayso hook guard`, in a
    /// process group of its own (a kill of the hook's group leaves it), its stdout and
    /// stderr closed (the harness waits for the hook's to close). `None` when it cannot be
    /// started: the hook then still withdraws whenever it gets to run.
    pub fn start(api: &Api, id: &str) -> Option<Guard> {
        let exe = std::env::current_exe().ok()?;
        let (server, key) = api.credentials();
        let mut child = Command::new(exe)
            .args(["hook", "guard", id])
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

    /// The question needs no withdrawing (answered, or withdrawn already): the guard exits.
    pub fn settled(mut self) {
        if let Some(mut pipe) = self.pipe.take() {
            let _ = pipe.write_all(SETTLED);
        }
        drop(self);
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

/// `sayso hook guard ID`: started by the hook, never by hand.
#[derive(Debug, Clone, Args)]
pub struct GuardArgs {
    /// The decision to withdraw if the hook ends without settling it.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Waits for the hook to end; withdraws the question unless the hook said it was settled.
pub async fn guard(args: GuardArgs) -> anyhow::Result<u8> {
    let mut said = Vec::new();
    // Ends when the hook closes its end: on purpose, or by dying in any way.
    let _ = tokio::io::stdin()
        .take(SETTLED.len() as u64)
        .read_to_end(&mut said)
        .await;
    if said == SETTLED {
        return Ok(0);
    }
    let api = Api::new(&args.server.server, args.server.key.as_deref())?.quiet();
    withdraw(&api, &args.id, GUARD_WITHIN).await?;
    Ok(0)
}

/// Withdraws `id` within the short time a stopping hook has; whether it is settled now.
pub async fn withdraw_now(api: &Api, id: &str) -> bool {
    withdraw(api, id, WITHDRAW_WITHIN).await.is_ok()
}
