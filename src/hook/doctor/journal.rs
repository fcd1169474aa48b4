//! Whether this user can read the system journal that the server `SAYSO_URL` names logs to,
//! when that server is on this machine.
//! sayso no longer logs secrets (the first run writes them to a file of mode 0600), but
//! versions before that printed the first run's API key and feed link on stdout, which a
//! service manager keeps in the journal; a feed link answers approvals. Root, the `adm` and
//! `systemd-journal` groups (and whoever the journal files' ACLs name) read it.

use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, Group, access, geteuid};

use super::Finding;
use super::database::is_sayso_server;
use super::listener::Served;

/// Where journald keeps its files: persistent, then volatile.
const JOURNALS: [&str; 2] = ["/var/log/journal", "/run/log/journal"];

/// Where systemd reads unit files.
const UNIT_DIRS: [&str; 5] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];

/// What the finding is made of, gathered from this machine or given by a test.
#[derive(Debug, Default)]
pub struct Facts {
    /// A journal exists here.
    pub journal: bool,
    /// Why this user can read it, if it can.
    pub reader: Option<String>,
    /// Which sayso server logs there, if one may.
    pub server: Option<String>,
}

/// The finding for the server at `url`, as `served` found it. Only this user's own processes
/// are looked into; a server of another user is known by its unit file alone (system
/// configuration, not a process).
pub fn check(served: &Served) -> Vec<Finding> {
    let server = match served {
        Served::Elsewhere | Served::NotListening => return vec![],
        Served::ThisUser(pids) => pids.iter().find_map(|pid| server(Path::new("/proc"), *pid)),
        Served::OtherUser => None,
    };
    let journals: Vec<PathBuf> = JOURNALS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .collect();
    let facts = Facts {
        journal: !journals.is_empty(),
        reader: reader(&journals),
        server: server.or_else(unit),
    };
    finding(&facts).into_iter().collect()
}

/// The risk, when a journal exists, this user reads it and a sayso server logs there.
pub fn finding(facts: &Facts) -> Option<Finding> {
    if !facts.journal {
        return None;
    }
    let (reader, server) = (facts.reader.as_ref()?, facts.server.as_ref()?);
    Some(Finding::risk(
        format!(
            "this user can read the system journal ({reader}), where {server} logs: sayso no longer logs secrets, but journals written by earlier versions may still hold the first run's API key and feed link"
        ),
        "as root, `journalctl --rotate && journalctl --vacuum-time=1s` drops the old journals (every unit's), and a key that was in them is revoked with `sayso key revoke` (docs/DEPLOY.md); better, run the agent as a user outside adm and systemd-journal",
    ))
}

/// Why this user can read the journal: root, one of its groups, or the files' own modes.
fn reader(journals: &[PathBuf]) -> Option<String> {
    if geteuid().is_root() {
        return Some("this user is root".into());
    }
    for name in ["adm", "systemd-journal"] {
        if let Ok(Some(group)) = Group::from_name(name)
            && in_group(group.gid)
        {
            return Some(format!("this user is in the group {name}"));
        }
    }
    // A journal file's ACL may name others; access(2) reads ACLs.
    journals
        .iter()
        .flat_map(|d| journal_files(d))
        .find(|f| access(f.as_path(), AccessFlags::R_OK).is_ok())
        .map(|f| format!("it can read {}", f.display()))
}

#[cfg(target_os = "linux")]
fn in_group(gid: nix::unistd::Gid) -> bool {
    nix::unistd::getegid() == gid || nix::unistd::getgroups().is_ok_and(|g| g.contains(&gid))
}

#[cfg(not(target_os = "linux"))]
fn in_group(_: nix::unistd::Gid) -> bool {
    false
}

/// The `.journal` files in a journal folder and its machine folders.
fn journal_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            if let Ok(inner) = std::fs::read_dir(&p) {
                found.extend(inner.flatten().map(|e| e.path()).filter(|f| is_journal(f)));
            }
        } else if is_journal(&p) {
            found.push(p);
        }
    }
    found
}

fn is_journal(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e == "journal" || e == "journal~")
}

/// The process `pid` (this user's, serving the URL) as a `sayso serve` run by a systemd unit:
/// its stdout is the journal.
fn server(proc: &Path, pid: u32) -> Option<String> {
    let dir = proc.join(pid.to_string());
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    if !is_sayso_server(&cmdline) {
        return None;
    }
    let cgroup = std::fs::read_to_string(dir.join("cgroup")).unwrap_or_default();
    service_of(&cgroup).map(|unit| format!("sayso serve (pid {pid}, {unit})"))
}

/// The systemd service of a `/proc/<pid>/cgroup`.
fn service_of(cgroup: &str) -> Option<&str> {
    cgroup
        .lines()
        .flat_map(|l| l.rsplit('/'))
        .find(|part| part.ends_with(".service") && !part.starts_with("user@"))
}

/// An installed unit that runs sayso (by its name, or its `ExecStart=`).
fn unit() -> Option<String> {
    for dir in UNIT_DIRS {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.ends_with(".service") {
                continue;
            }
            if name.contains("sayso")
                || std::fs::read_to_string(&p).is_ok_and(|text| runs_sayso(&text))
            {
                return Some(format!("the unit {} runs sayso", p.display()));
            }
        }
    }
    None
}

/// Whether a unit file's `ExecStart=` starts a program named `sayso`.
fn runs_sayso(unit: &str) -> bool {
    unit.lines().any(|l| {
        l.trim()
            .strip_prefix("ExecStart=")
            .and_then(|cmd| {
                cmd.trim_start_matches(['-', '@', ':', '+', '!'])
                    .split_whitespace()
                    .next()
            })
            .is_some_and(|program| program.rsplit('/').next() == Some("sayso"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(journal: bool, reader: Option<&str>, server: Option<&str>) -> Facts {
        Facts {
            journal,
            reader: reader.map(String::from),
            server: server.map(String::from),
        }
    }

    #[test]
    fn a_reader_of_a_journal_a_server_logs_to_is_told_what_old_journals_may_hold() {
        let f = finding(&facts(
            true,
            Some("this user is in the group adm"),
            Some("sayso serve (pid 7, sayso.service)"),
        ))
        .unwrap();
        assert_eq!(f.level, super::super::Level::Risk);
        assert!(
            f.text.contains("group adm") && f.text.contains("pid 7"),
            "{}",
            f.text
        );
        assert!(f.text.contains("earlier versions"), "{}", f.text);
        assert!(
            f.fix
                .unwrap()
                .contains("journalctl --rotate && journalctl --vacuum-time=1s")
        );
    }

    #[test]
    fn without_a_journal_a_reader_or_a_server_there_is_nothing_to_say() {
        assert!(finding(&facts(false, Some("root"), Some("s"))).is_none());
        assert!(finding(&facts(true, None, Some("s"))).is_none());
        assert!(finding(&facts(true, Some("root"), None)).is_none());
    }

    #[test]
    fn a_unit_runs_sayso_by_its_exec_start() {
        assert!(runs_sayso(
            "[Service]\nExecStart=/usr/local/bin/sayso serve\n"
        ));
        assert!(runs_sayso("ExecStart=-sayso\n"));
        assert!(!runs_sayso("ExecStart=/usr/bin/not-sayso serve\n# sayso\n"));
        assert!(!runs_sayso("Description=sayso\n"));
    }

    #[test]
    fn a_process_service_is_read_from_its_cgroup() {
        assert_eq!(
            service_of("0::/system.slice/sayso.service\n"),
            Some("sayso.service")
        );
        assert_eq!(
            service_of("0::/user.slice/user-1000.slice/session-3.scope\n"),
            None
        );
        assert_eq!(
            service_of("0::/user.slice/user-1000.slice/user@1000.service/app.slice/sayso.service"),
            Some("sayso.service")
        );
    }
}
