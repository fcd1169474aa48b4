//! The TypeScript client's suites, run with Node's test runner against this build's `sayso`:
//! the client's own and its framework adapters' (from `clients/typescript`, installed there),
//! and the durable engines' (`clients/typescript/tests_durable/<engine>/`), each pinning its
//! packages in its own package.json and lockfile, installed once into a folder under the
//! target directory and reused while the lockfile is the same; such a suite's `node_modules`
//! is a link to it, with `sayso` resolving to this checkout's TypeScript client. Every
//! install is redone only when its lockfile changes. The browser tests read axe-core from
//! such an install too (`tests/browser/axe/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// Whether a missing tool fails the test rather than skipping it: `CI` set to a true value.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "yes" | "true" | "on"
        )
    })
}

/// Skips loudly (outside CI) or fails (in CI) for `why`.
pub fn skip(why: &str) {
    if in_ci() {
        panic!("{why} (required in CI)");
    }
    eprintln!("SKIPPED: {why}");
}

/// Whether `name --version` runs.
pub fn runs(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A finished command's status and output, for a failure message.
pub fn shown(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The TypeScript client's folder.
pub fn typescript_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/typescript")
}

/// Whether node and npm run; else a loud skip (a failure in CI) naming `what` needs them.
pub fn node_and_npm(what: &str) -> bool {
    let there = runs("node") && runs("npm");
    if !there {
        skip(&format!(
            "node or npm not found; install Node.js 20.19 or later with npm (Debian: apt-get \
             install nodejs npm) to run {what}"
        ));
    }
    there
}

/// `npm ci` in `dir` (which holds the package.json and lockfile) unless its `node_modules`
/// was installed from this very lockfile, printing how long it took. `Err` when npm fails
/// (the registry cannot be reached, say).
pub fn install(dir: &Path, label: &str) -> Result<(), String> {
    let lock = std::fs::read(dir.join("package-lock.json"))
        .map_err(|e| format!("{}: {e}", dir.join("package-lock.json").display()))?;
    let stamp = dir.join("node_modules/.sayso-lockfile");
    let started = Instant::now();
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        eprintln!("{label}: install reused");
        return Ok(());
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("npm: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "npm ci failed (is the npm registry reachable?): {}",
            shown(&out)
        ));
    }
    std::fs::write(&stamp, &lock).map_err(|e| format!("the install stamp: {e}"))?;
    eprintln!(
        "{label}: npm ci took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Installs the package.json and package-lock.json of `folder` into
/// `CARGO_TARGET_TMPDIR/<cache>` (see `install`): the `node_modules` folder made.
pub fn install_lockfile(folder: &Path, cache: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(cache);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(folder.join(file), dir.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    install(&dir, cache)?;
    Ok(dir.join("node_modules"))
}

/// Installs `suite`'s lockfile (see `install_lockfile`) and links the suite to it, with
/// `sayso` resolving to this checkout's TypeScript client.
pub fn install_suite(suite: &Path, cache: &str) -> Result<(), String> {
    let modules = install_lockfile(suite, cache)?;
    relink(&modules.join("sayso"), &typescript_client())?;
    relink(&suite.join("node_modules"), &modules)
}

/// Runs `npm <args>` in `dir` against this build's `sayso` and fails with its output unless
/// Node's test runner says every test ran and passed: none failed, cancelled or skipped,
/// and some passed. `env` is set for it.
pub fn node_suite(dir: &Path, args: &[&str], label: &str, env: &[(&str, &str)]) {
    let started = Instant::now();
    let out = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .envs(env.iter().copied())
        .env_remove("SAYSO_URL")
        .env_remove("SAYSO_KEY")
        .output()
        .expect("npm runs");
    // The runner's summary, for the log of a passing run too.
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().filter(|l| l.starts_with("# ")) {
        eprintln!("{line}");
    }
    eprintln!(
        "{label}: the suite took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "the {label} suite failed: {}",
        shown(&out)
    );
    let all_ran = ["# fail 0", "# cancelled 0", "# skipped 0"]
        .iter()
        .all(|line| stdout.contains(line));
    assert!(
        all_ran && !stdout.contains("# pass 0"),
        "the {label} suite ran no test, or not all of them: {}",
        shown(&out)
    );
}

/// Makes `link` a symbolic link to `target`, replacing an older link (never a folder).
fn relink(link: &Path, target: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(link) {
        Ok(m) if m.file_type().is_symlink() => {
            if std::fs::read_link(link).is_ok_and(|t| t == target) {
                return Ok(());
            }
            std::fs::remove_file(link).map_err(|e| format!("{}: {e}", link.display()))?;
        }
        Ok(_) => {
            return Err(format!(
                "{} is a folder of its own; remove it so the suite uses the pinned install",
                link.display()
            ));
        }
        Err(_) => {}
    }
    std::os::unix::fs::symlink(target, link).map_err(|e| format!("{}: {e}", link.display()))
}
