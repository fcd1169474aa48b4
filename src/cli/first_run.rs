//! The first run's secrets: the `default` inbox's API key, feed link and webhook signing
//! secret. They are written once to `first-run.txt` (mode 0600) in the state directory, and
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
        "sayso: first run, created the inbox \"{}\".\n\
         \n  API key (shown once; keep it):  {}\n  Feed link (open on your phone): {}\n  Webhook signing secret:         {}\n",
        first.inbox.name, first.api_key, first.feed_url, first.webhook_secret
    )
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
