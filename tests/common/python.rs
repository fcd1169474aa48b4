//! Python tools the tests run — reference implementations, a fuzzer, an SDK — each in its
//! own virtual environment under the target directory, made once per test binary.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// A virtual environment and what must import in it.
pub struct Venv {
    /// Its directory's name under `CARGO_TARGET_TMPDIR`.
    pub dir: &'static str,
    /// The modules to import, e.g. `"schemathesis, openapi_spec_validator"`.
    pub modules: &'static str,
    /// The PyPI packages that provide them.
    pub packages: &'static [&'static str],
    /// What they are, for the messages.
    pub purpose: &'static str,
}

/// The environment's Python, made on first use and kept in `cell`. `None` after a loud
/// SKIPPED when it cannot be made, except in CI (`CI` set), where that fails the test.
pub fn venv_python(
    cell: &'static OnceLock<Option<PathBuf>>,
    venv: Venv,
) -> Option<&'static PathBuf> {
    cell.get_or_init(|| match install(&venv) {
        Ok(python) => Some(python),
        Err(why) => {
            if std::env::var_os("CI").is_some() {
                panic!("{} is required in CI: {why}", venv.purpose);
            }
            eprintln!("SKIPPED: {} unavailable ({why})", venv.purpose);
            None
        }
    })
    .as_ref()
}

fn install(venv: &Venv) -> Result<PathBuf, String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(venv.dir);
    let python = dir.join("bin").join("python");
    let imports = |python: &PathBuf| {
        Command::new(python)
            .args(["-c", &format!("import {}", venv.modules)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if imports(&python) {
        return Ok(python);
    }
    let started = std::time::Instant::now();
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&dir),
        "python3 -m venv",
    )?;
    run(
        Command::new(dir.join("bin").join("pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--timeout",
                "60",
            ])
            .args(venv.packages),
        &format!("pip install {}", venv.packages.join(" ")),
    )?;
    // CI's stage for the clients shows how long the packages took to install.
    println!(
        "{}: installed in {:.1} s",
        venv.purpose,
        started.elapsed().as_secs_f64()
    );
    if imports(&python) {
        Ok(python)
    } else {
        Err(format!("{} does not import after installing", venv.modules))
    }
}
