//! A PostgreSQL cluster of the test's own, in a temporary directory on a free port, that the
//! test may stop and start again (the shared server of `common::db` must never be stopped).
//! Removed, stopped or not, when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use uuid::Uuid;

use super::port::free_port;

/// A private cluster: trust authentication for `postgres` on 127.0.0.1 only.
pub struct PgCluster {
    ctl: Ctl,
}

/// Where a cluster lives and how to run its programs.
#[derive(Clone)]
struct Ctl {
    dir: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    port: u16,
    /// Commands run as the `postgres` user (the server refuses to run as root).
    as_postgres: bool,
}

/// What is wrong with the environment, as a loud skip outside CI and a failure in CI.
fn unavailable(why: String) -> Option<PgCluster> {
    if std::env::var_os("CI").is_some() {
        panic!("cannot run a private PostgreSQL cluster (required in CI): {why}");
    }
    eprintln!("SKIPPED: cannot run a private PostgreSQL cluster: {why}");
    None
}

/// The directory holding `initdb`, `pg_ctl` and `postgres`: `SAYSO_TEST_PG_BIN`, the newest
/// `/usr/lib/postgresql/*/bin`, or the first directory of `PATH` that has them all.
fn find_bin() -> Option<PathBuf> {
    let complete = |d: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| d.join(b).exists())
    };
    if let Some(dir) = std::env::var_os("SAYSO_TEST_PG_BIN") {
        return Some(PathBuf::from(dir)).filter(|d| complete(d));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.into_iter().rev().find(|(_, d)| complete(d)) {
        return Some(dir);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| complete(d))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn describe(out: &Output) -> String {
    format!(
        "{}; {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout).trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    )
}

impl PgCluster {
    /// Makes and starts a new cluster; `None` (after a loud `SKIPPED`) when this machine
    /// cannot run one, except in CI (`CI` set), where that fails the test.
    pub fn start() -> Option<PgCluster> {
        let Some(bin) = find_bin() else {
            return unavailable(
                "no directory with initdb, pg_ctl and postgres (set SAYSO_TEST_PG_BIN)".into(),
            );
        };
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!("sayso-pg-{}", Uuid::new_v4().simple()));
        std::fs::create_dir(&dir).expect("a temporary directory");
        let cluster = Ctl {
            data: dir.join("data"),
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        if as_postgres {
            let chown = Command::new("chown")
                .arg("postgres:")
                .arg(&cluster.dir)
                .output();
            match chown {
                Ok(out) if out.status.success() => {}
                Ok(out) => {
                    return unavailable(format!(
                        "running as root, and cannot hand the directory to the postgres \
                         user: {}",
                        describe(&out)
                    ));
                }
                Err(e) => return unavailable(format!("chown: {e}")),
            }
        }
        let init = cluster.run(
            "initdb",
            &[
                "-D".as_ref(),
                cluster.data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        match init {
            Ok(out) if out.status.success() => {}
            Ok(out) => return unavailable(format!("initdb failed: {}", describe(&out))),
            Err(e) => return unavailable(format!("initdb: {e}")),
        }
        let cluster = PgCluster { ctl: cluster };
        match cluster.ctl.pg_ctl_start() {
            Ok(()) => Some(cluster),
            Err(e) => unavailable(format!("the new cluster does not start: {e}")),
        }
    }

    /// The port the server listens on, the same after each restart.
    pub fn port(&self) -> u16 {
        self.ctl.port
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.ctl.port)
    }

    /// Stops the server the way an operator's fast shutdown does: open connections are
    /// terminated, new ones refused. Returns once the server is gone.
    pub async fn stop(&self) {
        let ctl = self.ctl.clone();
        tokio::task::spawn_blocking(move || ctl.pg_ctl_stop("fast"))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("pg_ctl stop: {e}"));
    }

    /// Starts the server again on the same port and data; returns once it accepts connections.
    pub async fn start_again(&self) {
        let ctl = self.ctl.clone();
        tokio::task::spawn_blocking(move || ctl.pg_ctl_start())
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("pg_ctl start: {e}"));
    }
}

impl Ctl {
    /// Runs one of the cluster's programs, as the postgres user when we are root.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> std::io::Result<Output> {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let out = self
            .run(
                "pg_ctl",
                &[
                    "start".as_ref(),
                    "-w".as_ref(),
                    "-t".as_ref(),
                    "60".as_ref(),
                    "-D".as_ref(),
                    self.data.as_os_str(),
                    "-l".as_ref(),
                    log.as_os_str(),
                    "-o".as_ref(),
                    options.as_ref(),
                ],
            )
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            Err(format!("{}\n{log}", describe(&out)))
        }
    }

    fn pg_ctl_stop(&self, mode: &str) -> Result<(), String> {
        let out = self
            .run(
                "pg_ctl",
                &[
                    "stop".as_ref(),
                    "-w".as_ref(),
                    "-m".as_ref(),
                    mode.as_ref(),
                    "-D".as_ref(),
                    self.data.as_os_str(),
                ],
            )
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(describe(&out))
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        // Already stopped is fine: the directory goes either way.
        let _ = self.ctl.pg_ctl_stop("immediate");
        if let Err(e) = std::fs::remove_dir_all(&self.ctl.dir) {
            eprintln!("could not remove {}: {e}", self.ctl.dir.display());
        }
    }
}
