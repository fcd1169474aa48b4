//! The first run's secrets: the `default` inbox's API key, feed link and webhook signing
//! secret; and the name of its own person, the user's. They are written once to `first-run.txt` (mode 0600) in the state directory, and
//! printed only when stdout is a terminal: under a service manager stdout is the system log,
//! which others read (the `adm` and `systemd-journal` groups, `docker logs`) and which keeps
//! them for months. The log says where the file is, never what it holds.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use nix::unistd::{AccessFlags, access};

use crate::service::FirstRun;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "first-run.txt";

/// The state directory: `SAYSO_STATE_DIR` when set, else the SQLite database's folder, else
/// (PostgreSQL, an in-memory SQLite) the working directory.
pub fn state_dir(explicit: Option<&Path>, database_url: &str) -> PathBuf {
    if let Some(dir) = explicit {
        return dir.to_path_buf();
    }
    match sqlite_file(database_url).and_then(|f| f.parent().map(Path::to_path_buf)) {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => PathBuf::from("."),
    }
}

/// The file of a `sqlite:` URL; `None` for another scheme or an in-memory database.
fn sqlite_file(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// Why the first run cannot write its file, said before it makes anything.
#[derive(Debug)]
pub enum Unusable {
    /// The file is there already: an earlier first run's, of another or an emptied database.
    Exists(PathBuf),
    /// The directory is missing, not a directory, or not writable.
    Directory(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Exists(file) => write!(
                f,
                "{} exists, but the database has no inbox yet: it holds the secrets of an earlier first run (on another database, or one since emptied). Read what you need from it, delete it, and start again; or set SAYSO_STATE_DIR to another directory",
                file.display()
            ),
            Unusable::Directory(why) => write!(
                f,
                "{why}; the first run writes its API key and feed link there. Make it, or set SAYSO_STATE_DIR to a directory this user can write"
            ),
        }
    }
}

/// Where the first run's file goes in `dir`, once `dir` is a directory this user can write
/// and the file is not there (a symbolic link counts as there: it is never followed).
pub fn prepare(dir: &Path) -> Result<PathBuf, Unusable> {
    let named =
        |what: &str| Unusable::Directory(format!("the state directory {} {what}", dir.display()));
    let dir = match std::fs::canonicalize(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(named("does not exist")),
        Err(e) => return Err(named(&format!("cannot be read ({e})"))),
    };
    if !dir.is_dir() {
        return Err(named("is not a directory"));
    }
    if access(&dir, AccessFlags::W_OK | AccessFlags::X_OK).is_err() {
        return Err(named("is not writable by this user"));
    }
    let file = dir.join(FILE_NAME);
    if std::fs::symlink_metadata(&file).is_ok() {
        return Err(Unusable::Exists(file));
    }
    Ok(file)
}

/// Writes the secrets to `file`, made new with mode 0600. `create_new` is `O_CREAT|O_EXCL`:
/// it fails on anything already there, a symbolic link included (POSIX: never followed), so
/// nothing planted in the directory can redirect the secrets or be overwritten with them.
pub fn write(file: &Path, first: &FirstRun) -> anyhow::Result<()> {
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("cannot create {}", file.display()))?;
    // The mode at creation is masked by the umask; set it exactly, so the owner can read it.
    out.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    out.write_all(banner(first).as_bytes())?;
    out.write_all(b"\nKeep them where the agents cannot read them, then delete this file.\n")?;
    // The inbox is in the database already: the secrets must survive a crash too.
    out.sync_all()
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(())
}

/// What the first run made, as the file holds it and a terminal shows it.
pub fn banner(first: &FirstRun) -> String {
    format!(
        "sayso: first run, created the inbox \"{}\" with you in it as \"{}\".\n\
         \n  API key (shown once; keep it):  {}\n  Feed link (all that waits):     {}\n  Webhook signing secret:         {}\n",
        first.inbox.name, first.person, first.api_key, first.feed_url, first.webhook_secret
    )
}

/// The name of the inbox's own person: the user's account name made a person name, asked
/// for with that as the default when `ask` (a person at a terminal), else taken as it is;
/// `me` when the account has no usable name. Messages then read "allowed by ana".
pub fn own_person_name(ask: bool) -> String {
    let default = account_name()
        .as_deref()
        .and_then(person_name)
        .unwrap_or_else(|| FALLBACK_NAME.to_string());
    if !ask {
        return default;
    }
    print!("Your name, as answers and messages will show it [{default}]: ");
    let _ = io::stdout().flush();
    let mut line = String::new();
    match io::stdin().read_line(&mut line) {
        Ok(n) if n > 0 => person_name(&line).unwrap_or(default),
        _ => default,
    }
}

/// Whether the first run may ask for a name: a person is at a terminal, and it is not CI.
pub fn may_ask() -> bool {
    use std::io::IsTerminal;
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    !ci && io::stdin().is_terminal() && io::stdout().is_terminal()
}

/// The own person's name when nothing better is known.
const FALLBACK_NAME: &str = "me";

/// The user's account name: `$USER`, `$LOGNAME`, else the password database's entry.
fn account_name() -> Option<String> {
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
        })
}

/// `raw` as a person name (a–z, 0–9, `-`, `_`, at most 64): lower case, spaces and dots as
/// `-`, anything else dropped. `None` when nothing is left, or for an account that is not a
/// person's (`root`, `nobody`, the service's own `sayso`): "allowed by root" names nobody.
fn person_name(raw: &str) -> Option<String> {
    let mut name = String::new();
    for c in raw.trim().chars() {
        let c = c.to_ascii_lowercase();
        let c = match c {
            'a'..='z' | '0'..='9' | '_' => c,
            '-' | ' ' | '.' => '-',
            _ => continue,
        };
        if !(c == '-' && name.ends_with('-')) {
            name.push(c);
        }
    }
    let name: String = name
        .trim_matches(['-', '_'])
        .chars()
        .take(crate::domain::people::MAX_NAME)
        .collect();
    let name = name.trim_end_matches(['-', '_']);
    let not_a_person = ["", "root", "nobody", "sayso", "default"];
    (!not_a_person.contains(&name)).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_directory_is_the_setting_else_the_sqlite_folder_else_the_working_one() {
        let here = PathBuf::from(".");
        assert_eq!(
            state_dir(
                Some(Path::new("/srv/s")),
                "sqlite:///var/lib/sayso/sayso.db"
            ),
            PathBuf::from("/srv/s")
        );
        assert_eq!(
            state_dir(None, "sqlite:///var/lib/sayso/sayso.db?mode=rwc"),
            PathBuf::from("/var/lib/sayso")
        );
        assert_eq!(
            state_dir(None, "sqlite://data/sayso.db"),
            PathBuf::from("data")
        );
        assert_eq!(state_dir(None, "sqlite://sayso.db"), here);
        assert_eq!(state_dir(None, "sqlite:sayso.db"), here);
        assert_eq!(state_dir(None, "sqlite::memory:"), here);
        assert_eq!(state_dir(None, "postgres://sayso@db/sayso"), here);
    }

    #[test]
    fn account_names_become_person_names_or_none() {
        assert_eq!(person_name("ana").as_deref(), Some("ana"));
        assert_eq!(person_name("Ana.Lopez").as_deref(), Some("ana-lopez"));
        assert_eq!(person_name("  Jo  Doe\n").as_deref(), Some("jo-doe"));
        assert_eq!(person_name("José").as_deref(), Some("jos"));
        assert_eq!(person_name("dev_ops-2").as_deref(), Some("dev_ops-2"));
        assert_eq!(person_name(&"x".repeat(100)).map(|n| n.len()), Some(64));
        for nobody in [
            "",
            "   ",
            "ユーザー",
            "root",
            "ROOT",
            "nobody",
            "sayso",
            "default",
            "--",
        ] {
            assert_eq!(person_name(nobody), None, "{nobody:?}");
        }
        // Whatever it gives is a valid name.
        for raw in ["A b.c", "x-", "_y_", "Ünïcødé name"] {
            let name = person_name(raw).unwrap();
            assert!(
                crate::domain::people::check_name(&name).is_ok(),
                "{raw:?} → {name:?}"
            );
        }
    }

    #[test]
    fn a_missing_directory_or_a_file_already_there_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("sayso-first-run-{}", uuid::Uuid::new_v4()));
        let err = prepare(&dir).unwrap_err().to_string();
        assert!(
            err.contains("does not exist") && err.contains("SAYSO_STATE_DIR"),
            "{err}"
        );
        std::fs::create_dir(&dir).unwrap();
        let file = prepare(&dir).unwrap();
        assert_eq!(file.file_name().unwrap(), FILE_NAME);
        // A dangling symbolic link is "there": it is never followed.
        std::os::unix::fs::symlink(dir.join("elsewhere"), &file).unwrap();
        let err = prepare(&dir).unwrap_err().to_string();
        assert!(err.contains("exists") && err.contains("delete it"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
