//! Pinned npm packages for the tests: a folder's package.json and lockfile, installed once
//! into a folder under the target directory and reused while the lockfile is the same. The
//! Node suites (`clients/typescript/tests_durable/<engine>/`) link their `node_modules` to
//! it, with `sayso` resolving to this checkout's TypeScript client; the browser tests read
//! axe-core from it (`tests/browser/axe/`).

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

/// Installs `suite`'s lockfile (see [`install_lockfile`]) and links the suite to it, with
/// `sayso` resolving to this checkout's TypeScript client.
pub fn install_suite(suite: &Path, cache: &str) -> Result<(), String> {
    let modules = install_lockfile(suite, cache)?;
    relink(&modules.join("sayso"), &typescript_client())?;
    relink(&suite.join("node_modules"), &modules)
}

/// Installs the package.json and package-lock.json of `folder` into
/// `CARGO_TARGET_TMPDIR/<cache>` unless the install there was made from this very lockfile
/// (the stamp `node_modules/.sayso-lockfile` holds a copy of it), printing how long it took.
/// The `node_modules` folder made, or `Err` when npm fails (the registry cannot be reached,
/// say).
pub fn install_lockfile(folder: &Path, cache: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(cache);
    let modules = dir.join("node_modules");
    let lock = std::fs::read(folder.join("package-lock.json"))
        .map_err(|e| format!("{}: {e}", folder.join("package-lock.json").display()))?;
    let stamp = modules.join(".sayso-lockfile");
    let started = Instant::now();
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        eprintln!(
            "{cache}: install reused ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        return Ok(modules);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(folder.join(file), dir.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(&dir)
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
        "{cache}: npm ci took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(modules)
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
