//! Whether the hook's user (the agent's, since the harness runs the hook as itself) can read
//! sayso's own state. The agent holds an API key, which can ask but never answer an approval;
//! a process that reads the database or the server's environment holds everything, answer
//! capabilities included (docs/SECURITY.md). So the doctor looks at the two ways that happens,
//! for the server `SAYSO_URL` names and nothing else:
//!
//! - a database URL in the hook's own environment;
//! - that server running as this very user: its environment and working directory are open to
//!   the agent, and so is its database. (As root, every process is open: that is said without
//!   looking into any.)
//!
//! Another user's server is never looked into, and nothing of it is printed.

use std::path::{Path, PathBuf};

use super::Finding;
use super::listener::Served;

/// What a safe set-up is, for a server this user can read: one to start now, and the lasting
/// ones. The agent then holds `SAYSO_URL` and `SAYSO_KEY` and nothing else of sayso's.
pub const SAFE_SET_UP: &str = "run sayso as another user, so the agent's user cannot read \
    its database or environment. Now, on this machine: stop this server, then \
    `sudo useradd --system --create-home --home-dir /var/lib/sayso sayso` and \
    `sudo -u sayso -H sh -c 'cd /var/lib/sayso && sayso'` (a new database; the first run's key \
    is in /var/lib/sayso/first-run.txt, which only `sudo` reads); give the agent only SAYSO_URL \
    and that key. To keep: deploy/sayso.service, a container or another host (docs/DEPLOY.md, \
    docs/SECURITY.md)";

/// The findings about sayso's state, as the user `uid` sees it, for the server at `url`.
pub fn check(url: &str, served: &Served, uid: u32) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Ok(db) = std::env::var("SAYSO_DATABASE_URL") {
        findings.push(Finding::risk(
            "SAYSO_DATABASE_URL is set where the hook runs: the agent reads its own environment, and with the database it can answer its own approvals",
            format!("remove SAYSO_DATABASE_URL from the agent's environment{}", sqlite_hint(&db)),
        ));
    }
    // The README's quick start runs `sayso` in the user's own shell; say what replaces it.
    let fix = SAFE_SET_UP;
    match served {
        Served::Elsewhere => findings.push(Finding::ok(format!(
            "{url} is not on this machine: this user cannot read the server's environment or files"
        ))),
        // The server check says that nothing answers.
        Served::NotListening => {}
        Served::OtherUser if uid == 0 => findings.push(Finding::risk(
            format!(
                "this user is root, and {url} runs on this machine: root reads every process's environment and every file, the server's keys and database included"
            ),
            "run the agent as an unprivileged user",
        )),
        Served::OtherUser => findings.push(Finding::ok(format!(
            "{url} runs as another user: this user cannot read its environment or files"
        ))),
        Served::ThisUser(pids) => {
            let servers: Vec<Server> = pids
                .iter()
                .filter_map(|pid| own_server(Path::new("/proc"), *pid))
                .collect();
            if servers.is_empty() {
                findings.push(Finding::risk(
                    format!(
                        "{url} listens on a socket of this user: the server runs as the agent's user, which can read its keys and answer its own approvals"
                    ),
                    fix,
                ));
            }
            for server in servers {
                let db = server
                    .database
                    .as_deref()
                    .map(|p| format!(", its database {}", p.display()))
                    .unwrap_or_default();
                findings.push(Finding::risk(
                    format!(
                        "sayso serve (pid {}) at {url} runs as this user, which reads its environment{db}: the agent could read its keys and answer its own approvals",
                        server.pid
                    ),
                    fix,
                ));
            }
        }
    }
    findings
}

fn sqlite_hint(url: &str) -> String {
    match sqlite_path(url, None) {
        Some(p) if std::fs::File::open(&p).is_ok() => {
            format!(", and make {} unreadable to this user", p.display())
        }
        _ => String::new(),
    }
}

/// A server of this user's, holding the URL's socket.
#[derive(Debug)]
struct Server {
    pid: u32,
    /// Its SQLite file, when it uses one and this user can open it.
    database: Option<PathBuf>,
}

/// The process `pid` (one of this user's) as a `sayso serve`; `None` when it is another
/// program, a proxy say.
fn own_server(proc: &Path, pid: u32) -> Option<Server> {
    let dir = proc.join(pid.to_string());
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    if !is_sayso_server(&cmdline) {
        return None;
    }
    let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
    let cwd = std::fs::read_link(dir.join("cwd")).ok();
    let url = env_value(&environ, "SAYSO_DATABASE_URL")
        .unwrap_or_else(|| "sqlite://sayso.db".to_string());
    let database = sqlite_path(&url, cwd.as_deref()).filter(|p| std::fs::File::open(p).is_ok());
    Some(Server { pid, database })
}

/// Whether a command line (NUL-separated) runs `sayso serve`, or `sayso` with no command
/// (which serves).
pub(super) fn is_sayso_server(cmdline: &[u8]) -> bool {
    let args: Vec<&[u8]> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    let Some(program) = args.first() else {
        return false;
    };
    let name = program.rsplit(|b| *b == b'/').next().unwrap_or(program);
    if name != b"sayso" {
        return false;
    }
    match args.get(1) {
        None => true,
        Some(first) => *first == b"serve" || first.starts_with(b"-"),
    }
}

fn env_value(environ: &[u8], key: &str) -> Option<String> {
    environ.split(|b| *b == 0).find_map(|kv| {
        let kv = std::str::from_utf8(kv).ok()?;
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.to_string())
    })
}

/// The file of a `sqlite:` URL, relative paths taken from `cwd`.
fn sqlite_path(url: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next()?;
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let p = PathBuf::from(path);
    Some(match cwd {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_told_by_its_command_line() {
        assert!(is_sayso_server(b"/usr/local/bin/sayso\0serve\0"));
        assert!(is_sayso_server(b"sayso\0"));
        assert!(is_sayso_server(
            b"./target/release/sayso\0--listen\0:8080\0"
        ));
        assert!(!is_sayso_server(b"sayso\0hook\0claude\0"));
        assert!(!is_sayso_server(b"/bin/not-sayso\0serve\0"));
        assert!(!is_sayso_server(b""));
    }

    #[test]
    fn sqlite_urls_name_their_file() {
        let cwd = Path::new("/srv");
        assert_eq!(
            sqlite_path("sqlite://sayso.db", Some(cwd)),
            Some(PathBuf::from("/srv/sayso.db"))
        );
        assert_eq!(
            sqlite_path("sqlite:///data/sayso.db?mode=rwc", Some(cwd)),
            Some(PathBuf::from("/data/sayso.db"))
        );
        assert_eq!(sqlite_path("sqlite::memory:", None), None);
        assert_eq!(sqlite_path("postgres://x@db/sayso", None), None);
        let env = b"A=1\0SAYSO_DATABASE_URL=sqlite://x.db\0";
        assert_eq!(
            env_value(env, "SAYSO_DATABASE_URL").as_deref(),
            Some("sqlite://x.db")
        );
    }
}
